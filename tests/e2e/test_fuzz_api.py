"""Schemathesis against /v1/openapi.json on a local stack: every operation, with a valid key and with
none, positive and negative data. No response may be a 5xx, and every 4xx carries the stable error body.

The stack is the one `make run` starts, except that Bedrock is an instant fake Converse endpoint
(devstack/fake_bedrock.py): the target is the API layer (auth, validation, screening, metering,
errors), and the bundled model would spend minutes generating for fuzzed prompts. Bounded by
FUZZ_MAX_EXAMPLES per operation and key (default 25).
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from chalicelib.operation import HTTP_METHODS
from chalicelib.openapi import openapi_document
from devstack.fake_bedrock import FakeBedrock
from devstack.stack import LocalStack
from tests.e2e.conftest import running_stack

pytestmark = pytest.mark.e2e
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "25"))
STATUSES: list[int] = []


def no_stack_traces(log: str) -> None:
    # Nothing the stack logged may be a crash the API turned into a 4xx or hid.
    assert "Traceback" not in log, "the API logged a stack trace while fuzzed"


@pytest.fixture(scope="module")
def fuzz_stack() -> Iterator[LocalStack]:
    with FakeBedrock() as bedrock, running_stack("fuzz", no_stack_traces, bedrock_endpoint=bedrock.url, with_events=False) as local:
        yield local


@pytest.fixture(scope="module")
def api_url(fuzz_stack: LocalStack) -> str:
    return f"http://127.0.0.1:{fuzz_stack.ports.api}"


# Built from the same function that serves /v1/openapi.json (the first test checks they are equal):
# schemathesis's fixture-based loader does not work under pytest 9.
schema = schemathesis.openapi.from_dict(json.loads(json.dumps(openapi_document())))


def test_the_fuzzed_schema_is_the_served_one(api_url: str) -> None:
    served = requests.get(f"{api_url}/v1/openapi.json", timeout=10)
    assert served.status_code == 200 and served.json() == json.loads(json.dumps(openapi_document()))


def stable_error_body(ctx: Any, response: Any, case: Any) -> None:
    STATUSES.append(response.status_code)
    if response.status_code < 400 or case.method.upper() == "HEAD":  # a HEAD answer has no body, by HTTP
        return
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, f"not the stable error body: {response.text[:300]}"
    error = body["error"]
    # The OpenAI-compatible routes answer in OpenAI's error shape (so its SDKs raise their usual errors).
    # Methods that reach the app (a 405 included) answer in OpenAI's shape there; methods API Gateway refuses
    # itself (TRACE, CONNECT, invented ones) get its account-wide gateway response, our stable shape.
    openai_route = case.operation.path in ("/v1/chat/completions", "/v1/models") and case.method.upper() in HTTP_METHODS
    assert set(error) == ({"code", "message", "type", "param"} if openai_route else {"code", "message", "details"}), error
    assert isinstance(error["code"], str) and error["code"] and isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in response.text


def fuzz(case: Any, api_url: str, api_key: str | None) -> None:
    if case.headers:
        case.headers.pop("x-api-key", None)  # the key under test, not a generated one
    response = case.call(base_url=api_url, headers={"x-api-key": api_key} if api_key else {}, timeout=30)
    case.validate_response(response, checks=[not_a_server_error, stable_error_body])


FUZZ_SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])


@schema.parametrize()
@FUZZ_SETTINGS
def test_fuzzed_requests_with_a_valid_key_get_no_5xx_and_only_stable_errors(case: Any, api_url: str) -> None:
    fuzz(case, api_url, "ops-key")  # the ops tenant may invoke and read cost reports: every operation is reachable


@schema.parametrize()
@FUZZ_SETTINGS
def test_fuzzed_requests_without_a_key_get_no_5xx_and_only_stable_errors(case: Any, api_url: str) -> None:
    fuzz(case, api_url, None)


def test_the_fuzz_run_reached_both_success_and_rejection() -> None:
    """Guard against a run that silently tested nothing (say, every request refused at the door)."""
    assert STATUSES, "no fuzzed request was sent"
    counts = {status: STATUSES.count(status) for status in sorted(set(STATUSES))}
    print(f"fuzz: {len(STATUSES)} requests, statuses {counts}")
    assert any(200 <= status < 300 for status in STATUSES) and any(400 <= status < 500 for status in STATUSES)
