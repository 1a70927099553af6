"""Bedrock throttling through botocore's real retry handler, against a local Converse endpoint."""
from __future__ import annotations

import pytest

from devstack.fake_bedrock import FakeBedrock, error_answer, text_answer
from tests.conftest import ledger_items, post_json


@pytest.fixture
def fake_bedrock(aws, monkeypatch):
    from chalicelib.services import reset_services

    with FakeBedrock() as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url)
        reset_services()
        yield server
    reset_services()


def test_throttling_then_success_is_retried_by_botocore_and_billed_once(client, fake_bedrock):
    fake_bedrock.script.extend([error_answer(429, "ThrottlingException"), text_answer("after retry", 11, 4)])
    response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert response.status_code == 200, response.body
    assert response.json_body["output"] == "after retry"
    assert len(fake_bedrock.requests) == 2  # one throttled attempt, one retry
    [row] = ledger_items()
    assert row["input_tokens"]["N"] == "11"


def test_throttling_storm_exhausts_retries_and_answers_429(client, fake_bedrock):
    from chalicelib.config import get_settings

    attempts = get_settings().models.bedrock_max_attempts
    fake_bedrock.script.extend([error_answer(429, "ThrottlingException")] * attempts)
    fake_bedrock.script.append(text_answer("never reached"))
    response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert response.status_code == 429 and response.json_body["error"]["code"] == "throttled"
    assert len(fake_bedrock.requests) == attempts
    assert ledger_items() == []


def test_logs_carry_trace_and_tenant_but_never_the_prompt(client, fake_bedrock, captured_logs):
    secret_prompt = "my account number is 99887766 and my cat is called Zebedee"
    response = post_json(client, "/v1/invoke", {"prompt": secret_prompt})
    assert response.status_code == 200
    logs = captured_logs.getvalue()
    assert '"invoke.completed"' in logs and response.json_body["trace_id"] in logs and '"tenant":"dev"' in logs
    assert "Zebedee" not in logs and "99887766" not in logs and "dev-key" not in logs
