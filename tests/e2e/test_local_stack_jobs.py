"""End to end: a job through the local stack (moto SFN executor, event pump, local Batch runner, worker, bundled model)."""
from __future__ import annotations

import json
import time

import pytest
import requests

from tests.e2e.conftest import post

pytestmark = pytest.mark.e2e


def test_job_runs_to_succeeded_and_results_match_inputs(api_url):
    prompts = ["Say hello.", "Name a colour.", "Name a fruit."]
    trace = "Root=1-00000002-bbbbbbbbbbbbbbbbbbbbbbbb"
    submitted = post(f"{api_url}/v1/jobs", {"input": {"prompts": prompts}, "max_tokens": 16}, timeout=30,
                     headers={"x-api-key": "dev-key", "X-Amzn-Trace-Id": trace})
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["job_id"]
    deadline = time.monotonic() + 240
    view = {}
    while time.monotonic() < deadline:
        view = requests.get(f"{api_url}/v1/jobs/{job_id}", timeout=10, headers={"x-api-key": "dev-key"}).json()
        if view["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        time.sleep(1)
    assert view["status"] == "SUCCEEDED", view
    assert view["backend"] == "self_hosted" and view["trace_id"] == trace
    assert view["usage"]["output_tokens"] > 0
    rows = [json.loads(line) for line in requests.get(view["result_url"], timeout=10).text.splitlines()]
    assert [row["index"] for row in rows] == [0, 1, 2]
    assert all(row.get("output", "").strip() for row in rows), rows
    # another tenant cannot see it
    assert requests.get(f"{api_url}/v1/jobs/{job_id}", timeout=10, headers={"x-api-key": "ops-key"}).status_code == 404


def test_s3_upload_runs_a_job_and_the_result_appears(stack, stack_client):
    env = stack.env()
    bucket = env["DATA_BUCKET"]
    s3 = stack_client("s3")
    s3.put_object(Bucket=bucket, Key="incoming/dev/jobs/e2e.jsonl", Body=b'{"prompt": "Say yes."}\n{"prompt": "Say no."}\n')
    deadline = time.monotonic() + 240
    document = None
    while time.monotonic() < deadline and document is None:
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="results/dev/events/").get("Contents", [])
        if listed:
            document = json.loads(s3.get_object(Bucket=bucket, Key=listed[0]["Key"])["Body"].read())
        time.sleep(0.5)
    assert document and document["status"] == "accepted", document
    job_id = document["job_id"]
    result_key = f"results/dev/{job_id}/output.jsonl"
    while time.monotonic() < deadline:
        if s3.list_objects_v2(Bucket=bucket, Prefix=result_key).get("KeyCount"):
            break
        time.sleep(0.5)
    rows = [json.loads(line) for line in s3.get_object(Bucket=bucket, Key=result_key)["Body"].read().decode().splitlines()]
    assert [row["index"] for row in rows] == [0, 1] and all(row.get("output") for row in rows)


def worker_processes(job_id: str) -> list[int]:
    """PIDs of the local Batch runner's worker processes for this job (Linux /proc)."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().split(b"\0")
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environment = handle.read().split(b"\0")
        except OSError:
            continue
        if b"worker" in command and f"JOB_ID={job_id}".encode() in environment:
            found.append(int(entry))
    return found


def wait_for_status(api_url, job_id, deadline):
    view = {}
    while time.monotonic() < deadline:
        view = requests.get(f"{api_url}/v1/jobs/{job_id}", timeout=10, headers={"x-api-key": "dev-key"}).json()
        if view["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return view
        time.sleep(0.5)
    return view


def test_worker_killed_mid_job_falls_back_to_bedrock_with_every_item(api_url):
    """kill -9 on the GPU worker (no checkpoint, no callback): Batch reports the job FAILED, the workflow
    catches it at once (not at the heartbeat timeout) and the Bedrock fallback produces every item."""
    import os
    import signal

    # Enough work that the worker cannot finish before it is killed, on a fast host too (6 short prompts once
    # did: the kill found no process).
    prompts = [f"Name an animal that starts with the letter {letter}." for letter in "ABCDEFGHIJKLMNOPRSTUVWYZ"]
    submitted = post(f"{api_url}/v1/jobs", {"input": {"prompts": prompts}, "max_tokens": 96}, timeout=30, headers={"x-api-key": "dev-key"})
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["job_id"]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not worker_processes(job_id):
        time.sleep(0.2)
    pids = worker_processes(job_id)
    assert pids, "the local Batch runner never started the worker"
    time.sleep(1.0)  # let it load and start generating
    killed_at = time.monotonic()
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass  # a process of the worker that had already exited (the others are still killed)
    assert killed, "the worker ended before it could be killed: the test needs a longer job"
    view = wait_for_status(api_url, job_id, deadline)
    assert view["status"] == "SUCCEEDED", view
    assert view["backend"] == "bedrock" and view["items"] == len(prompts)
    assert time.monotonic() - killed_at < 55  # well before the 60 s heartbeat timeout: the Batch FAILED event did it
    rows = [json.loads(line) for line in requests.get(view["result_url"], timeout=10).text.splitlines()]
    assert [row["index"] for row in rows] == list(range(len(prompts)))
    assert all(row.get("output", "").strip() for row in rows), rows
