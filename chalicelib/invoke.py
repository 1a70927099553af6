"""The synchronous invoke path: validate, screen, route, run the agent, meter, answer."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .agent.loop import AgentLimits, AgentResult, run_agent
from .api_schemas import InvokeRequest, InvokeResponse
from .auth import Tenant
from .errors import CrossoverError, ModelTimeout, ModelUnavailable, Throttled, ValidationFailed
from .meter.ledger import LedgerEntry
from .meter.catalog import TokenPrice
from .meter.pricing import Usage, price_usage
from .observability import logger, metrics
from .routing import RouteDecision, Workload, choose_backend
from .services import Services
from .timing import Deadline


def check_request(services: Services, request: InvokeRequest) -> None:
    """Cheap checks before any expensive work (the size limit is the tenant's policy, checked by screening)."""
    unknown = sorted(set(request.tools) - set(services.tools.names()))
    if unknown:
        raise ValidationFailed("Unknown tool(s) requested.", {"field": "tools", "unknown": unknown, "available": services.tools.names()})


def worst_case_cost(prompt: str, system: str | None, limits: AgentLimits, price: TokenPrice | None) -> Decimal:
    """An upper bound of what the request can cost, reserved against the tenant's budget.

    A token is at least one byte of UTF-8, so bytes bound the input tokens of one step; the loop
    stops once the request passes `max_cost_usd`, so it can overshoot by at most one step.
    Unpriced models reserve the per-request cap.
    """
    if price is None:
        return limits.max_cost_usd
    input_bound = len(prompt.encode()) + len((system or "").encode())
    one_step = price_usage(Usage(input_tokens=input_bound, output_tokens=limits.max_tokens), price) or Decimal(0)
    return min(one_step * limits.max_steps, limits.max_cost_usd + one_step)


def route_for(services: Services, tenant: Tenant, workload: Workload, trace_id: str) -> RouteDecision:
    """Choose the backend and log why (every routing decision is audited)."""
    mode = services.screening.policies.routing_mode_for(tenant.tenant) or services.settings.routing_mode
    # Jobs always have the Batch GPU path; sync calls need a configured self-hosted endpoint.
    available = workload == "job" or "self_hosted" in services.backends
    decision = choose_backend(mode, workload, services.recommendation() if mode == "auto" else None,
                              available, services.breakers["self_hosted"].allows())
    logger.info("routing.decision", extra={"trace_id": trace_id, "tenant": tenant.tenant, "workload": workload,
                                           "mode": mode, "backend": decision.backend, "reason": decision.reason})
    return decision


def invoke(services: Services, tenant: Tenant, request: InvokeRequest, trace_id: str, request_id: str | None = None,
           deadline: Deadline | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    settings = services.settings
    check_request(services, request)
    verdict = services.screening.require_allowed(request.prompt, tenant.tenant, trace_id, "invoke")
    prompt = verdict.redacted_text or request.prompt  # PII redacted when the tenant's policy says so
    if request.system:
        services.screening.require_allowed(request.system, tenant.tenant, trace_id, "invoke.system")

    limits = AgentLimits(
        max_steps=settings.max_agent_steps,
        max_cost_usd=Decimal(str(settings.max_request_cost_usd)),
        max_tokens=min(request.max_tokens or settings.max_output_tokens, settings.max_output_tokens),
        tool_timeout_s=settings.tool_timeout_s,
    )
    bedrock_model = request.model or settings.default_model
    # Reserve at Bedrock's price: a self-hosted call may fall back to it.
    reservation = services.budgets.reserve(tenant.tenant, worst_case_cost(prompt, request.system, limits, services.catalog.token_price(bedrock_model)))
    request_id = request_id or f"req-{uuid.uuid4().hex}"
    route = route_for(services, tenant, "sync", trace_id)
    guard = services.screening.tool_result_guard(tenant.tenant, trace_id)
    settled = False

    def attempt(backend_name: str) -> tuple[AgentResult, str, str]:
        nonlocal settled
        backend = services.backends[backend_name]
        model_id = settings.self_hosted_model if backend_name == "self_hosted" else bedrock_model
        token_price = services.catalog.self_hosted_price(model_id) if backend_name == "self_hosted" else services.catalog.token_price(model_id)
        try:
            result = run_agent(backend, model_id, prompt, request.system, request.tools, services.tools, limits,
                               price=lambda usage: price_usage(usage, token_price), guard_tool_result=guard, deadline=deadline)
        except CrossoverError as exc:
            partial: Usage = getattr(exc, "partial_usage", Usage())
            if partial.input_tokens or partial.output_tokens:
                # The steps that ran were billed: record them under their own id, so a retry (or the
                # fallback) under the same request id is recorded too.
                services.budgets.settle(reservation, price_usage(partial, token_price))
                settled = True
                _record(services, f"{request_id}#failed-{uuid.uuid4().hex[:8]}", tenant, model_id, backend_name, partial,
                        price_usage(partial, token_price), trace_id)
            raise
        return result, backend_name, model_id

    try:
        try:
            result, backend_name, model_id = attempt(route.backend)
            if route.backend == "self_hosted":
                services.breakers["self_hosted"].record(True)
        except (ModelUnavailable, ModelTimeout, Throttled) as exc:
            if route.backend != "self_hosted":
                raise
            services.breakers["self_hosted"].record(False)
            logger.warning("routing.fallback", extra={"trace_id": trace_id, "tenant": tenant.tenant, "from": "self_hosted",
                                                      "to": "bedrock", "reason": exc.code})
            metrics.add_metric(name="SelfHostedFallbacks", unit="Count", value=1)
            result, backend_name, model_id = attempt("bedrock")
    except CrossoverError:
        if not settled:
            services.budgets.settle(reservation, Decimal(0))
        raise
    if not settled:
        services.budgets.settle(reservation, result.cost_usd)
    written = _record(services, request_id, tenant, model_id, backend_name, result.usage, result.cost_usd, trace_id)
    latency_ms = (time.perf_counter() - started) * 1000
    _emit(tenant, model_id, backend_name, trace_id, request_id, result.usage, result.cost_usd, result.stop_reason,
          len(result.tool_calls), latency_ms, written)
    return InvokeResponse(
        output=result.output,
        model=model_id,
        backend=backend_name,  # type: ignore[arg-type]
        stop_reason=result.stop_reason,
        usage=result.usage.model_dump(),  # type: ignore[arg-type]
        cost_usd=float(result.cost_usd) if result.cost_usd is not None else None,
        tool_calls=[call.public() for call in result.tool_calls],  # type: ignore[misc]
        steps=result.steps,
        trace_id=trace_id,
        request_id=request_id,
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
