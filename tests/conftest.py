"""Shared fixtures: moto for AWS, botocore Stubber for Bedrock, the real Chalice app."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterator

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# Never reach a real AWS account from tests, whatever the developer's shell holds.
for _name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"):
    os.environ.pop(_name, None)
os.environ.update({
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
    "POWERTOOLS_METRICS_NAMESPACE": "CrossoverTest", "POWERTOOLS_DEV": "false",
})

DEV_KEY = "dev-key"
OPS_KEY = "ops-key"
OTHER_KEY = "other-tenant-key"
TENANTS = {DEV_KEY: ("dev", ("invoke",)), OPS_KEY: ("ops", ("invoke", "ops")), OTHER_KEY: ("other", ("invoke",))}


from stage.chalice import stage_environment  # noqa: E402  (after the environment above)


def _reset() -> None:
    from chalicelib.idempotency import _idempotent_runner
    from chalicelib.services import reset_services

    reset_services()
    _idempotent_runner.cache_clear()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process moto with the app's tables and the test tenants."""
    from moto import mock_aws

    # The same environment the Lambda (and chalice.test.Client) gets for the dev stage.
    for name, value in stage_environment("dev").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BEDROCK_MAX_ATTEMPTS", "3")
    with mock_aws():
        _reset()
        from devstack.bootstrap import bootstrap

        bootstrap(TENANTS)
        yield
    _reset()


@pytest.fixture
def bedrock(aws: None) -> Iterator[Any]:
    """A botocore Stubber on the app's bedrock-runtime client (checks requests against the service model)."""
    from botocore.stub import Stubber

    from chalicelib.services import get_services

    runtime = get_services().backends["bedrock"]._client
    with Stubber(runtime) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def client(aws: None) -> Iterator[Any]:
    from chalice.test import Client

    from app import app

    with Client(app) as test_client:
        yield test_client


# ---- the whole suite's logs, scanned at the end for prompts, API keys and presigned signatures ----
SESSION_LOGS: list[Any] = []      # buffers: the app's in-process log, plus each local stack's API/events lines
SENT_TEXTS: set[str] = set()      # prompts and system prompts the tests sent (the scan looks for each)
FORBIDDEN = (DEV_KEY, OPS_KEY, OTHER_KEY, "X-Amz-Signature", "Signature=")
_MIN_TEXT = 12                    # shorter texts ("hi", "one") would match innocent log words


def record_sent(body: Any) -> None:
    """Remember the prompt texts in a request body (invoke, job, or a queued request)."""
    if isinstance(body, dict):
        for name, value in body.items():
            if name in ("prompt", "system", "prompts", "content") or isinstance(value, (dict, list)):
                record_sent(value)
    elif isinstance(body, list):
        for value in body:
            record_sent(value)
    elif isinstance(body, str) and len(body) >= _MIN_TEXT:
        SENT_TEXTS.add(body)


def record_stack_log(text: str) -> None:
    """A local stack's log: only our processes (the API and the event side with its workers), not moto's
    access log, which prints the presigned URLs the tests fetch."""
    import io

    ours = [line for line in text.splitlines() if line.startswith(("[    api]", "[ events]"))]
    SESSION_LOGS.append(io.StringIO("\n".join(ours)))


@pytest.fixture(scope="session", autouse=True)
def _whole_run_log() -> Iterator[None]:
    """Every line the app logs in this process, for the end-of-run scan. (Attached at the first test:
    a Powertools logger created during pytest_configure writes nowhere.)"""
    import io
    import logging

    from chalicelib.observability import logger

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    SESSION_LOGS.append(buffer)
    yield
    logger.removeHandler(handler)


def log_leaks() -> list[str]:
    text = "\n".join(buffer.getvalue() for buffer in SESSION_LOGS)
    leaks = [f"{word!r}" for word in FORBIDDEN if word in text]
    leaks += [f"prompt {sent[:40]!r}" for sent in sorted(SENT_TEXTS) if sent in text]
    return leaks


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if exitstatus not in (0, 1):
        return  # interrupted or nothing collected: nothing to judge
    leaks = log_leaks()
    lines = sum(buffer.getvalue().count("\n") for buffer in SESSION_LOGS)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.write("\n")
        reporter.write_line(f"log scan: {lines} log lines from the whole run, {len(SENT_TEXTS)} prompt texts, "
                            f"{len(FORBIDDEN)} key/signature markers: {'LEAKS ' + ', '.join(leaks[:10]) if leaks else 'clean'}")
    if leaks:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def post_json(client: Any, path: str, body: Any, key: str | None = DEV_KEY, **headers: str) -> Any:
    record_sent(body)
    all_headers = {"Content-Type": "application/json", **headers}
    if key is not None:
        all_headers["x-api-key"] = key
    return client.http.post(path, headers=all_headers, body=json.dumps(body) if not isinstance(body, (bytes, str)) else body)


def converse_text(text: str, input_tokens: int = 10, output_tokens: int = 5, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
        "metrics": {"latencyMs": 12},
    }


def converse_tool_use(uses: list[tuple[str, str, dict[str, Any]]], input_tokens: int = 20, output_tokens: int = 8) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": use_id, "name": name, "input": tool_input}} for use_id, name, tool_input in uses
        ]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens},
        "metrics": {"latencyMs": 12},
    }


def ledger_items() -> list[dict[str, Any]]:
    import boto3

    from chalicelib.config import get_settings

    return boto3.client("dynamodb").scan(TableName=get_settings().meter.ledger_table)["Items"]


@pytest.fixture
def captured_logs() -> Iterator[Any]:
    """Everything the app logs during the test, as the JSON lines CloudWatch would receive."""
    import io
    import logging

    from chalicelib.observability import logger

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logger.registered_formatter)
    logger.addHandler(handler)
    try:
        yield buffer
    finally:
        logger.removeHandler(handler)
