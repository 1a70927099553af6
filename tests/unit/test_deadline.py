"""The request deadline: derived from the Lambda's remaining time and API Gateway's 29 s, checked by the
agent loop between steps and handed to the model call as its timeout; the steps that ran stay metered."""
from __future__ import annotations

import time
from decimal import Decimal

import pytest

from chalicelib.agent.loop import AgentLimits, run_agent
from chalicelib.errors import DeadlineExceeded, ModelTimeout
from chalicelib.core import Usage
from chalicelib.models import ModelTurn
from chalicelib.models.bedrock import BedrockBackend
from chalicelib.timing import ANSWER_RESERVE_S, API_GATEWAY_LIMIT_S, Deadline, request_deadline
from tests.unit.support import USER_GO, offer, tool_turn

LIMITS = AgentLimits(max_steps=8, max_cost_usd=Decimal("1"), max_tokens=100, tool_timeout_s=5)


class SlowBackend:
    """Each call takes `seconds` and asks for another tool step; records the timeout it was given."""

    name = "bedrock"

    def __init__(self, seconds: float, fail_with: Exception | None = None):
        self.seconds, self.fail_with, self.timeouts = seconds, fail_with, []

    def converse(self, model_id, messages, system, tool_config, max_tokens, timeout_s=None, inference=None):
        self.timeouts.append(timeout_s)
        time.sleep(self.seconds)
        if self.fail_with is not None:
            raise self.fail_with
        return tool_turn(("sleep", {"seconds": 0}))


def test_the_api_deadline_is_api_gateways_limit_or_the_lambdas_time_whichever_is_sooner():
    started = time.monotonic()
    assert request_deadline(None, behind_api_gateway=False) is None
    far = request_deadline(900.0, behind_api_gateway=True)
    assert far.at - started == pytest.approx(API_GATEWAY_LIMIT_S - ANSWER_RESERVE_S, abs=0.5)
    near = request_deadline(10.0, behind_api_gateway=True)
    assert near.at - started == pytest.approx(10.0 - ANSWER_RESERVE_S, abs=0.5)
    assert request_deadline(1.0, behind_api_gateway=True).expired()  # less than the reserve: stop at once
    queue = request_deadline(300.0, behind_api_gateway=False)
    assert queue.at - started == pytest.approx(300.0 - ANSWER_RESERVE_S, abs=0.5)


def test_the_loop_stops_between_steps_at_the_deadline_and_hands_back_what_ran():
    backend = SlowBackend(0.05)
    with pytest.raises(DeadlineExceeded) as caught:
        run_agent(backend, "m", USER_GO, None, *offer(["sleep"]), LIMITS, price=lambda u: Decimal(0), deadline=Deadline.after(0.12))
    error = caught.value
    assert error.status == 504 and error.to_body()["error"]["code"] == "deadline_exceeded"
    assert 1 <= error.partial_steps < LIMITS.max_steps  # stopped early, not after all 8 steps
    assert error.partial_usage == Usage(input_tokens=100 * error.partial_steps, output_tokens=10 * error.partial_steps)
    assert all(t is not None and t <= 0.12 for t in backend.timeouts)  # each call got at most the time left
    assert backend.timeouts == sorted(backend.timeouts, reverse=True)


def test_an_expired_deadline_runs_no_model_call():
    backend = SlowBackend(0)
    with pytest.raises(DeadlineExceeded) as caught:
        run_agent(backend, "m", USER_GO, None, *offer([]), LIMITS, price=lambda u: Decimal(0), deadline=Deadline.after(0))
    assert backend.timeouts == [] and caught.value.partial_usage == Usage()


def test_a_model_timeout_past_the_deadline_is_the_deadline():
    backend = SlowBackend(0.05, fail_with=ModelTimeout("slow"))
    with pytest.raises(DeadlineExceeded):
        run_agent(backend, "m", USER_GO, None, *offer([]), LIMITS, price=lambda u: Decimal(0), deadline=Deadline.after(0.01))
    # ... but with time left it stays the model's own timeout
    with pytest.raises(ModelTimeout):
        run_agent(SlowBackend(0, fail_with=ModelTimeout("slow")), "m", USER_GO, None, *offer([]), LIMITS,
                  price=lambda u: Decimal(0), deadline=Deadline.after(10))


def test_without_a_deadline_nothing_changes():
    backend = SlowBackend(0)
    backend.converse = lambda model_id, messages, system, tool_config, max_tokens, inference=None: ModelTurn([{"text": "ok"}], "end_turn", Usage())
    assert run_agent(backend, "m", USER_GO, None, *offer([]), LIMITS, price=lambda u: Decimal(0)).output == "ok"


def test_a_bedrock_call_is_waited_for_only_as_long_as_the_deadline_allows():
    class SlowClient:
        def converse(self, **request):
            time.sleep(0.5)
            return {"output": {"message": {"content": [{"text": "late"}]}}, "stopReason": "end_turn", "usage": {}}

    backend = BedrockBackend(SlowClient())
    started = time.perf_counter()
    with pytest.raises(ModelTimeout):
        backend.converse("m", [{"role": "user", "content": [{"text": "hi"}]}], None, None, 10, timeout_s=0.1)
    assert time.perf_counter() - started < 0.4
    assert backend.converse("m", [], None, None, 10, timeout_s=2).text() == "late"  # in time: the answer
    assert backend.converse("m", [], None, None, 10).text() == "late"  # no deadline: waited for
