"""End to end: the local stack over HTTP, answered by the bundled model through the Converse bridge."""
from __future__ import annotations

import pytest
import requests

from tests.e2e.conftest import post

pytestmark = pytest.mark.e2e


def test_health_over_http(api_url):
    response = requests.get(f"{api_url}/v1/health", timeout=10)
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_invoke_answers_from_the_bundled_model_and_meters_it(api_url, stack, stack_client):
    trace = "Root=1-00000001-aaaaaaaaaaaaaaaaaaaaaaaa"
    response = post(f"{api_url}/v1/invoke", {"prompt": "Name one planet of the solar system.", "max_tokens": 32}, timeout=120,
                    headers={"x-api-key": "dev-key", "X-Amzn-Trace-Id": trace})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["output"].strip(), body
    assert body["model"] == "local.smollm2-135m-instruct" and body["backend"] == "bedrock"
    assert body["usage"]["input_tokens"] > 0 and 0 < body["usage"]["output_tokens"] <= 32
    assert body["cost_usd"] == 0.0  # the local model is priced at zero in the catalog, explicitly
    assert response.headers["X-Amzn-Trace-Id"] == trace and response.headers["X-Model-Version"] == body["model"]
    ledger = stack_client("dynamodb").get_item(TableName=stack.env()["LEDGER_TABLE"], Key={"request_id": {"S": body["request_id"]}})
    assert ledger["Item"]["output_tokens"]["N"] == str(body["usage"]["output_tokens"])


def test_bad_key_over_http_gets_the_stable_error(api_url):
    response = post(f"{api_url}/v1/invoke", {"prompt": "hi"}, timeout=10, headers={"x-api-key": "nope"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthenticated"
