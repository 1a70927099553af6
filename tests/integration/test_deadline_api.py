"""POST /v1/invoke answers 504 `deadline_exceeded` itself, before API Gateway's 29 s, with what ran metered;
queued invokes stop before their Lambda's timeout the same way."""
from __future__ import annotations

import time
from decimal import Decimal

from chalicelib import api as api_module
from chalicelib.models.bedrock import BedrockBackend
from chalicelib.timing import API_GATEWAY_LIMIT_S, Deadline
from tests.conftest import converse_text, converse_tool_use, ledger_items, post_json
from tests.integration.support import event_outcome, request, sqs_event


def test_invoke_past_its_deadline_answers_504_and_meters_the_steps_that_ran(client, bedrock, monkeypatch):
    given = []
    real_deadline = api_module.request_deadline
    # A deadline that falls during the first model step, however long authentication and screening took.
    deadline = Deadline(time.monotonic() + 3600)

    def short_deadline(remaining_s, behind_api_gateway):
        given.append((remaining_s, behind_api_gateway, real_deadline(remaining_s, behind_api_gateway)))
        return deadline

    monkeypatch.setattr(api_module, "request_deadline", short_deadline)
    real_converse = BedrockBackend.converse

    def slow_converse(self, *args, **kwargs):  # a model step that outlasts the deadline
        object.__setattr__(deadline, "at", time.monotonic() + 0.05)
        time.sleep(0.15)
        return real_converse(self, *args, **kwargs)

    monkeypatch.setattr(BedrockBackend, "converse", slow_converse)
    bedrock.add_response("converse", converse_tool_use([("t1", "calculator", {"expression": "2+2"})], 1000, 200))
    bedrock.add_response("converse", converse_text("never asked for"))  # the second step must not run
    response = post_json(client, "/v1/invoke", {"prompt": "Add two and two, slowly.", "tools": ["calculator"]})
    assert response.status_code == 504, response.body
    assert response.json_body == {"error": {"code": "deadline_exceeded", "message": response.json_body["error"]["message"],
                                            "details": {"steps_completed": 1}}}
    [row] = ledger_items()  # the paid first step, under its own id
    assert "#failed-" in row["request_id"]["S"] and row["tenant"]["S"] == "dev"
    assert int(row["input_tokens"]["N"]) == 1000 and int(row["output_tokens"]["N"]) == 200
    assert Decimal(row["cost_usd"]["N"]) == Decimal("0.006")
    # The deadline came from the Lambda context (Chalice's local gateway gives the API's configured 29 s).
    [(remaining_s, behind_api_gateway, derived)] = given
    assert behind_api_gateway and 0 < remaining_s <= API_GATEWAY_LIMIT_S
    assert derived.remaining() < API_GATEWAY_LIMIT_S
    bedrock._queue.clear()  # the unused second answer (the point of the test)


class LambdaContext:
    def __init__(self, remaining_ms: int):
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def test_a_queued_invoke_stops_at_its_lambdas_deadline_as_a_final_metered_outcome(services):
    """An SQS record with less time left than the answer reserve runs no model call: the outcome is
    `deadline_exceeded` (final: the record is not returned for a paid re-run), and nothing is billed."""
    from botocore.stub import Stubber

    from chalicelib import handlers

    with Stubber(services.backends["bedrock"]._client) as stub:  # no response queued: a model call would fail the test
        response = handlers.requests(sqs_event([("late-1", request("dev", "too late"))]), LambdaContext(1_000))
        stub.add_response("converse", converse_text("in time"))
        in_time = handlers.requests(sqs_event([("on-time-1", request("dev", "in time"))]), LambdaContext(300_000))
    assert response == {"batchItemFailures": []} and in_time == {"batchItemFailures": []}
    late = event_outcome(services, "sqs-late-1")
    assert late["status"] == "rejected" and late["reason"] == "deadline_exceeded"
    assert event_outcome(services, "sqs-on-time-1")["status"] == "done"
    assert len(ledger_items()) == 1  # only the call that ran
