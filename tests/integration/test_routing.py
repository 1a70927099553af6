"""Routing through the app: self-hosted endpoint (OpenAI protocol), fallback to Bedrock, auto mode."""
from __future__ import annotations

import json
from datetime import date

from decimal import Decimal

from botocore.stub import Stubber

from chalicelib.tenant_settings import TenantSettings
from tests.conftest import converse_text, ledger_items, post_json


def stub_bedrock():
    from chalicelib.services import get_services

    return Stubber(get_services().backends["bedrock"]._client)


def set_mode(tenant, mode):
    from chalicelib.services import get_services

    get_services().router.tenant_settings.put(tenant, TenantSettings(routing_mode=mode))


def test_self_hosted_mode_serves_from_the_openai_compatible_endpoint(client, self_hosted):
    set_mode("dev", "self_hosted")
    response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert response.status_code == 200, response.body
    body = response.json_body
    assert body["backend"] == "self_hosted" and body["output"] == "from the GPU" and body["model"] == "local.smollm2-135m-instruct"
    assert self_hosted.requests[0]["messages"][-1] == {"role": "user", "content": "hello"}
    [row] = ledger_items()
    assert row["backend"]["S"] == "self_hosted" and Decimal(row["cost_usd"]["N"]) == 0  # the local model is priced at $0


def test_unhealthy_self_hosted_falls_back_to_bedrock_and_opens_the_circuit(client, self_hosted):
    from chalicelib.services import get_services

    set_mode("dev", "self_hosted")
    self_hosted.fail = True
    with stub_bedrock() as stub:
        for _ in range(4):
            stub.add_response("converse", converse_text("from Bedrock"))
        backends = [post_json(client, "/v1/invoke", {"prompt": "hello"}).json_body["backend"] for _ in range(4)]
    assert backends == ["bedrock"] * 4
    assert len(self_hosted.requests) == 3  # after 3 failures the circuit opened: the 4th went straight to Bedrock
    assert get_services().router.breakers["self_hosted"].is_open


def test_auto_mode_follows_the_stored_recommendation(client, self_hosted):
    from chalicelib.meter.recommendation import Assessment, DecisionState
    from chalicelib.services import get_services

    set_mode("dev", "auto")
    with stub_bedrock() as stub:
        stub.add_response("converse", converse_text("from Bedrock"))
        assert post_json(client, "/v1/invoke", {"prompt": "hello"}).json_body["backend"] == "bedrock"
    services = get_services()
    services.decisions.save("global", date.today().isoformat(), DecisionState("switch_to_self_hosted"),
                            Assessment("switch_to_self_hosted", ("test",), {}), {})
    services.router.recommendations.forget()  # drop the one-minute cache
    assert post_json(client, "/v1/invoke", {"prompt": "hello"}).json_body["backend"] == "self_hosted"


def test_routing_decisions_are_logged_with_reasons(client, self_hosted, captured_logs):
    set_mode("dev", "self_hosted")
    post_json(client, "/v1/invoke", {"prompt": "hello"})
    decisions = [json.loads(line) for line in captured_logs.getvalue().splitlines() if "routing.decision" in line]
    assert decisions and decisions[0]["backend"] == "self_hosted" and decisions[0]["reason"] == "routing mode is self_hosted"


def test_circuit_recovers_when_the_gpu_is_back_and_nothing_is_metered_twice(client, self_hosted):
    """5xx storm on the self-hosted endpoint: the circuit opens, Bedrock serves (metered as Bedrock, once
    per answer), a Bedrock 5xx then is a clean 502 with nothing metered; after the cool-down one trial
    call reaches the recovered GPU and closes the circuit."""
    from chalicelib.router import CircuitBreaker
    from chalicelib.services import get_services

    now = [0.0]
    breaker = get_services().router.breakers["self_hosted"] = CircuitBreaker(threshold=3, cooldown_s=30, clock=lambda: now[0])
    set_mode("dev", "self_hosted")
    self_hosted.fail = True
    with stub_bedrock() as stub:
        for _ in range(4):
            stub.add_response("converse", converse_text("from Bedrock"))
        stub.add_client_error("converse", service_error_code="InternalServerException", http_status_code=500)
        answers = [post_json(client, "/v1/invoke", {"prompt": f"hello {i}"}) for i in range(5)]
    assert [a.json_body.get("backend") for a in answers[:4]] == ["bedrock"] * 4 and breaker.is_open
    assert answers[4].status_code == 502 and answers[4].json_body["error"]["code"] == "model_unavailable"
    assert len(self_hosted.requests) == 3  # the open circuit kept the 4th and 5th calls off the failing GPU

    self_hosted.fail = False
    now[0] += 31  # past the cool-down: one trial call goes through
    recovered = post_json(client, "/v1/invoke", {"prompt": "hello again"})
    assert recovered.json_body["backend"] == "self_hosted" and not breaker.is_open
    rows = ledger_items()
    assert sorted(row["backend"]["S"] for row in rows) == ["bedrock"] * 4 + ["self_hosted"]
    assert len({row["request_id"]["S"] for row in rows}) == 5
