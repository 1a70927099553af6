"""The worker's model: synced from S3 (moto) into the instance cache against a checksum manifest,
reused between jobs, refused when missing or corrupt (Worker.ModelUnavailable at once); per-item
retries of 429/5xx and the failed-item count in the report."""
from __future__ import annotations

import hashlib
import json
import os
import time

import boto3
import pytest
from moto import mock_aws

from tests.integration.support import FlakyModel
from worker.weights import MANIFEST, ModelUnavailable, build_manifest, check_baked, sync_from_s3
from worker.worker import Config, Worker, complete, failed_items, retry_delay_s, vllm_command

FILES = {"config.json": b'{"architectures": ["Qwen3ForCausalLM"]}', "model-00001.safetensors": os.urandom(4096),
         "tokenizer/tokenizer.json": b'{"version": "1.0"}'}


def manifest_for(files: dict[str, bytes]) -> bytes:
    return json.dumps({"files": [{"path": p, "bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, b in files.items()]}).encode()


@pytest.fixture
def s3():
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="models")
        for path, body in FILES.items():
            client.put_object(Bucket="models", Key=f"qwen3-32b-fp8/{path}", Body=body)
        client.put_object(Bucket="models", Key=f"qwen3-32b-fp8/{MANIFEST}", Body=manifest_for(FILES))
        downloads = []
        client.meta.events.register("provide-client-params.s3.GetObject", lambda params, **_: downloads.append(params["Key"]))
        client.downloads = downloads
        yield client


def test_first_job_downloads_every_file_and_verifies_it(s3, tmp_path):
    directory, report = sync_from_s3(s3, "s3://models/qwen3-32b-fp8/", str(tmp_path))
    assert report.source == "s3" and report.files == 3 and report.bytes_downloaded == report.bytes_total == sum(map(len, FILES.values()))
    for path, body in FILES.items():
        with open(os.path.join(directory, path), "rb") as handle:
            assert handle.read() == body
    assert not [name for name in os.listdir(directory) if name.endswith(".partial")]


def test_a_second_job_on_the_instance_reuses_the_cache_without_downloading(s3, tmp_path):
    first, _ = sync_from_s3(s3, "s3://models/qwen3-32b-fp8", str(tmp_path))
    s3.downloads.clear()
    second, report = sync_from_s3(s3, "s3://models/qwen3-32b-fp8", str(tmp_path))
    assert second == first and report.source == "cache" and report.bytes_downloaded == 0
    assert s3.downloads == ["qwen3-32b-fp8/manifest.json"]  # only the manifest was read


def test_a_damaged_cached_file_is_downloaded_again(s3, tmp_path):
    directory, _ = sync_from_s3(s3, "s3://models/qwen3-32b-fp8/", str(tmp_path))
    with open(os.path.join(directory, "model-00001.safetensors"), "r+b") as handle:
        handle.write(b"\x00" * 16)  # same size, other bytes (and a new mtime)
    _, report = sync_from_s3(s3, "s3://models/qwen3-32b-fp8/", str(tmp_path))
    assert report.source == "s3" and report.bytes_downloaded == len(FILES["model-00001.safetensors"])
    with open(os.path.join(directory, "model-00001.safetensors"), "rb") as handle:
        assert handle.read() == FILES["model-00001.safetensors"]


def test_a_file_that_does_not_match_its_checksum_is_refused(s3, tmp_path):
    s3.put_object(Bucket="models", Key="qwen3-32b-fp8/model-00001.safetensors", Body=os.urandom(4096))  # corrupt upload
    with pytest.raises(ModelUnavailable, match="model-00001.safetensors does not match its checksum"):
        sync_from_s3(s3, "s3://models/qwen3-32b-fp8/", str(tmp_path))
    cached = [name for _, _, names in os.walk(tmp_path) for name in names if "safetensors" in name]
    assert cached == []  # nothing half-verified is left for the next job


def test_a_missing_prefix_or_manifest_is_model_unavailable(s3, tmp_path):
    with pytest.raises(ModelUnavailable, match=r"no model manifest at s3://models/nothing-here/manifest.json \(NoSuchKey\)"):
        sync_from_s3(s3, "s3://models/nothing-here/", str(tmp_path))
    with pytest.raises(ModelUnavailable, match="no model manifest"):
        sync_from_s3(s3, "s3://no-such-bucket/x/", str(tmp_path))
    s3.put_object(Bucket="models", Key="evil/manifest.json", Body=json.dumps({"files": [{"path": "../../etc/passwd", "bytes": 1, "sha256": "0"}]}))
    with pytest.raises(ModelUnavailable, match="outside the model"):
        sync_from_s3(s3, "s3://models/evil/", str(tmp_path))


def test_a_baked_model_is_checked_against_its_manifest(tmp_path):
    for path, body in FILES.items():
        os.makedirs(os.path.dirname(tmp_path / path), exist_ok=True)
        (tmp_path / path).write_bytes(body)
    (tmp_path / MANIFEST).write_text(json.dumps(build_manifest(str(tmp_path))))
    assert check_baked(str(tmp_path)).files == 3
    (tmp_path / "config.json").write_bytes(b"{}")
    with pytest.raises(ModelUnavailable, match="config.json is missing or has the wrong size"):
        check_baked(str(tmp_path))


class RecordingSfn:
    def __init__(self):
        self.calls = []

    def send_task_heartbeat(self, taskToken):
        self.calls.append(("heartbeat", None))

    def send_task_success(self, taskToken, output):
        self.calls.append(("success", json.loads(output)))

    def send_task_failure(self, taskToken, error, cause):
        self.calls.append(("failure", error, cause))


def worker_env(**overrides):
    return {"JOB_ID": "job-abc", "TENANT": "acme", "TASK_TOKEN": "t", "DATA_BUCKET": "data", "INPUT_KEY": "inputs/acme/job-abc/input.jsonl",
            "RESULT_KEY": "results/acme/job-abc/output.jsonl", "CHECKPOINT_KEY": "results/acme/job-abc/checkpoint.jsonl",
            "INSTANCE_TYPE": "g6e.xlarge", "HEARTBEAT_INTERVAL_S": "30", "ITEM_RETRY_BASE_S": "0.01", **overrides}


def test_worker_without_its_model_fails_at_once_as_model_unavailable(s3, tmp_path):
    s3.create_bucket(Bucket="data")
    sfn = RecordingSfn()
    worker = Worker(Config.from_env(worker_env(SERVE_WITH="vllm", MODEL_S3_URI="s3://models/missing/", MODEL_CACHE_DIR=str(tmp_path),
                                               BAKED_MODEL_DIR=str(tmp_path / "none"))), s3=s3, sfn=sfn)
    started = time.monotonic()
    assert worker.run() == 1
    assert time.monotonic() - started < 10  # not a heartbeat window (300 s in AWS), and no model server was started
    [failure] = [c for c in sfn.calls if c[0] == "failure"]
    assert failure[1] == "Worker.ModelUnavailable" and "no model manifest" in failure[2]
    assert "Contents" not in s3.list_objects_v2(Bucket="data")  # no empty checkpoint written over an earlier one


def test_429_and_5xx_are_retried_per_item_then_the_item_fails_alone():
    model = FlakyModel({"twice": 2, "always": 99}, status=429)
    config = Config.from_env(worker_env(MODEL_ENDPOINT=model.url, ITEM_MAX_ATTEMPTS="4"))
    sleeps = []
    assert complete(config, "twice", sleep=sleeps.append)["output"] == "ok" and len(sleeps) == 2
    failed = complete(config, "always", sleep=sleeps.append)
    assert failed["error"] == {"code": "throttled", "message": "HTTP 429 after 4 attempt(s)"} and model.seen["always"] == 4
    server_error = FlakyModel({"x": 1}, status=503)
    assert complete(Config.from_env(worker_env(MODEL_ENDPOINT=server_error.url)), "x", sleep=lambda s: None)["output"] == "ok"
    model.server.shutdown()
    server_error.server.shutdown()


def test_backoff_grows_is_capped_and_honours_retry_after():
    assert [retry_delay_s(n, 1.0, 30.0, None, 1.0) for n in (1, 2, 3, 6)] == [1.0, 2.0, 4.0, 30.0]
    assert retry_delay_s(2, 1.0, 30.0, None, 0.5) == 1.0  # full jitter
    assert retry_delay_s(1, 1.0, 30.0, "7", 0.1) == 7.0 and retry_delay_s(1, 1.0, 30.0, "600", 0.1) == 30.0


def test_the_report_counts_failed_items_and_vllm_follows_the_plan():
    rows = [{"index": 0, "output": "a"}, {"index": 1, "error": {"code": "throttled"}}, {"index": 2, "error": {"code": "model_error"}}]
    assert failed_items(rows) == {"count": 2, "indexes": [1, 2]}
    command = vllm_command(Config.from_env(worker_env(MODEL_NAME="qwen3-32b", TENSOR_PARALLEL_SIZE="4", QUANTIZATION="fp8",
                                                      MAX_MODEL_LEN="16384", MODEL_ENDPOINT="http://127.0.0.1:8000")), "/models/abc")
    assert command[command.index("--tensor-parallel-size") + 1] == "4" and command[command.index("--quantization") + 1] == "fp8"
    assert command[command.index("--model") + 1] == "/models/abc" and command[command.index("--port") + 1] == "8000"
    assert "--quantization" not in vllm_command(Config.from_env(worker_env()), "/m")
