"""The synchronous request path, shared by /v1/invoke and /v1/chat/completions.

`run_exchange` is the one path every model request takes: screen (tools checked, the system prompt
screened) -> reserve (the worst case against the budget) -> route and run (chalicelib/router.py picks
the backend and falls back) -> settle (once, for every attempt) -> meter (one ledger record per model
call that was billed, metrics, the audit log). The API adapters (`invoke` here, chalicelib/chat_completions.py) turn
their request into an `Exchange` (Converse messages, screened) and its outcome into their answer.
"""
from __future__ import annotations

import functools
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .agent.client_tools import compile_client_tools
from .agent.loop import TOOL_USE, AgentLimits, AgentResult, ClientInputCheck, Spent, ToolExecutor, run_agent, user_text
from .agent.tools import tool_spec_text
from .api_schemas import InvokeRequest, InvokeResponse
from .auth import Tenant
from .conversations.messages import merge_roles, to_converse, to_public, tool_result_block
from .conversations.store import Conversation, Turn, new_conversation_id
from .conversations.window import fit_window
from .errors import NotFound, ValidationFailed
from .meter.ledger import LedgerEntry
from .core import Usage
from .meter.catalog import TokenPrice
from .meter.pricing import price_usage, self_hosted_price, worst_case_cost
from .observability import logger, metrics
from .router import Tried
from .routing import Backend, model_for
from .services import Services
from .timing import Deadline


@dataclass
class Exchange:
    """One request's model work, whatever API it came through."""

    messages: list[dict[str, Any]]  # Converse messages, already screened, ending with a user message
    system: str | None = None
    model: str | None = None  # a model id or an alias (settings.models.aliases); None: the default model
    max_tokens: int | None = None
    server_tools: list[str] = field(default_factory=list)  # registry names, run by Crossover
    client_tools: list[dict[str, Any]] = field(default_factory=list)  # {name, description, parameters}, run by the caller
    tool_choice: dict[str, Any] | None = None  # Converse toolChoice
    inference: dict[str, Any] | None = None  # Converse inferenceConfig extras (temperature, topP, stopSequences)
    spent: Spent = field(default_factory=Spent)  # earlier requests of the same client-tool exchange


@dataclass
class ExchangeOutcome:
    result: AgentResult
    model_id: str
    backend: str
    request_id: str


def check_tools(services: Services, names: list[str]) -> None:
    """Cheap checks before any expensive work (the size limit is the tenant's policy, checked by screening)."""
    if len(set(names)) != len(names):
        raise ValidationFailed("Each tool may be named once.", {"field": "tools"})
    unknown = sorted(set(names) - set(services.tools.names()))
    if unknown:
        raise ValidationFailed("Unknown tool(s) requested.", {"field": "tools", "unknown": unknown, "available": services.tools.names()})


def resolve_model(aliases: dict[str, str], requested: str | None, default: str) -> str:
    """An alias (e.g. `claude-sonnet`) to its Bedrock id; any other id passes through unchanged."""
    return aliases.get(requested, requested) if requested else default


def screen_messages(services: Services, tenant: Tenant, trace_id: str, messages: list[dict[str, Any]],
                    entry: str = "invoke", subject: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Screen every text the caller puts in front of the model, whatever its role: user text, tool results,
    and assistant turns too (a caller-supplied assistant turn is the caller's text, which the model reads as
    its own: text and the inputs of the tool calls it claims). PII-redacted where the policy says.
    `entry` prefixes the audit log's entry points; `subject` goes into a refusal's details."""
    return [{**message, "content": [_screened_block(services, tenant, trace_id, message["role"], block, entry, subject)
                                    for block in message["content"]]}
            for message in messages]


def history_stamp(services: Services, tenant: Tenant, window_tokens: int) -> str:
    """The stamp a conversation's stored history carries once screened (ScreeningService.stamp: the rules, the models,
    the tenant's policy), and the window it was screened for (a larger window reaches older turns)."""
    return f"{services.screening.stamp(tenant.tenant)}-w{window_tokens}"


def screened_history(services: Services, tenant: Tenant, trace_id: str, conversation: Conversation,
                     history: list[dict[str, Any]], window_tokens: int) -> tuple[list[dict[str, Any]], str | None]:
    """A stored conversation's history as the model may read it now. It was screened as each turn was added, under the
    stamp the conversation keeps (history_stamp); under another, the caller's messages (user role: prompts, tool
    results) are screened again, so that an attack a new release or a stricter policy refuses does not reach the model
    with every later turn. The model's own turns are not the caller's text and are not. A refusal is the usual 403, its
    details naming the conversation.

    Only the history the window can still send is read, and returned: the newest exchanges that fit `window_tokens`
    with no system prompt (the most room). Every later window is a suffix of it (turns are only added, and a system
    prompt only takes room), so what it drops is never sent again, and the work is bounded by the window whatever the
    conversation's length (reading all of it, ~10 ms a text, could outlast the request on a long conversation).
    Returns the messages (redacted where the policy now redacts: the stored history keeps its text, so such a
    conversation is screened again on each turn) and the stamp the stored history may now carry (None: screen it again
    next time)."""
    stamp = history_stamp(services, tenant, window_tokens)
    if conversation.screened_as == stamp:
        return history, stamp
    sendable, _ = fit_window(merge_roles(history), None, window_tokens)
    subject = {"part": "conversation_history", "conversation_id": conversation.conversation_id}
    screened = [screen_messages(services, tenant, trace_id, [message], "invoke.history", subject)[0] if message["role"] == "user"
                else message for message in sendable]
    logger.info("conversation.history_rescreened", extra={"trace_id": trace_id, "tenant": tenant.tenant, "messages": len(sendable),
                                                          "conversation_id": conversation.conversation_id})
    return screened, (stamp if screened == sendable else None)


def _screened_block(services: Services, tenant: Tenant, trace_id: str, role: str, block: dict[str, Any],
                    entry: str = "invoke", subject: dict[str, str] | None = None) -> dict[str, Any]:
    def allowed(text: str, entry_point: str) -> Any:
        return services.screening.require_allowed(text, tenant.tenant, trace_id, entry + entry_point.removeprefix("invoke"),
                                                  subject=subject)

    if "text" in block:
        verdict = allowed(block["text"], "invoke" if role == "user" else "invoke.assistant")
        return {"text": verdict.redacted_text or block["text"]}
    if "toolUse" in block:  # a JSON input cannot be redacted in place: it passes whole or is refused
        allowed(json.dumps(block["toolUse"].get("input") or {}, ensure_ascii=False), "invoke.tool_use")
        return block
    if "toolResult" in block:
        result = block["toolResult"]
        parts = []
        for part in result.get("content", []):
            text = part["text"] if "text" in part else json.dumps(part.get("json"), ensure_ascii=False)
            verdict = allowed(text, "invoke.tool_result")
            parts.append({"text": verdict.redacted_text} if verdict.redacted_text else part)
        return {"toolResult": {**result, "content": parts}}
    return block


@dataclass(frozen=True)
class ExchangePlan:
    """What every attempt of one exchange runs with, whichever backend serves it (built before any spend)."""

    exchange: Exchange
    tool_specs: list[dict[str, Any]]
    execute: ToolExecutor
    client_checks: dict[str, ClientInputCheck]
    limits: AgentLimits
    bedrock_model: str
    guard: Any
    deadline: Deadline | None


def plan_exchange(services: Services, tenant: Tenant, exchange: Exchange, trace_id: str, deadline: Deadline | None) -> ExchangePlan:
    """Tools checked and compiled, the system prompt screened, the limits and the requested model fixed."""
    settings = services.settings
    check_tools(services, exchange.server_tools)
    client_specs, client_checks = compile_client_tools(exchange.client_tools, reserved=set(exchange.server_tools))
    # A declared tool's description and schema are the caller's text, read by the model. Each spec is screened
    # on its own, under the policy's size limit per spec (as every other text). Not joined into one screen: the
    # rules would find the same, but the classifier reads an attack diluted by the other tools' text (its score
    # scales with 1/sqrt(n-grams)); 422 of 1,230 corpus attacks blocked as one tool's description passed as the
    # 4th of 5 specs screened as one text, while an ordinary spec costs ~0.1 ms (benchmarks/tool_specs.py).
    for spec in client_specs:
        services.screening.require_allowed(tool_spec_text(spec), tenant.tenant, trace_id, "invoke.tool_spec",
                                           subject={"tool": spec["toolSpec"]["name"]})
    if exchange.system:
        services.screening.require_allowed(exchange.system, tenant.tenant, trace_id, "invoke.system", role="system")
    limits = AgentLimits(
        max_steps=settings.limits.max_agent_steps,
        max_cost_usd=Decimal(str(settings.limits.max_request_cost_usd)),
        max_tokens=min(exchange.max_tokens or settings.limits.max_output_tokens, settings.limits.max_output_tokens),
        tool_timeout_s=settings.limits.tool_timeout_s,
    )
    return ExchangePlan(exchange, services.tools.tool_specs(exchange.server_tools) + client_specs,
                        services.tools.executor(exchange.server_tools), client_checks, limits,
                        resolve_model(settings.models.aliases, exchange.model, settings.models.default_model),
                        services.screening.tool_result_guard(tenant.tenant, trace_id), deadline)


def reservation_for(services: Services, plan: ExchangePlan) -> Decimal:
    """The worst case at Bedrock's price: a self-hosted call may fall back to it."""
    exchange = plan.exchange
    input_bytes = len(json.dumps([exchange.messages, plan.tool_specs], default=str).encode()) + len((exchange.system or "").encode())
    return worst_case_cost(input_bytes, plan.limits, services.catalog.token_price(plan.bedrock_model), exchange.spent)


def model_and_price(services: Services, plan: ExchangePlan, backend: str) -> tuple[str, TokenPrice | None]:
    """The model a backend runs for this exchange, and its price."""
    model_id = model_for(backend, plan.bedrock_model, services.settings.models.self_hosted_model)
    catalog = services.catalog
    return model_id, self_hosted_price(catalog, model_id) if backend == "self_hosted" else catalog.token_price(model_id)


def run_on(services: Services, plan: ExchangePlan, backend: Backend) -> AgentResult:
    """The agent loop on one backend (one attempt; the router calls it again on Bedrock to fall back)."""
    model_id, token_price = model_and_price(services, plan, backend)
    exchange = plan.exchange
    return run_agent(services.backends[backend], model_id, exchange.messages, exchange.system, plan.tool_specs, plan.execute,
                     plan.limits, price=lambda usage: price_usage(usage, token_price), guard_tool_result=plan.guard,
                     client_tools=plan.client_checks, tool_choice=exchange.tool_choice if plan.tool_specs else None,
                     inference=exchange.inference, spent=exchange.spent, deadline=plan.deadline)


def partial_usage(error: Exception | None) -> Usage:
    """What a failed attempt's steps used before it failed (billed by the provider all the same)."""
    usage: Usage = getattr(error, "partial_usage", None) or Usage()
    return usage


def attempt_cost(services: Services, plan: ExchangePlan, attempt: Tried[AgentResult]) -> Decimal | None:
    """What one attempt cost: its result's price, or the price of the steps a failed one ran (None: unpriced)."""
    if attempt.value is not None:
        return attempt.value.cost_usd
    usage = partial_usage(attempt.error)
    if not (usage.input_tokens or usage.output_tokens):
        return Decimal(0)
    return price_usage(usage, model_and_price(services, plan, attempt.backend)[1])


def total_cost(costs: list[Decimal | None]) -> Decimal | None:
    """The exchange's cost over all its attempts; None when any part is unpriced (the reservation then stays)."""
    return None if any(cost is None for cost in costs) else sum((cost for cost in costs if cost is not None), Decimal(0))


def run_exchange(services: Services, tenant: Tenant, exchange: Exchange, trace_id: str, request_id: str | None = None,
                 deadline: Deadline | None = None) -> ExchangeOutcome:
    """screen -> reserve -> route and run -> settle -> meter.

    `deadline`: the request's time budget (API Gateway's 29 s); the loop stops with 504 deadline_exceeded
    past it, and the steps that ran are settled and metered like any failed attempt's.
    """
    started = time.perf_counter()
    plan = plan_exchange(services, tenant, exchange, trace_id, deadline)
    request_id = request_id or f"req-{uuid.uuid4().hex}"
    # Whatever is raised before the settle (reading the route, a bug), the reservation is released.
    with services.budgets.held(tenant.tenant, reservation_for(services, plan)) as hold:
        route = services.router.route(tenant.tenant, "sync", trace_id)
        # Every attempt comes back, failed ones too whatever they raised, with what they were billed for.
        attempts = services.router.call_with_fallback(route, functools.partial(run_on, services, plan), tenant.tenant, trace_id)
        costs = [attempt_cost(services, plan, attempt) for attempt in attempts]
        hold.settle(total_cost(costs))  # once, for every attempt together
    meter_failed_attempts(services, tenant, plan, attempts, costs, request_id, trace_id)
    answer = attempts[-1]
    if answer.error is not None:
        raise answer.error
    assert answer.value is not None
    result = answer.value
    model_id = model_and_price(services, plan, answer.backend)[0]
    written = _record(services, request_id, tenant, model_id, answer.backend, result.usage, result.cost_usd, trace_id)
    _emit(tenant, model_id, answer.backend, trace_id, request_id, result.usage, result.cost_usd, result.stop_reason,
          len(result.tool_calls), (time.perf_counter() - started) * 1000, written)
    return ExchangeOutcome(result, model_id, answer.backend, request_id)


def meter_failed_attempts(services: Services, tenant: Tenant, plan: ExchangePlan, attempts: list[Tried[AgentResult]],
                          costs: list[Decimal | None], request_id: str, trace_id: str) -> None:
    """One ledger record per failed attempt whose steps were billed, under its own id (so a retry, or the
    fallback, under the same request id is recorded too)."""
    for attempt, cost in zip(attempts, costs):
        usage = partial_usage(attempt.error)
        if attempt.error is None or not (usage.input_tokens or usage.output_tokens):
            continue
        model_id = model_and_price(services, plan, attempt.backend)[0]
        _record(services, f"{request_id}#failed-{uuid.uuid4().hex[:8]}", tenant, model_id, attempt.backend, usage, cost, trace_id)


# ---------- POST /v1/invoke ----------

def split_tools(tools: list[Any] | None) -> tuple[list[str], list[dict[str, Any]]]:
    """The request's `tools`: built-in names and declared client tools."""
    names = [t for t in tools or [] if isinstance(t, str)]
    declared = [t if isinstance(t, dict) else t.model_dump() for t in tools or [] if not isinstance(t, str)]
    return names, declared


def steps_since_last_prompt(messages: list[dict[str, Any]]) -> int:
    """Model calls already made in the current exchange of a stateless conversation (its assistant turns
    since the last user text), so the step limit spans client tool round trips there too."""
    steps = 0
    for message in reversed(messages):
        if message["role"] == "assistant":
            steps += 1
        elif any("text" in block for block in message["content"]):
            break
    return steps


def invoke(services: Services, tenant: Tenant, request: InvokeRequest, trace_id: str, request_id: str | None = None,
           deadline: Deadline | None = None) -> dict[str, Any]:
    if request.conversation_id or request.store:
        return _invoke_conversation(services, tenant, request, trace_id, request_id, deadline)
    if request.messages is not None:
        messages = to_converse([m.model_dump() for m in request.messages])
        spent = Spent(steps=steps_since_last_prompt(messages))
    else:
        messages, spent = [user_text(request.prompt or "")], Spent()
    server_tools, client_tools = split_tools(request.tools)
    check_tools(services, server_tools)  # before screening: the cheap refusal first
    exchange = Exchange(screen_messages(services, tenant, trace_id, messages), request.system, request.model, request.max_tokens,
                        server_tools, client_tools, spent=spent)
    outcome = run_exchange(services, tenant, exchange, trace_id, request_id, deadline)
    return _invoke_response(outcome, trace_id, None)


def _invoke_conversation(services: Services, tenant: Tenant, request: InvokeRequest, trace_id: str,
                         request_id: str | None, deadline: Deadline | None) -> dict[str, Any]:
    settings, store = services.settings, services.conversations
    now = datetime.now(timezone.utc)
    expires_at = int(now.timestamp()) + settings.conversations.ttl_s
    if request.conversation_id:
        conversation = store.get(tenant.tenant, request.conversation_id)
        if conversation is None:
            raise NotFound("No such conversation.", {"conversation_id": request.conversation_id})
        stored = [message for turn in store.turns(tenant.tenant, request.conversation_id) for message in turn.messages]
        history, screened_as = screened_history(services, tenant, trace_id, conversation, stored, settings.conversations.window_tokens)
    else:
        conversation = Conversation(tenant.tenant, new_conversation_id(), now.isoformat(), now.isoformat(), expires_at)
        history, screened_as = [], history_stamp(services, tenant, settings.conversations.window_tokens)
    system = request.system if request.system is not None else conversation.system
    tools = [t if isinstance(t, str) else t.model_dump() for t in request.tools] if request.tools is not None else conversation.tools
    server_tools, client_tools = split_tools(tools)
    check_tools(services, server_tools)
    new_user, spent = _next_user_message(services, tenant, trace_id, request, conversation.pending)
    sent, dropped = fit_window(merge_roles(history + [new_user]), system, settings.conversations.window_tokens)
    if dropped:
        logger.info("conversation.window", extra={"trace_id": trace_id, "tenant": tenant.tenant, "dropped_messages": dropped,
                                                  "conversation_id": conversation.conversation_id})
    outcome = run_exchange(services, tenant, Exchange(sent, system, request.model, request.max_tokens, server_tools, client_tools,
                                                      spent=spent), trace_id, request_id, deadline)
    result = outcome.result
    turn = Turn(conversation.turns + 1, [new_user, *result.messages], result.usage, result.cost_usd, result.stop_reason,
                outcome.model_id, outcome.request_id, now.isoformat())
    pending = None
    if result.stop_reason == TOOL_USE:
        pending = {"tool_uses": result.pending, "settled": result.settled, "steps": result.steps,
                   "cost_usd": str(spent.cost_usd + (result.cost_usd or Decimal(0)))}
    after = conversation.after(turn, now.isoformat(), expires_at, pending, system, tools, screened_as)
    if not request.conversation_id:
        store.create(conversation)
    store.append(conversation, after, turn)
    return _invoke_response(outcome, trace_id, after)


def _next_user_message(services: Services, tenant: Tenant, trace_id: str, request: InvokeRequest,
                       pending: dict[str, Any] | None) -> tuple[dict[str, Any], Spent]:
    """The user message this request adds: the caller's tool results, or a new prompt (which answers
    any calls still pending with an error, as Converse needs every toolUse answered)."""
    if request.tool_results is not None:
        expected = [use["toolUseId"] for use in (pending or {}).get("tool_uses", [])]
        given = [result.tool_use_id for result in request.tool_results]
        if sorted(given) != sorted(expected):
            raise ValidationFailed("tool_results must answer exactly the pending tool calls of this conversation.",
                                   {"field": "tool_results", "pending": expected})
        answered = screen_messages(services, tenant, trace_id, [{"role": "user", "content": [
            tool_result_block(r.tool_use_id, r.content, r.is_error) for r in request.tool_results]}])[0]["content"]
        assert pending is not None  # expected is non-empty
        return ({"role": "user", "content": [*pending["settled"], *answered]},
                Spent(int(pending["steps"]), Decimal(pending["cost_usd"])))
    asked = screen_messages(services, tenant, trace_id, [user_text(request.prompt or "")])[0]["content"]
    abandoned = [tool_result_block(use["toolUseId"], "No result: the caller sent a new message instead.", True)
                 for use in (pending or {}).get("tool_uses", [])]
    return {"role": "user", "content": [*(pending or {}).get("settled", []), *abandoned, *asked]}, Spent()


def _invoke_response(outcome: ExchangeOutcome, trace_id: str, conversation: Conversation | None) -> dict[str, Any]:
    result = outcome.result
    added = result.messages + ([{"role": "user", "content": result.settled}] if result.settled else [])
    summary = None
    if conversation is not None:
        cost = conversation.total_cost()
        summary = {"conversation_id": conversation.conversation_id, "turns": conversation.turns, "usage": conversation.usage.model_dump(),
                   "cost_usd": float(cost) if cost is not None else None}
    return InvokeResponse(
        output=result.output,
        model=outcome.model_id,
        backend=outcome.backend,  # type: ignore[arg-type]
        stop_reason=result.stop_reason,
        usage=result.usage.model_dump(),  # type: ignore[arg-type]
        cost_usd=float(result.cost_usd) if result.cost_usd is not None else None,
        tool_calls=[call.public() for call in result.tool_calls],  # type: ignore[misc]
        client_tool_calls=[{"id": u["toolUseId"], "name": u["name"], "input": u.get("input")} for u in result.pending],  # type: ignore[misc]
        messages=to_public(added),  # type: ignore[arg-type]
        conversation=summary,  # type: ignore[arg-type]
        steps=result.steps,
        trace_id=trace_id,
        request_id=outcome.request_id,
    ).model_dump()


def _record(services: Services, record_id: str, tenant: Tenant, model_id: str, backend: str, usage: Usage,
            cost: Decimal | None, trace_id: str) -> bool:
    entry = LedgerEntry(
        request_id=record_id, tenant=tenant.tenant, model=model_id, backend=backend, kind="invoke",
        usage=usage, cost_usd=cost, catalog_version=services.catalog.version,
        trace_id=trace_id, created_at=datetime.now(timezone.utc),
    )
    # Never raises: the model already answered and was paid for (a retry would pay again).
    return services.meter.record(entry) == "written"


def _emit(tenant: Tenant, model_id: str, backend: str, trace_id: str, request_id: str, usage: Usage,
          cost: Decimal | None, stop_reason: str, tool_calls: int, latency_ms: float, ledger_written: bool) -> None:
    logger.info("invoke.completed", extra={
        "trace_id": trace_id, "tenant": tenant.tenant, "model": model_id, "backend": backend, "request_id": request_id,
        "stop_reason": stop_reason, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cost_usd": str(cost) if cost is not None else None, "priced": cost is not None,
        "tool_calls": tool_calls, "latency_ms": round(latency_ms, 2), "ledger_written": ledger_written,
    })
    if cost is None:
        logger.warning("meter.unpriced_model", extra={"trace_id": trace_id, "model": model_id})
        metrics.add_metric(name="UnpricedCalls", unit="Count", value=1)
    metrics.add_metric(name="InvokeLatency", unit="Milliseconds", value=latency_ms)
    metrics.add_metric(name="InputTokens", unit="Count", value=usage.input_tokens)
    metrics.add_metric(name="OutputTokens", unit="Count", value=usage.output_tokens)
    metrics.add_metric(name="CostUSD", unit="None", value=float(cost or 0))
    metrics.add_metric(name="ToolCalls", unit="Count", value=tool_calls)
