"""End to end: a tenant's routing mode set with the `crossover` CLI against the running stack sends its
calls to the self-hosted endpoint (the bundled model's own OpenAI-compatible server, llama.cpp)."""
from __future__ import annotations

import json
import os
import subprocess
import time
import sys

import pytest
import requests

from tests.e2e.conftest import post

pytestmark = pytest.mark.e2e
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def crossover(stack, *args: str) -> dict:
    env = {**os.environ, **stack.env(), "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-m", "chalicelib.cli", *args], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_tenant_set_to_self_hosted_is_served_by_the_self_hosted_endpoint(api_url, stack, stack_client):
    from chalicelib.auth import TenantStore

    # A tenant of its own: the API process caches a tenant's mode for a minute, and dev's may be cached already.
    TenantStore(stack.env()["TENANTS_TABLE"], 0, dynamodb=stack_client("dynamodb")).put("e2e-routing", "e2e-routing-key")
    shown = crossover(stack, "routing", "set", "self_hosted", "--tenant", "e2e-routing")
    assert shown == {"tenant": "e2e-routing", "stored": "self_hosted", "sync": "self_hosted", "job": "self_hosted"}
    response = post(f"{api_url}/v1/invoke", {"prompt": "Name one planet of the solar system.", "max_tokens": 16}, timeout=120,
                    headers={"x-api-key": "e2e-routing-key"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["backend"] == "self_hosted" and body["output"].strip(), body


def test_a_tenant_set_to_bedrock_runs_its_job_on_bedrock_without_the_gpu(api_url, stack, stack_client):
    from chalicelib.auth import TenantStore

    TenantStore(stack.env()["TENANTS_TABLE"], 0, dynamodb=stack_client("dynamodb")).put("e2e-bedrock", "e2e-bedrock-key")
    assert crossover(stack, "routing", "set", "bedrock", "--tenant", "e2e-bedrock")["job"] == "bedrock"
    headers = {"x-api-key": "e2e-bedrock-key"}
    submitted = post(f"{api_url}/v1/jobs", {"input": {"prompts": ["Say hello.", "Name a colour."]}, "max_tokens": 16}, timeout=30,
                     headers=headers)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["job_id"]
    deadline, view = time.monotonic() + 180, {}
    while time.monotonic() < deadline:
        view = requests.get(f"{api_url}/v1/jobs/{job_id}", timeout=10, headers=headers).json()
        if view["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        time.sleep(1)
    assert view["status"] == "SUCCEEDED" and view["backend"] == "bedrock", view
    assert not view.get("gpu_seconds")  # no Batch job ran
    rows = [json.loads(line) for line in requests.get(view["result_url"], timeout=10).text.splitlines()]
    assert [row["index"] for row in rows] == [0, 1] and all(row.get("output", "").strip() for row in rows), rows
