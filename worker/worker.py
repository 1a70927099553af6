"""Batch worker: read the job's input from S3, run it on an OpenAI-compatible model server with
bounded concurrency, write results to S3 (encrypted), heartbeat the workflow, report usage.

On SIGTERM (spot interruption, or Batch terminating the job) it checkpoints finished items to S3 and
fails the task with `Worker.Interrupted`, which the workflow retries; the next attempt resumes from
the checkpoint instead of starting over.
"""
from __future__ import annotations

import base64
import json
import logging
import os
import random
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

import boto3

# Standard-library-only modules of chalicelib, shipped in the image beside worker/ (worker/Dockerfile).
from chalicelib.defaults import DEFAULT_SELF_HOSTED_MODEL
from chalicelib.jobs import protocol
from chalicelib.jobs.protocol import env_float, env_int, env_str

from .weights import ModelUnavailable, SyncReport, check_baked, sync_from_s3


class Log:
    """JSON lines with the job and trace ids (CloudWatch Logs reads them as structured logs)."""

    def __init__(self, job_id: str, trace_id: str) -> None:
        self.base = {"service": "crossover-worker", "job_id": job_id, "trace_id": trace_id}
        self._logger = logging.getLogger("crossover.worker")
        if not self._logger.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(message)s"))
            self._logger.addHandler(handler)
            self._logger.setLevel(logging.INFO)

    def __call__(self, message: str, **fields: Any) -> None:
        self._logger.info(json.dumps({"message": message, **self.base, **fields}, default=str))


@dataclass(frozen=True)
class Config(protocol.WorkerJob):
    """The job's hand-off from job_steps (protocol.WorkerJob's fields), then the job definition's tuning."""

    model_endpoint: str
    model_name: str
    concurrency: int
    heartbeat_s: float
    request_timeout_s: float
    gpu_count: int
    instance_type: str
    model_server_command: str
    tenant_role_arn: str = ""
    # The model (worker/weights.py) and how vLLM serves it (from the job definition's serving plan).
    serve_with: str = ""  # "vllm": start vLLM on the synced model; "": MODEL_SERVER_COMMAND or an external endpoint
    model_s3_uri: str = ""
    model_cache_dir: str = "/models"
    baked_model_dir: str = "/opt/crossover/baked-model"
    tensor_parallel_size: int = 1
    quantization: str = ""
    dtype: str = "auto"
    max_model_len: int = 0
    gpu_memory_utilization: float = 0.9
    model_load_timeout_s: float = 1800.0
    # Per item: 429 and 5xx are retried with exponential backoff and jitter, then the item fails alone.
    item_max_attempts: int = 4
    item_retry_base_s: float = 1.0
    item_retry_cap_s: float = 30.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Config":
        """The job's hand-off from job_steps (protocol.WorkerJob), then the job definition's tuning variables."""
        env = dict(os.environ if env is None else env)
        return cls(
            **asdict(protocol.from_env(env)),
            model_endpoint=env_str("MODEL_ENDPOINT", "http://127.0.0.1:8000", env).rstrip("/"),
            model_name=env_str("MODEL_NAME", DEFAULT_SELF_HOSTED_MODEL, env), concurrency=max(1, env_int("CONCURRENCY", 8, env)),
            heartbeat_s=env_float("HEARTBEAT_INTERVAL_S", 30.0, env), request_timeout_s=env_float("REQUEST_TIMEOUT_S", 600.0, env),
            gpu_count=env_int("GPU_COUNT", 1, env), instance_type=env.get("INSTANCE_TYPE") or instance_type_from_metadata(),
            model_server_command=env_str("MODEL_SERVER_COMMAND", "", env), tenant_role_arn=env_str("TENANT_ROLE_ARN", "", env),
            serve_with=env_str("SERVE_WITH", "", env), model_s3_uri=env_str("MODEL_S3_URI", "", env),
            model_cache_dir=env_str("MODEL_CACHE_DIR", "/models", env),
            baked_model_dir=env_str("BAKED_MODEL_DIR", "/opt/crossover/baked-model", env),
            tensor_parallel_size=env_int("TENSOR_PARALLEL_SIZE", 1, env), quantization=env_str("QUANTIZATION", "", env),
            dtype=env_str("DTYPE", "auto", env), max_model_len=env_int("MAX_MODEL_LEN", 0, env),
            gpu_memory_utilization=env_float("GPU_MEMORY_UTILIZATION", 0.9, env),
            model_load_timeout_s=env_float("MODEL_LOAD_TIMEOUT_S", 1800.0, env),
            item_max_attempts=max(1, env_int("ITEM_MAX_ATTEMPTS", 4, env)), item_retry_base_s=env_float("ITEM_RETRY_BASE_S", 1.0, env),
            item_retry_cap_s=env_float("ITEM_RETRY_CAP_S", 30.0, env),
        )


def instance_type_from_metadata() -> str:
    """EC2 instance metadata (IMDSv2), which Batch containers on EC2 can reach; 'unknown' elsewhere."""
    try:
        token_request = urllib.request.Request("http://169.254.169.254/latest/api/token", method="PUT",
                                               headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"})
        token = urllib.request.urlopen(token_request, timeout=1).read().decode()
        request = urllib.request.Request("http://169.254.169.254/latest/meta-data/instance-type", headers={"X-aws-ec2-metadata-token": token})
        return urllib.request.urlopen(request, timeout=1).read().decode()
    except (OSError, urllib.error.URLError):
        return "unknown"


@dataclass
class Progress:
    done: dict[int, dict[str, Any]] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, row: dict[str, Any]) -> None:
        with self.lock:
            self.done[row["index"]] = row
            usage = row.get("usage") or {}
            self.input_tokens += usage.get("input_tokens", 0)
            self.output_tokens += usage.get("output_tokens", 0)

    def rows(self) -> list[dict[str, Any]]:
        with self.lock:
            return [self.done[index] for index in sorted(self.done)]


class ModelDown(ModelUnavailable):
    """The model server is unreachable: the whole job should fall back, not each item fail."""


RETRYABLE_HTTP = frozenset({429, 500, 502, 503, 504})


def retry_delay_s(attempt: int, base_s: float, cap_s: float, retry_after: str | None, draw: float) -> float:
    """Full-jitter exponential backoff (attempt 1 is the first retry); a server's Retry-After wins, capped."""
    if retry_after and retry_after.strip().isdigit():
        return min(float(retry_after), cap_s)
    return min(cap_s, base_s * 2 ** (attempt - 1)) * draw


def complete(config: Config, prompt: str, sleep: Any = time.sleep) -> dict[str, Any]:
    messages = ([{"role": "system", "content": config.system_prompt}] if config.system_prompt else []) + [{"role": "user", "content": prompt}]
    body = json.dumps({"model": config.model_name, "messages": messages, "max_tokens": config.max_tokens}).encode()
    for attempt in range(1, config.item_max_attempts + 1):
        request = urllib.request.Request(f"{config.model_endpoint}/v1/chat/completions", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=config.request_timeout_s) as reply:
                completion = json.load(reply)
            break
        except urllib.error.HTTPError as exc:
            if exc.code not in RETRYABLE_HTTP or attempt == config.item_max_attempts:
                code = "throttled" if exc.code == 429 else "model_error"
                return {"error": {"code": code, "message": f"HTTP {exc.code} after {attempt} attempt(s)"}, "attempts": attempt}
            sleep(retry_delay_s(attempt, config.item_retry_base_s, config.item_retry_cap_s, exc.headers.get("Retry-After"), random.random()))
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            raise ModelDown(str(exc)) from exc
    choice = completion["choices"][0]
    usage = completion.get("usage") or {}
    return {"output": (choice.get("message") or {}).get("content") or "", "finish_reason": choice.get("finish_reason"),
            "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)},
            **({"attempts": attempt} if attempt > 1 else {})}


def vllm_command(config: Config, model_dir: str) -> list[str]:
    """vLLM's OpenAI server for the serving plan the job definition carries (chalicelib/jobs/fit.py)."""
    port = config.model_endpoint.rsplit(":", 1)[-1].split("/")[0] if config.model_endpoint.count(":") >= 2 else "8000"
    command = ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", model_dir, "--served-model-name", config.model_name,
               "--port", port, "--tensor-parallel-size", str(config.tensor_parallel_size),
               "--gpu-memory-utilization", str(config.gpu_memory_utilization), "--dtype", config.dtype]
    if config.quantization:
        command += ["--quantization", config.quantization]
    if config.max_model_len:
        command += ["--max-model-len", str(config.max_model_len)]
    return command


def failed_items(rows: list[dict[str, Any]], listed: int = 1000) -> dict[str, Any]:
    """Items that ended in an error row: how many, and which (the first `listed` indexes)."""
    indexes = [row["index"] for row in rows if "error" in row]
    return {"count": len(indexes), "indexes": indexes[:listed]}


def tenant_s3_client(config: Config, base: Any | None = None) -> Any:
    """S3 as this job's tenant only.

    The Batch job role itself can read no data: it may only assume the tenant data role with a session
    tag `tenant=<tenant>`, and that role's policy reaches `inputs/${aws:PrincipalTag/tenant}/*` and
    `results/${aws:PrincipalTag/tenant}/*` and the KMS key only with that tenant's encryption context
    (deploy/package.py). A worker bug that builds another tenant's key is refused by IAM, not by our code.
    Role chaining caps a session at one hour, so the credentials refresh themselves for long jobs.
    Without TENANT_ROLE_ARN (the local stack) the default credentials are used.
    """
    if not config.tenant_role_arn:
        return boto3.client("s3")
    import botocore.session
    from botocore.credentials import AssumeRoleCredentialFetcher, DeferredRefreshableCredentials

    base = base or botocore.session.Session()
    fetcher = AssumeRoleCredentialFetcher(
        base.create_client, base.get_credentials(), config.tenant_role_arn,
        extra_args={"RoleSessionName": f"{config.job_id}"[:64], "DurationSeconds": 3600,
                    "Tags": [{"Key": "tenant", "Value": config.tenant}]})
    tenant_session = botocore.session.Session()
    # botocore has no public setter for refreshable credentials; this is how its own providers attach them.
    tenant_session._credentials = DeferredRefreshableCredentials(method="assume-role", refresh_using=fetcher.fetch_credentials)
    return boto3.session.Session(botocore_session=tenant_session).client("s3")


class Worker:
    def __init__(self, config: Config, s3: Any | None = None, sfn: Any | None = None) -> None:
        self.config = config
        self.s3 = s3 or tenant_s3_client(config)
        self.sfn = sfn or boto3.client("stepfunctions")
        self.log = Log(config.job_id, config.trace_id)
        self.stop = threading.Event()      # SIGTERM: checkpoint and fail as retryable
        self.abandoned = threading.Event()  # the workflow no longer waits for us (cancelled or timed out)
        self.progress = Progress()
        # No heartbeat may follow the final answer: both go through this lock.
        self._token_lock = threading.Lock()
        self._answered = False

    # --- S3 ---
    def _encryption(self) -> dict[str, str]:
        if not self.config.kms_key_id:
            return {"ServerSideEncryption": "AES256"}
        context = base64.b64encode(json.dumps({"tenant": self.config.tenant}).encode()).decode()
        return {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self.config.kms_key_id, "SSEKMSEncryptionContext": context}

    def _put(self, key: str, rows: list[dict[str, Any]]) -> None:
        body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
        # The trace id travels into the result's metadata (API -> workflow -> Batch env -> worker -> S3).
        self.s3.put_object(Bucket=self.config.bucket, Key=key, Body=body, ContentType="application/x-ndjson",
                           Metadata={"trace-id": self.config.trace_id[:1024], "job-id": self.config.job_id}, **self._encryption())

    def _read_lines(self, key: str) -> list[dict[str, Any]]:
        try:
            body = self.s3.get_object(Bucket=self.config.bucket, Key=key)["Body"].read().decode()
        except self.s3.exceptions.NoSuchKey:
            return []
        return [json.loads(line) for line in body.splitlines() if line.strip()]

    # --- workflow ---
    def _answer(self, success: dict[str, Any] | None = None, error: tuple[str, str] | None = None) -> None:
        with self._token_lock:
            self._answered = True
            self._send_answer(success, error)

    def _send_answer(self, success: dict[str, Any] | None, error: tuple[str, str] | None) -> None:
        try:
            if error is None:
                self.sfn.send_task_success(taskToken=self.config.task_token, output=json.dumps(success))
            else:
                self.sfn.send_task_failure(taskToken=self.config.task_token, **protocol.failure(*error))
        except Exception as exc:
            if protocol.stale_token_code(exc) is None:
                raise
            self.log("worker.stale_task_token")

    def _heartbeat(self) -> None:
        while not (self.stop.is_set() or self.abandoned.is_set()):
            try:
                with self._token_lock:
                    if self._answered:
                        return
                    self.sfn.send_task_heartbeat(taskToken=self.config.task_token)
            except Exception as exc:
                code = protocol.stale_token_code(exc)
                if code is not None:
                    self.log("worker.abandoned", code=code)
                    self.abandoned.set()
                    return
                self.log("worker.heartbeat_failed", error=exc.__class__.__name__)
            self.stop.wait(self.config.heartbeat_s)

    def _prepare_model(self) -> tuple[str, SyncReport]:
        """The model directory: synced from S3 into the cache, or baked into the image. Fails fast."""
        config = self.config
        if config.model_s3_uri:
            return sync_from_s3(boto3.client("s3"), config.model_s3_uri, config.model_cache_dir)
        if os.path.isdir(config.baked_model_dir):
            return config.baked_model_dir, check_baked(config.baked_model_dir)
        if config.serve_with == "vllm":
            raise ModelUnavailable("no model: MODEL_S3_URI is empty and no model is baked into the image")
        return "", SyncReport(source="external")

    def _start_model_server(self, model_dir: str) -> subprocess.Popen[bytes] | None:
        config = self.config
        if config.model_server_command:
            process = subprocess.Popen(config.model_server_command, shell=True)  # noqa: S602 (the job definition's own command)
        elif config.serve_with == "vllm":
            process = subprocess.Popen(vllm_command(config, model_dir))
        else:
            return None
        deadline = time.monotonic() + config.model_load_timeout_s
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{config.model_endpoint}/v1/models", timeout=2)
                return process
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if process.poll() is not None:
                    raise ModelDown(f"model server exited with {process.returncode}")
                time.sleep(2)
        process.terminate()
        raise ModelDown(f"model server did not become ready in {config.model_load_timeout_s:.0f} s")

    def run(self) -> int:
        started = time.monotonic()
        config = self.config
        self.log("worker.started", instance_type=config.instance_type, concurrency=config.concurrency)
        heartbeat = threading.Thread(target=self._heartbeat, daemon=True)
        heartbeat.start()
        server = None
        try:
            model_dir, sync = self._prepare_model()
            self.log("worker.model_ready", **sync.as_dict())
            loading = time.monotonic()
            server = self._start_model_server(model_dir)
            model_load = {**sync.as_dict(), "load_seconds": round(time.monotonic() - loading, 3)}
            prompts = [row["prompt"] for row in self._read_lines(config.input_key)]
            for row in self._read_lines(config.checkpoint_key):
                if "output" in row or "error" in row:
                    self.progress.add(row)
            pending = [index for index in range(len(prompts)) if index not in self.progress.done]
            self.log("worker.input", items=len(prompts), resumed=len(prompts) - len(pending))
            self._process(prompts, pending)
            if self.abandoned.is_set():
                return 1
            if self.stop.is_set():
                self._put(config.checkpoint_key, self.progress.rows())
                done = len(self.progress.done)
                self.log("worker.interrupted", checkpointed=done, total=len(prompts))
                self._answer(error=(protocol.WORKER_INTERRUPTED, f"SIGTERM: {done}/{len(prompts)} items checkpointed; the retry resumes"))
                return 143
            rows = self.progress.rows()
            self._put(config.result_key, rows)
            wall = time.monotonic() - started
            report = {"result_uri": f"s3://{config.bucket}/{config.result_key}", "items": len(prompts),
                      "input_tokens": self.progress.input_tokens, "output_tokens": self.progress.output_tokens,
                      "wall_seconds": round(wall, 3), "gpu_seconds": round(wall * config.gpu_count, 3),
                      "instance_type": config.instance_type, "model": config.model_name,
                      "failed_items": failed_items(rows), "model_load": model_load}
            self._answer(success=report)
            self.log("worker.succeeded", **{k: v for k, v in report.items() if k not in ("result_uri", "failed_items")},
                     failed_items=report["failed_items"]["count"])
            return 0
        except ModelUnavailable as exc:
            self._try_checkpoint()
            self.log("worker.model_unavailable", error=str(exc)[:200])
            self._answer(error=(protocol.WORKER_MODEL_UNAVAILABLE, f"model unavailable: {exc}"))
            return 1
        except Exception as exc:  # S3 or another AWS call failing after botocore's retries: say so now
            checkpointed = self._try_checkpoint()
            self.log("worker.failed", error=exc.__class__.__name__, detail=str(exc)[:200], checkpointed=checkpointed)
            # Transient: the workflow runs the job again (resuming from the checkpoint if it was written),
            # then falls back to Bedrock; waiting for Batch's FAILED event would only be slower.
            self._answer(error=(protocol.WORKER_TRANSIENT, f"{exc.__class__.__name__}: {str(exc)[:500]}"))
            return 1
        finally:
            self.stop.set()
            if server is not None:
                server.terminate()

    def _try_checkpoint(self) -> bool:
        if not self.progress.done:
            return False  # nothing new: never overwrite an earlier attempt's checkpoint with nothing
        try:
            self._put(self.config.checkpoint_key, self.progress.rows())
            return True
        except Exception:
            return False

    def _process(self, prompts: list[str], pending: list[int]) -> None:
        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="item") as pool:
            queue = list(pending)
            running: dict[Any, int] = {}
            while queue or running:
                while queue and len(running) < self.config.concurrency and not (self.stop.is_set() or self.abandoned.is_set()):
                    index = queue.pop(0)
                    running[pool.submit(complete, self.config, prompts[index])] = index
                if not running:
                    break
                finished, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = running.pop(future)
                    self.progress.add({"index": index, **future.result()})  # ModelDown propagates


def main() -> int:
    config = Config.from_env()
    worker = Worker(config)
    signal.signal(signal.SIGTERM, lambda *_: worker.stop.set())
    return worker.run()
