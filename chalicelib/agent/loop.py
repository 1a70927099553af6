"""The agent loop: Converse with tool use, driven by `stopReason`, bounded by steps and dollars.

Pure orchestration: the model backend, the tool registry, the pricing function and the tool
result guard are all passed in, so the loop is testable without AWS.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import CrossoverError, DeadlineExceeded
from ..meter.pricing import Usage
from ..models import ModelBackend, ModelTurn
from ..timing import Deadline
from .tools import ToolRegistry

# Stop reasons we report to the caller. Converse's own values pass through unchanged;
# the two below are ours.
STEP_LIMIT = "step_limit"
BUDGET_EXCEEDED = "budget_exceeded"

# Returns None when a tool result may go back to the model, or a reason string to withhold it.
ToolResultGuard = Callable[[str], "str | None"]


@dataclass
class ToolCall:
    tool_use_id: str
    name: str
    input: Any
    status: str  # success | error | timeout
    ms: float
    output: Any = None
    error: str | None = None

    def public(self) -> dict[str, Any]:
        record = {"name": self.name, "input": self.input, "status": self.status, "ms": round(self.ms, 2)}
        if self.error:
            record["error"] = self.error
        return record


@dataclass
class AgentLimits:
    max_steps: int
    max_cost_usd: Decimal
    max_tokens: int
    tool_timeout_s: float


@dataclass
class AgentResult:
    output: str
    stop_reason: str
    usage: Usage
    steps: int
    tool_calls: list[ToolCall] = field(default_factory=list)
    cost_usd: Decimal | None = None


def run_agent(
    backend: ModelBackend,
    model_id: str,
    prompt: str,
    system: str | None,
    tool_names: list[str],
    registry: ToolRegistry,
    limits: AgentLimits,
    price: Callable[[Usage], Decimal | None],
    guard_tool_result: ToolResultGuard | None = None,
    deadline: Deadline | None = None,
) -> AgentResult:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": prompt}]}]
    tool_config = registry.tool_config(tool_names) if tool_names else None
    usage = Usage()
    tool_calls: list[ToolCall] = []
    turn: ModelTurn | None = None

    for step in range(1, limits.max_steps + 1):
        try:
            if deadline is not None and deadline.expired():
                raise _deadline_exceeded(step - 1)
            # The model call may not outlive the deadline either (its read timeout is the time left).
            bound = {"timeout_s": deadline.remaining()} if deadline is not None else {}
            turn = backend.converse(model_id, messages, system, tool_config, limits.max_tokens, **bound)
        except CrossoverError as exc:
            if deadline is not None and deadline.expired() and not isinstance(exc, DeadlineExceeded):
                exc = _deadline_exceeded(step - 1)
            # Earlier steps were billed by the provider: hand their usage to the caller to meter.
            exc.partial_usage = usage  # type: ignore[attr-defined]
            exc.partial_steps = step - 1  # type: ignore[attr-defined]
            raise exc
        usage = usage + turn.usage
        cost = price(usage)
        if turn.stop_reason != "tool_use" or not turn.tool_uses():
            return AgentResult(turn.text(), turn.stop_reason, usage, step, tool_calls, cost)
        if cost is not None and cost > limits.max_cost_usd:
            return AgentResult(turn.text(), BUDGET_EXCEEDED, usage, step, tool_calls, cost)
        messages.append({"role": "assistant", "content": turn.content})
        tool_timeout_s = min(limits.tool_timeout_s, max(0.0, deadline.remaining())) if deadline is not None else limits.tool_timeout_s
        step_calls = _run_tools(turn.tool_uses(), registry, set(tool_names), tool_timeout_s)
        tool_calls.extend(step_calls)
        messages.append({"role": "user", "content": [_tool_result_block(call, guard_tool_result) for call in step_calls]})

    assert turn is not None  # max_steps >= 1
    return AgentResult(turn.text(), STEP_LIMIT, usage, limits.max_steps, tool_calls, price(usage))


def _deadline_exceeded(steps_done: int) -> DeadlineExceeded:
    return DeadlineExceeded("The request ran out of time before the agent finished; send long work as a job (POST /v1/jobs).",
                            {"steps_completed": steps_done})


def _run_tools(tool_uses: list[dict[str, Any]], registry: ToolRegistry, allowed: set[str], timeout_s: float) -> list[ToolCall]:
    """Run every requested tool in parallel, each under its own timeout."""
    if not tool_uses:
        return []
    pool = ThreadPoolExecutor(max_workers=min(8, len(tool_uses)), thread_name_prefix="tool")
    try:
        futures = [(use, time.perf_counter(), pool.submit(_invoke_tool, use, registry, allowed)) for use in tool_uses]
        calls = []
        for use, started, future in futures:
            remaining = max(0.0, timeout_s - (time.perf_counter() - started))
            try:
                status, output, error = future.result(timeout=remaining)
            except FutureTimeout:
                status, output, error = "timeout", None, f"tool did not finish within {timeout_s:g}s"
            calls.append(ToolCall(use["toolUseId"], use["name"], use.get("input"), status, (time.perf_counter() - started) * 1000, output, error))
        return calls
    finally:
        # A timed-out tool thread cannot be killed; don't wait for it.
        pool.shutdown(wait=False, cancel_futures=True)


def _invoke_tool(use: dict[str, Any], registry: ToolRegistry, allowed: set[str]) -> tuple[str, Any, str | None]:
    tool_ = registry.get(use["name"]) if use["name"] in allowed else None
    if tool_ is None:
        return "error", None, f"tool {use['name']!r} is not available to this request"
    try:
        return "success", tool_.run(use.get("input") or {}), None
    except ValidationError as exc:
        return "error", None, f"invalid tool input: {exc.error_count()} error(s): " + "; ".join(e["msg"] for e in exc.errors())
    except Exception as exc:  # a tool's own failure goes back to the model, not to the caller
        return "error", None, f"{exc.__class__.__name__}: {exc}"


def _tool_result_block(call: ToolCall, guard: ToolResultGuard | None) -> dict[str, Any]:
    if call.status != "success":
        return {"toolResult": {"toolUseId": call.tool_use_id, "content": [{"text": call.error or call.status}], "status": "error"}}
    text = call.output if isinstance(call.output, str) else json.dumps(call.output, default=str)
    withheld = guard(text) if guard else None
    if withheld:
        call.status, call.error = "error", f"result withheld by screening: {withheld}"
        return {"toolResult": {"toolUseId": call.tool_use_id, "content": [{"text": call.error}], "status": "error"}}
    content = {"json": call.output} if isinstance(call.output, dict) else {"text": text}
    return {"toolResult": {"toolUseId": call.tool_use_id, "content": [content], "status": "success"}}
