"""The loop with an in-memory backend: no AWS, no Stubber."""
from __future__ import annotations

import time
from decimal import Decimal

from pydantic import BaseModel

from chalicelib.agent.loop import BUDGET_EXCEEDED, AgentLimits, run_agent
from chalicelib.agent.tools import ToolRegistry, tool
from chalicelib.meter.pricing import Usage
from chalicelib.models import ModelTurn


class ScriptedBackend:
    name = "bedrock"

    def __init__(self, turns):
        self.turns = list(turns)
        self.calls = []

    def converse(self, model_id, messages, system, tool_config, max_tokens):
        self.calls.append([dict(m) for m in messages])
        return self.turns.pop(0)


def tool_turn(*uses):
    return ModelTurn([{"toolUse": {"toolUseId": f"id-{name}", "name": name, "input": args}} for name, args in uses], "tool_use",
                     Usage(input_tokens=100, output_tokens=10))


class SleepInput(BaseModel):
    seconds: float


def make_registry():
    registry = ToolRegistry()

    @tool(name="sleep", description="Sleep", registry=registry)
    def sleep(args: SleepInput) -> str:
        time.sleep(args.seconds)
        return "slept"

    return registry


LIMITS = AgentLimits(max_steps=5, max_cost_usd=Decimal("1"), max_tokens=100, tool_timeout_s=0.3)


def test_parallel_tools_run_concurrently_and_slow_ones_time_out():
    backend = ScriptedBackend([tool_turn(("sleep", {"seconds": 0.2}), ("sleep", {"seconds": 0.2}), ("sleep", {"seconds": 2})),
                               ModelTurn([{"text": "done"}], "end_turn", Usage(input_tokens=5, output_tokens=1))])
    backend.turns[0].content[1]["toolUse"]["toolUseId"] = "second"
    backend.turns[0].content[2]["toolUse"]["toolUseId"] = "third"
    started = time.perf_counter()
    result = run_agent(backend, "m", "go", None, ["sleep"], make_registry(), LIMITS, price=lambda u: Decimal(0))
    elapsed = time.perf_counter() - started
    assert [call.status for call in result.tool_calls] == ["success", "success", "timeout"]
    assert elapsed < 1.0  # the two 0.2 s tools overlapped and the 2 s one was abandoned at 0.3 s
    results = backend.calls[1][-1]["content"]
    assert [block["toolResult"]["status"] for block in results] == ["success", "success", "error"]
    assert result.usage == Usage(input_tokens=105, output_tokens=11)


def test_tool_not_offered_to_the_request_is_refused():
    backend = ScriptedBackend([tool_turn(("sleep", {"seconds": 0})), ModelTurn([{"text": "ok"}], "end_turn", Usage())])
    result = run_agent(backend, "m", "go", None, [], make_registry(), LIMITS, price=lambda u: Decimal(0))
    assert result.tool_calls[0].status == "error" and "not available" in result.tool_calls[0].error


def test_dollar_budget_stops_the_loop():
    backend = ScriptedBackend([tool_turn(("sleep", {"seconds": 0}))] * 5)
    result = run_agent(backend, "m", "go", None, ["sleep"], make_registry(), LIMITS,
                       price=lambda usage: Decimal(usage.input_tokens) / 100)  # $1 per step
    assert result.stop_reason == BUDGET_EXCEEDED and result.steps == 2


def test_guard_withholds_a_flagged_tool_result_from_the_model():
    backend = ScriptedBackend([tool_turn(("sleep", {"seconds": 0})), ModelTurn([{"text": "ok"}], "end_turn", Usage())])
    result = run_agent(backend, "m", "go", None, ["sleep"], make_registry(), LIMITS, price=lambda u: Decimal(0),
                       guard_tool_result=lambda text: "injection.test" if "slept" in text else None)
    block = backend.calls[1][-1]["content"][0]["toolResult"]
    assert block["status"] == "error" and "withheld" in block["content"][0]["text"]
    assert result.tool_calls[0].status == "error"
