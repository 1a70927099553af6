"""End to end: a job through the local stack (moto SFN executor, event pump, local Batch runner, worker, bundled model)."""
from __future__ import annotations

import json
import time

import pytest
import requests

pytestmark = pytest.mark.e2e


def test_job_runs_to_succeeded_and_results_match_inputs(api_url):
    prompts = ["Say hello.", "Name a colour.", "Name a fruit."]
    trace = "Root=1-00000002-bbbbbbbbbbbbbbbbbbbbbbbb"
    submitted = requests.post(f"{api_url}/v1/jobs", timeout=30, headers={"x-api-key": "dev-key", "X-Amzn-Trace-Id": trace},
                              json={"input": {"prompts": prompts}, "max_tokens": 16})
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
