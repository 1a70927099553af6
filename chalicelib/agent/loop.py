"""The agent loop: Converse with tool use, driven by `stopReason`, bounded by steps and dollars.

Pure orchestration: the model backend, the tool executor, the pricing function and the tool
result guard are all passed in, so the loop is testable without AWS.

Two kinds of tool meet here. *Server* tools (built-in, or registered per tenant) run inside the
loop through `execute`; *client* tools (declared by the caller, function calling) are handed back:
the loop stops with `stop_reason="tool_use"` and the calls in `AgentResult.pending`, and the caller
continues the exchange later with the results (see chalicelib/invoke.py). The step and dollar
limits span the whole exchange: a continuation passes what was already spent.
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
from ..core import Usage
from ..models import ModelBackend, ModelTurn
from ..timing import Deadline

# Stop reasons we report to the caller. Converse's own values pass through unchanged
# ("tool_use" then means: client tool calls are waiting for their results); the two below are ours.
STEP_LIMIT = "step_limit"
BUDGET_EXCEEDED = "budget_exceeded"
TOOL_USE = "tool_use"

# Returns None when a tool result may go back to the model, or a reason string to withhold it.
ToolResultGuard = Callable[[str], "str | None"]
# Runs one server tool by name with the model's raw input; raises on failure (the message goes back to the model).
ToolExecutor = Callable[[str, Any], Any]
# Checks a client tool call's input against the tool's declared schema: None when valid, else the reason.
ClientInputCheck = Callable[[str, Any], "str | None"]


class ToolNotAvailable(Exception):
    """The model asked for a tool this request did not offer."""


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
class Spent:
    """What earlier requests of the same exchange already used (client tool round trips)."""

    steps: int = 0
    cost_usd: Decimal = Decimal(0)


@dataclass
class AgentResult:
    output: str
    stop_reason: str
    usage: Usage
    steps: int
    tool_calls: list[ToolCall] = field(default_factory=list)
    cost_usd: Decimal | None = None
    # Converse messages this run added after the input messages (assistant turns, server tool results):
    # what a conversation stores, and what a stateless caller appends before continuing.
    messages: list[dict[str, Any]] = field(default_factory=list)
    # Client tool calls (toolUse blocks) waiting for the caller's results; empty unless stop_reason is tool_use.
    pending: list[dict[str, Any]] = field(default_factory=list)
    # toolResult blocks already settled in the same model turn as `pending` (server tools, invalid client
    # input): they go back to the model together with the caller's results.
    settled: list[dict[str, Any]] = field(default_factory=list)


def user_text(text: str) -> dict[str, Any]:
    """A Converse user message holding one text block."""
    return {"role": "user", "content": [{"text": text}]}


def run_agent(
    backend: ModelBackend,
    model_id: str,
    messages: list[dict[str, Any]],
    system: str | None,
    tool_specs: list[dict[str, Any]],
    execute: ToolExecutor | None,
    limits: AgentLimits,
    price: Callable[[Usage], Decimal | None],
    guard_tool_result: ToolResultGuard | None = None,
    *,
    client_tools: dict[str, ClientInputCheck] | None = None,
    tool_choice: dict[str, Any] | None = None,
    inference: dict[str, Any] | None = None,
    spent: Spent | None = None,
    deadline: Deadline | None = None,
) -> AgentResult:
    """Run the loop from `messages` (Converse format, ending with a user message).

    `tool_specs` are Converse `toolSpec` entries for every tool offered (server and client);
    `client_tools` maps each client tool name to its input check; any other tool name goes to `execute`.
    """
    spent = spent or Spent()
    client_tools = client_tools or {}
    history = list(messages)
    added: list[dict[str, Any]] = []
    tool_config: dict[str, Any] | None = {"tools": tool_specs} if tool_specs else None
    if tool_config and tool_choice:
        tool_config["toolChoice"] = tool_choice
    usage = Usage()
    tool_calls: list[ToolCall] = []
    turn: ModelTurn | None = None

    def finish(stop_reason: str, steps: int, **extra: Any) -> AgentResult:
        return AgentResult(turn.text() if turn else "", stop_reason, usage, steps, tool_calls, price(usage), added, **extra)

    def converse(steps_done: int) -> ModelTurn:
        """The next model turn, within the deadline. Our errors from it (only from it) say how many of this
        request's steps ran before it; past the deadline, any of them is the deadline."""
        try:
            if deadline is not None and deadline.expired():
                raise _deadline_exceeded(steps_done)
            # The model call may not outlive the deadline either (its read timeout is the time left).
            bound = {"timeout_s": deadline.remaining()} if deadline is not None else {}
            return backend.converse(model_id, history, system, tool_config, limits.max_tokens, inference=inference, **bound)
        except CrossoverError as exc:
            if deadline is not None and deadline.expired() and not isinstance(exc, DeadlineExceeded):
                exc = _deadline_exceeded(steps_done)
            exc.partial_steps = steps_done  # type: ignore[attr-defined]
            raise exc

    step = spent.steps
    try:
        while step < limits.max_steps:
            step += 1
            turn = converse(step - 1 - spent.steps)
            usage = usage + turn.usage
            cost = price(usage)
            uses = turn.tool_uses()
            if turn.stop_reason != TOOL_USE or not uses:
                added.append({"role": "assistant", "content": turn.content})
                return finish(turn.stop_reason, step)
            if cost is not None and spent.cost_usd + cost > limits.max_cost_usd:
                # The tool calls stay unanswered, so only the text of this turn is kept.
                if turn.text():
                    added.append({"role": "assistant", "content": [{"text": turn.text()}]})
                return finish(BUDGET_EXCEEDED, step)
            assistant = {"role": "assistant", "content": turn.content}
            history.append(assistant)
            added.append(assistant)
            client_uses = [use for use in uses if use["name"] in client_tools]
            invalid = {use["toolUseId"]: reason for use in client_uses
                       if (reason := client_tools[use["name"]](use["name"], use.get("input")))}
            valid_client = [use for use in client_uses if use["toolUseId"] not in invalid]
            tool_timeout_s = min(limits.tool_timeout_s, max(0.0, deadline.remaining())) if deadline is not None else limits.tool_timeout_s
            step_calls = _run_tools([use for use in uses if use["name"] not in client_tools], execute, tool_timeout_s)
            tool_calls.extend(step_calls)
            results = [_tool_result_block(call, guard_tool_result) for call in step_calls]
            results += [_error_block(use_id, f"invalid tool input: {reason}") for use_id, reason in invalid.items()]
            if valid_client:
                return finish(TOOL_USE, step, pending=valid_client, settled=results)
            reply = {"role": "user", "content": _in_call_order(uses, results)}
            history.append(reply)
            added.append(reply)

        return finish(STEP_LIMIT, limits.max_steps)
    except Exception as exc:
        # Whatever stopped the loop (a model error, a bug, an SDK error), the steps before it were billed by the
        # provider: hand their usage to the caller, which meters it and settles the budget with it.
        exc.partial_usage = usage  # type: ignore[attr-defined]
        raise


def _deadline_exceeded(steps_done: int) -> DeadlineExceeded:
    return DeadlineExceeded("The request ran out of time before the agent finished; send long work as a job (POST /v1/jobs).",
                            {"steps_completed": steps_done})


def _in_call_order(uses: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {block["toolResult"]["toolUseId"]: block for block in results}
    return [by_id[use["toolUseId"]] for use in uses if use["toolUseId"] in by_id]


def _run_tools(tool_uses: list[dict[str, Any]], execute: ToolExecutor | None, timeout_s: float) -> list[ToolCall]:
    """Run every requested server tool in parallel, each under its own timeout."""
    if not tool_uses:
        return []
    pool = ThreadPoolExecutor(max_workers=min(8, len(tool_uses)), thread_name_prefix="tool")
    try:
        futures = [(use, time.perf_counter(), pool.submit(_invoke_tool, use, execute)) for use in tool_uses]
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


def _invoke_tool(use: dict[str, Any], execute: ToolExecutor | None) -> tuple[str, Any, str | None]:
    if execute is None:
        return "error", None, f"tool {use['name']!r} is not available to this request"
    try:
        return "success", execute(use["name"], use.get("input") or {}), None
    except ToolNotAvailable as exc:
        return "error", None, str(exc)
    except ValidationError as exc:
        return "error", None, f"invalid tool input: {exc.error_count()} error(s): " + "; ".join(e["msg"] for e in exc.errors())
    except Exception as exc:  # a tool's own failure goes back to the model, not to the caller
        return "error", None, f"{exc.__class__.__name__}: {exc}"


def _error_block(tool_use_id: str, message: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_use_id, "content": [{"text": message}], "status": "error"}}


def _tool_result_block(call: ToolCall, guard: ToolResultGuard | None) -> dict[str, Any]:
    if call.status != "success":
        # A tool's error message can carry what it read (an HTTP error body, a file's line): screened too.
        message = call.error or call.status
        withheld = guard(message) if guard else None
        return _error_block(call.tool_use_id, f"error withheld by screening: {withheld}" if withheld else message)
    # Serialised once, as written (not \u-escaped): the screen folds homoglyphs and accents but reads no JSON
    # escapes, so an escaped "\u0456gnore" would pass it unread. The model gets this same text (or the same JSON).
    text = call.output if isinstance(call.output, str) else json.dumps(call.output, default=str, ensure_ascii=False)
    withheld = guard(text) if guard else None
    if withheld:
        call.status, call.error = "error", f"result withheld by screening: {withheld}"
        return _error_block(call.tool_use_id, call.error)
    content = {"json": call.output} if isinstance(call.output, dict) else {"text": text}
    return {"toolResult": {"toolUseId": call.tool_use_id, "content": [content], "status": "success"}}
