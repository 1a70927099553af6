"""End to end: a tenant's routing mode set with the `crossover` CLI against the running stack sends its
calls to the self-hosted endpoint (the bundled model's own OpenAI-compatible server, llama.cpp)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
