"""The cost report's numbers: totals, projection, budgets, break-even and recommendation, as plain data.

`build_report` is a pure function from the ledger's daily aggregates (read through an injected callable)
to a `CostReport`: JSON-ready dicts whose money and volumes are decimal strings. The API returns it as is;
`meter/render.py` formats the same object as the CLI table, JSON and the HTML page with its charts, so
every surface shows the same numbers. `meter.service.report_for` wires the ledger in at the edge.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Callable, Iterable

from typing_extensions import TypedDict

from ..defaults import DEFAULT_BEDROCK_MODEL
from .breakeven import Ranges
from .catalog import PriceCatalog, TokenPrice
from .ledger import gpu_capacity_counters
from .planning import Analysis, FleetConfig, Scenario, SensitivityRow, analyse, with_measured_spot

__all__ = ["CostReport", "Ranges", "build_report", "summarise", "with_breakeven", "aggregate_ledger_rows", "budget_status",
           "billed_tokens", "day_range"]

DAYS_PER_MONTH = Decimal("30.4")
_NO_PRICE = TokenPrice(input_per_mtok=Decimal(0), output_per_mtok=Decimal(0), source="-", as_of="-", kind="local")
_TOKEN_COUNTERS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
_COUNTERS = ("calls", *_TOKEN_COUNTERS, "cost_usd", "unpriced_calls", "gpu_seconds")
# GPU attempts by capacity (ledger aggregates): the measured spot share of the break-even's fleet. A row without
# the unknown counters predates them and reads as 0 unknown (ledger.gpu_capacity_counters), so old reports hold.
_CAPACITY = ("gpu_attempts", "gpu_instance_seconds", "gpu_spot_seconds", "gpu_unknown_attempts", "gpu_unknown_seconds")


class Counters(TypedDict):
    """Sums over ledger rows; `tokens` is every billed token (input, output, cache reads and writes)."""

    calls: str
    input_tokens: str
    output_tokens: str
    cache_read_tokens: str
    cache_write_tokens: str
    cache_write_1h_tokens: str
    tokens: str
    cost_usd: str
    unpriced_calls: str
    gpu_seconds: str


class DayCounters(Counters):
    day: str


class SeriesCounters(Counters):
    """One tenant x backend x model: a model split between Bedrock and self-hosted has a row for each."""

    tenant: str
    backend: str
    model: str


Period = TypedDict("Period", {"from": str, "to": str, "days": int})


class Projection(TypedDict):
    tokens: str
    cost_usd: str


class UnpricedRow(TypedDict):
    tenant: str
    backend: str
    model: str
    calls: str


class CurvePoint(TypedDict):
    tokens: str
    bedrock_usd: str
    self_hosted_usd: str


class BudgetRow(TypedDict):
    tenant: str
    limit_usd: str
    month_to_date_usd: str
    burn: str
    projected_month_end_usd: str
    status: str  # ok | at_risk | over


class RecommendationState(TypedDict):
    today: str
    reasons: list[str]
    current: str
    pending: str | None
    pending_days: int


class GpuCapacity(TypedDict):
    """GPU attempts metered in the window: count, instance-seconds, the part of known capacity (spot or on-demand;
    the spot share is measured over it) and the spot part, and how many attempts were of unknown capacity."""

    attempts: str
    instance_seconds: str
    spot_seconds: str
    known_seconds: str
    unknown_attempts: str


class Summary(TypedDict):
    period: Period
    totals: Counters
    by_model: dict[str, Counters]
    by_backend: dict[str, Counters]
    by_tenant: dict[str, Counters]
    by_day: list[DayCounters]
    daily_cost_by_series: dict[str, dict[str, str]]  # day -> "backend:model" -> $
    projected_month: Projection
    output_share: str
    mix: dict[str, str]  # token counter -> share of billed tokens
    daily_tokens: list[str]
    unpriced_models: list[str]
    by_series: list[SeriesCounters]
    unpriced: list[UnpricedRow]
    gpu_capacity: GpuCapacity


class CostReport(Summary):
    """Everything any surface shows. Built by `build_report`, rendered by `meter.render`."""

    breakeven: Analysis
    sensitivity: list[SensitivityRow]
    curve: list[CurvePoint]
    catalog_version: str
    recommendation: RecommendationState
    budgets: list[BudgetRow]


def billed_tokens(counters: dict[str, Any]) -> Decimal:
    """Every billed token of a row: input, output and cache reads and writes (what volume and break-even count)."""
    return sum((Decimal(counters.get(name) or 0) for name in _TOKEN_COUNTERS), Decimal(0))


def day_range(days: int, today: date) -> list[str]:
    return [(today - timedelta(days=offset)).isoformat() for offset in range(days - 1, -1, -1)]


def _blank() -> dict[str, Decimal]:
    return {name: Decimal(0) for name in _COUNTERS}


def _add(into: dict[str, Decimal], row: dict[str, Any]) -> None:
    for name in _COUNTERS:
        value = row.get(name)
        if value:
            into[name] += value if isinstance(value, Decimal) else Decimal(value)


def aggregate_ledger_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold raw ledger records into daily aggregate rows (day x tenant x backend x model).

    The meter keeps these aggregates live; this rebuild serves reconciliation and the benchmark.
    """
    folded: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["day"], row["tenant"], row["backend"], row["model"])
        slot = folded.setdefault(key, {**_blank(), **{name: Decimal(0) for name in _CAPACITY}})
        slot["calls"] += 1
        for name in _TOKEN_COUNTERS:
            slot[name] += row.get(name) or 0
        cost = row.get("cost_usd")
        if cost is None:
            slot["unpriced_calls"] += 1
        else:
            slot["cost_usd"] += cost
        if row.get("gpu_seconds"):
            slot["gpu_seconds"] += row["gpu_seconds"]
        if row.get("instance_seconds") is not None:  # a GPU attempt (ledger.LedgerEntry.capacity_counters)
            for name, value in gpu_capacity_counters(row.get("capacity"), row["instance_seconds"]).items():
                slot[name] += value
    return [{"day": k[0], "tenant": k[1], "backend": k[2], "model": k[3], **v} for k, v in folded.items()]


def summarise(rows: Iterable[dict[str, Any]], days: list[str]) -> Summary:
    totals = _blank()
    by: dict[str, dict[str, dict[str, Decimal]]] = {dim: defaultdict(_blank) for dim in ("model", "backend", "tenant", "day")}
    by_day_model: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    by_series: dict[tuple[str, str, str], dict[str, Decimal]] = defaultdict(_blank)
    unpriced_models: set[str] = set()
    capacity = {name: Decimal(0) for name in _CAPACITY}
    for row in rows:
        _add(totals, row)
        for name in _CAPACITY:
            capacity[name] += Decimal(row.get(name) or 0)
        _add(by_series[(str(row["tenant"]), str(row["backend"]), str(row["model"]))], row)
        for dim in by:
            _add(by[dim][str(row[dim])], row)
        by_day_model[row["day"]][f"{row['backend']}:{row['model']}"] += Decimal(row.get("cost_usd") or 0)
        if row.get("unpriced_calls"):
            unpriced_models.add(row["model"])
    daily_tokens = [billed_tokens(by["day"][day]) if day in by["day"] else Decimal(0) for day in days]
    tokens = billed_tokens(totals)
    return {
        "period": {"from": days[0], "to": days[-1], "days": len(days)},
        "totals": _jsonable(totals),
        "by_model": {k: _jsonable(v) for k, v in sorted(by["model"].items())},
        "by_backend": {k: _jsonable(v) for k, v in sorted(by["backend"].items())},
        "by_tenant": {k: _jsonable(v) for k, v in sorted(by["tenant"].items())},
        "by_day": [{"day": day, **_jsonable(by["day"].get(day, _blank()))} for day in days],
        "daily_cost_by_series": {day: {k: f"{v:.6f}" for k, v in by_day_model.get(day, {}).items()} for day in days},
        "projected_month": {
            "tokens": f"{tokens / len(days) * DAYS_PER_MONTH:.0f}",
            "cost_usd": f"{totals['cost_usd'] / len(days) * DAYS_PER_MONTH:.2f}",
        },
        "output_share": f"{(totals['output_tokens'] / tokens) if tokens else Decimal('0.25'):.3f}",
        "mix": {name: f"{(totals[name] / tokens) if tokens else Decimal(0):.4f}" for name in _TOKEN_COUNTERS},
        "daily_tokens": [str(t) for t in daily_tokens],
        "unpriced_models": sorted(unpriced_models),
        # per tenant x backend x model: a model split between Bedrock and self-hosted shows both rows
        "by_series": [{"tenant": t, "backend": b, "model": m, **_jsonable(v)} for (t, b, m), v in sorted(by_series.items())],
        "unpriced": [{"tenant": t, "backend": b, "model": m, "calls": f"{v['unpriced_calls']:.0f}"}
                     for (t, b, m), v in sorted(by_series.items()) if v["unpriced_calls"]],
        "gpu_capacity": {"attempts": f"{capacity['gpu_attempts']:.0f}", "instance_seconds": f"{capacity['gpu_instance_seconds']:.1f}",
                         "spot_seconds": f"{capacity['gpu_spot_seconds']:.1f}",
                         "known_seconds": f"{capacity['gpu_instance_seconds'] - capacity['gpu_unknown_seconds']:.1f}",
                         "unknown_attempts": f"{capacity['gpu_unknown_attempts']:.0f}"},
    }


def _jsonable(counters: dict[str, Decimal]) -> Any:
    """Counters as decimal strings (Counters), with the billed-token total every surface shows."""
    return {**{name: (f"{value:.6f}" if name == "cost_usd" else f"{value:.0f}" if name != "gpu_seconds" else f"{value:.1f}")
               for name, value in counters.items()}, "tokens": f"{billed_tokens(counters):.0f}"}


def scenario_from_summary(summary: Summary, model: str, ops_ready: bool, daily_cv: Decimal) -> Scenario:
    """The projected month as a planning scenario: volume and token mix as metered (cache tokens included)."""
    mix = summary.get("mix") or {}
    has_traffic = Decimal(summary["projected_month"]["tokens"]) > 0
    share = (lambda name, default: Decimal(mix.get(name, default)) if has_traffic else Decimal(default))
    return Scenario(tokens_per_month=Decimal(summary["projected_month"]["tokens"]), output_share=share("output_tokens", "0.25"),
                    bedrock_model=model, daily_cv=daily_cv, ops_ready=ops_ready,
                    cache_read_share=share("cache_read_tokens", "0"), cache_write_share=share("cache_write_tokens", "0"),
                    cache_write_1h_share=share("cache_write_1h_tokens", "0"))


def with_breakeven(summary: Summary, catalog: PriceCatalog, ops_ready: bool, daily_cv: Decimal,
                   bedrock_model: str | None = None) -> Any:
    """Add the break-even analysis for the projected month, its sensitivity, and cost curves for the chart."""
    from dataclasses import replace

    from .planning import sensitivity

    top_bedrock = max(((m, billed_tokens(v)) for m, v in summary["by_model"].items()
                       if (catalog.token_price(m) or _NO_PRICE).kind == "text"), key=lambda x: x[1], default=(None, 0))[0]
    model = bedrock_model or top_bedrock or DEFAULT_BEDROCK_MODEL
    scenario = scenario_from_summary(summary, model, ops_ready, daily_cv)
    measured = summary.get("gpu_capacity") or {}
    scenario = replace(scenario, fleet=with_measured_spot(  # the queue's real spot share when attempts ran, else the estimate
        FleetConfig.from_env(), catalog, int(Decimal(measured.get("attempts", "0"))),
        Decimal(measured.get("known_seconds", measured.get("instance_seconds", "0"))), Decimal(measured.get("spot_seconds", "0")),
        unknown_attempts=int(Decimal(measured.get("unknown_attempts", "0")))))
    analysis = analyse(scenario, catalog)
    curve: list[CurvePoint] = []
    for exponent in range(14, 42):  # 10^7 .. 10^10.25 tokens/month in quarter-decades
        volume = Decimal(10) ** (Decimal(exponent) / 4)
        point = analyse(replace(scenario, tokens_per_month=volume), catalog)
        curve.append({"tokens": f"{volume:.0f}", "bedrock_usd": point["bedrock_monthly_usd"], "self_hosted_usd": point["self_hosted_monthly_usd"]})
    return {**summary, "breakeven": analysis, "sensitivity": sensitivity(scenario, catalog), "curve": curve, "catalog_version": catalog.version}


def budget_status(limits: dict[str, Decimal], month_to_date: dict[str, Decimal], today: date) -> list[BudgetRow]:
    """Per tenant with a budget: spend so far this month, burn (share of the budget used), and the
    month-end projection at this month's daily rate."""
    import calendar

    days_in_month = calendar.monthrange(today.year, today.month)[1]
    rows: list[BudgetRow] = []
    for tenant in sorted(limits):
        limit, spent = limits[tenant], month_to_date.get(tenant, Decimal(0))
        projected = spent / today.day * days_in_month
        burn = spent / limit if limit > 0 else Decimal(0)
        state = "over" if spent >= limit else "at_risk" if projected > limit else "ok"
        rows.append({"tenant": tenant, "limit_usd": f"{limit:.2f}", "month_to_date_usd": f"{spent:.2f}", "burn": f"{burn:.3f}",
                     "projected_month_end_usd": f"{projected:.2f}", "status": state})
    return rows


def build_report(read_rows: Callable[[list[str]], Iterable[dict[str, Any]]], days: int, today: date, catalog: PriceCatalog,
                 ops_ready: bool, decision: dict[str, Any] | None = None,
                 budgets: tuple[dict[str, Decimal], dict[str, Decimal]] | None = None) -> CostReport:
    """The report for the `days` up to `today`: a pure function of the rows `read_rows` returns for those days."""
    from .breakeven import coefficient_of_variation

    window = day_range(days, today)
    summary = summarise(read_rows(window), window)
    cv = coefficient_of_variation([Decimal(t) for t in summary["daily_tokens"]])
    report = with_breakeven(summary, catalog, ops_ready, cv)
    report["recommendation"] = {"today": report["breakeven"]["recommendation"], "reasons": report["breakeven"]["reasons"],
                                "current": (decision or {}).get("current", report["breakeven"]["recommendation"]),
                                "pending": (decision or {}).get("pending"), "pending_days": (decision or {}).get("pending_days", 0)}
    report["budgets"] = budget_status(*budgets, today) if budgets else []
    return report
