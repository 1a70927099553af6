"""A request that fails with an exception that is not one of ours (a botocore error no adapter translated, a
KeyError, a bug) gives its budget reservation back at every entry point that reserves (POST /v1/invoke, a
named agent's invoke, POST /v1/chat/completions, a queued request), keeps the spend it had already made, and
still answers the stable JSON error (moto + Stubber, through the real handlers)."""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from tests.conftest import DEV_KEY, converse_tool_use, ledger_items, post_json
from tests.integration.support import request, sqs_event

LIMIT = Decimal("10")


@pytest.fixture
def budgets(aws: None) -> Any:
    from chalicelib.services import get_services

    budgets = get_services().budgets
    budgets.set_limit("dev", LIMIT)
    return budgets


def fail_model_call(monkeypatch: pytest.MonkeyPatch, error: Exception, on_call: int = 1) -> None:
    """The Bedrock backend raises `error` on its `on_call`-th call (the calls before it go to the Stubber)."""
    from chalicelib.services import get_services

    backend = get_services().backends["bedrock"]
    real, calls = backend.converse, []

    def converse(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == on_call:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(backend, "converse", converse)


def assert_internal_error(response: Any) -> None:
    assert response.status_code == 500
    assert response.json_body["error"]["code"] == "internal_error" and set(response.json_body["error"]) == {"code", "message", "details"}
    assert "Traceback" not in response.body.decode() and "KeyError" not in response.body.decode()


def test_invoke_failing_outside_our_errors_releases_the_reservation(client, budgets, monkeypatch):
    fail_model_call(monkeypatch, KeyError("stopReason"))
    response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert_internal_error(response)
    assert budgets.committed("dev") == Decimal(0) and ledger_items() == []


def test_invoke_failing_after_a_billed_step_keeps_exactly_that_spend(client, bedrock, budgets, monkeypatch):
    bedrock.add_response("converse", converse_tool_use([("t1", "calculator", {"expression": "1+1"})], 300, 30))
    fail_model_call(monkeypatch, NoCredentialsError(), on_call=2)
    response = post_json(client, "/v1/invoke", {"prompt": "add", "tools": ["calculator"]})
    assert_internal_error(response)
    [row] = ledger_items()
    assert "#failed-" in row["request_id"]["S"] and (row["input_tokens"]["N"], row["output_tokens"]["N"]) == ("300", "30")
    spent = Decimal(row["cost_usd"]["N"])
    assert spent > 0 and budgets.committed("dev") == spent  # the billed step, once; the rest of the reservation released


def test_a_named_agents_invoke_failing_outside_our_errors_releases_the_reservation(client, budgets, monkeypatch):
    headers = {"x-api-key": DEV_KEY, "Content-Type": "application/json"}
    assert client.http.put("/v1/agents/helper", headers=headers, body=json.dumps({"system": "Be brief."})).status_code == 200
    fail_model_call(monkeypatch, KeyError("output"))
    assert_internal_error(post_json(client, "/v1/agents/helper/invoke", {"prompt": "Hello there"}))
    assert budgets.committed("dev") == Decimal(0)


def test_chat_completion_failing_with_an_untranslated_aws_error_releases_the_reservation(client, budgets, monkeypatch):
    outage = ClientError({"Error": {"Code": "InternalFailure", "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": 500}}, "Converse")
    fail_model_call(monkeypatch, outage)
    response = post_json(client, "/v1/chat/completions", {"model": "claude-sonnet", "messages": [{"role": "user", "content": "Hi"}]},
                         key=None, Authorization=f"Bearer {DEV_KEY}")
    assert response.status_code == 503  # an AWS outage is the usual retryable error, in OpenAI's shape
    assert response.json_body["error"]["code"] == "service_unavailable" and response.json_body["error"]["type"] == "api_error"
    assert budgets.committed("dev") == Decimal(0)


def test_a_queued_request_failing_outside_our_errors_releases_the_reservation_and_is_retried(budgets, monkeypatch):
    from chalicelib import handlers

    fail_model_call(monkeypatch, KeyError("stopReason"))
    response = handlers.requests(sqs_event([("m1", request("dev", "a queued question"))]))
    assert response["batchItemFailures"] == [{"itemIdentifier": "m1"}]  # SQS delivers it again
    assert budgets.committed("dev") == Decimal(0)
