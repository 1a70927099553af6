"""The cost report: totals, projection, break-even and recommendation, rendered for ops.

`summarise` and the renderers are pure; `build_report` reads the daily aggregates at the edge.
"""
from __future__ import annotations

import html
import json
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Callable, Iterable

from ..defaults import DEFAULT_BEDROCK_MODEL
from .catalog import PriceCatalog, TokenPrice
from .planning import Scenario, analyse

DAYS_PER_MONTH = Decimal("30.4")
_NO_PRICE = TokenPrice(input_per_mtok=Decimal(0), output_per_mtok=Decimal(0), source="-", as_of="-", kind="local")
_TOKEN_COUNTERS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
_COUNTERS = ("calls", *_TOKEN_COUNTERS, "cost_usd", "unpriced_calls", "gpu_seconds")


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
        slot = folded.setdefault(key, _blank())
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
    return [{"day": k[0], "tenant": k[1], "backend": k[2], "model": k[3], **v} for k, v in folded.items()]


def summarise(rows: Iterable[dict[str, Any]], days: list[str]) -> dict[str, Any]:
    totals = _blank()
    by: dict[str, dict[str, dict[str, Decimal]]] = {dim: defaultdict(_blank) for dim in ("model", "backend", "tenant", "day")}
    by_day_model: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    by_series: dict[tuple[str, str, str], dict[str, Decimal]] = defaultdict(_blank)
    unpriced_models: set[str] = set()
    for row in rows:
        _add(totals, row)
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
    }


def _jsonable(counters: dict[str, Decimal]) -> dict[str, str]:
    return {name: (f"{value:.6f}" if name == "cost_usd" else f"{value:.0f}" if name != "gpu_seconds" else f"{value:.1f}")
            for name, value in counters.items()}


def scenario_from_summary(summary: dict[str, Any], model: str, ops_ready: bool, daily_cv: Decimal) -> Scenario:
    """The projected month as a planning scenario: volume and token mix as metered (cache tokens included)."""
    mix = summary.get("mix") or {}
    has_traffic = Decimal(summary["projected_month"]["tokens"]) > 0
    share = (lambda name, default: Decimal(mix.get(name, default)) if has_traffic else Decimal(default))
    return Scenario(tokens_per_month=Decimal(summary["projected_month"]["tokens"]), output_share=share("output_tokens", "0.25"),
                    bedrock_model=model, daily_cv=daily_cv, ops_ready=ops_ready,
                    cache_read_share=share("cache_read_tokens", "0"), cache_write_share=share("cache_write_tokens", "0"),
                    cache_write_1h_share=share("cache_write_1h_tokens", "0"))


def with_breakeven(summary: dict[str, Any], catalog: PriceCatalog, ops_ready: bool, daily_cv: Decimal,
                   bedrock_model: str | None = None) -> dict[str, Any]:
    """Add the break-even analysis for the projected month, its sensitivity, and cost curves for the chart."""
    from dataclasses import replace

    from .planning import sensitivity

    top_bedrock = max(((m, billed_tokens(v)) for m, v in summary["by_model"].items()
                       if (catalog.token_price(m) or _NO_PRICE).kind == "text"), key=lambda x: x[1], default=(None, 0))[0]
    model = bedrock_model or top_bedrock or DEFAULT_BEDROCK_MODEL
    scenario = scenario_from_summary(summary, model, ops_ready, daily_cv)
    analysis = analyse(scenario, catalog)
    curve = []
    for exponent in range(14, 42):  # 10^7 .. 10^10.25 tokens/month in quarter-decades
        volume = Decimal(10) ** (Decimal(exponent) / 4)
        point = analyse(replace(scenario, tokens_per_month=volume), catalog)
        curve.append({"tokens": f"{volume:.0f}", "bedrock_usd": point["bedrock_monthly_usd"], "self_hosted_usd": point["self_hosted_monthly_usd"]})
    return {**summary, "breakeven": analysis, "sensitivity": sensitivity(scenario, catalog), "curve": curve, "catalog_version": catalog.version}


def budget_status(limits: dict[str, Decimal], month_to_date: dict[str, Decimal], today: date) -> list[dict[str, str]]:
    """Per tenant with a budget: spend so far this month, burn (share of the budget used), and the
    month-end projection at this month's daily rate."""
    import calendar

    days_in_month = calendar.monthrange(today.year, today.month)[1]
    rows = []
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
                 budgets: tuple[dict[str, Decimal], dict[str, Decimal]] | None = None) -> dict[str, Any]:
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


# ---------- rendering ----------

def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=True)


def _volume(tokens: str | None) -> str:
    return "and above" if tokens is None else f"{int(tokens) / 1e9:,.3f}B"


def breakeven_lines(ranges: dict[str, Any]) -> list[str]:
    """Every range where self-hosting is cheaper, and where Bedrock is cheaper again (an extra instance's step)."""
    if not ranges["self_hosted_cheaper"]:
        return [f"self-hosted is never cheaper up to {int(ranges['searched_up_to']) / 1e9:,.0f}B tokens/month"]
    lines = ["self-hosted cheaper (tokens/month): " + ", ".join(
        f"{_volume(r['from'])} {'and above' if r['to'] is None else 'to ' + _volume(r['to'])}" for r in ranges["self_hosted_cheaper"])]
    if ranges["bedrock_cheaper_again"]:
        lines.append("Bedrock cheaper again: " + ", ".join(f"{_volume(r['from'])} to {_volume(r['to'])}" for r in ranges["bedrock_cheaper_again"]))
    return lines


def render_table(report: dict[str, Any]) -> str:
    def money(value: str) -> str:
        return f"${Decimal(value):,.2f}"

    lines = [f"Crossover cost report {report['period']['from']} .. {report['period']['to']} ({report['period']['days']} days, catalog {report['catalog_version']})", ""]
    lines.append(f"{'tenant':<16} {'backend':<12} {'model':<46} {'calls':>9} {'tokens':>14} {'cost':>12}")
    for row in report.get("by_series", []):
        lines.append(f"{row['tenant'][:16]:<16} {row['backend'][:12]:<12} {row['model'][:46]:<46} {int(row['calls']):>9,} "
                     f"{int(billed_tokens(row)):>14,} {money(row['cost_usd']):>12}")
    totals = report["totals"]
    lines.append(f"{'TOTAL':<16} {'':<12} {'':<46} {int(totals['calls']):>9,} {int(billed_tokens(totals)):>14,} {money(totals['cost_usd']):>12}")
    lines.append("(tokens: input + output + cache reads + cache writes)")
    lines.append("")
    lines.append("by tenant: " + ", ".join(f"{t} {money(v['cost_usd'])}" for t, v in report["by_tenant"].items()))
    for row in report.get("unpriced", []):
        lines.append(f"UNPRICED (cost unknown, not $0): {row['tenant']} {row['backend']} {row['model']}: {int(row['calls']):,} call(s)")
    for row in report.get("budgets", []):
        lines.append(f"budget {row['tenant']}: {money(row['month_to_date_usd'])} of {money(row['limit_usd'])} "
                     f"({Decimal(row['burn']):.0%} burnt), month-end projection {money(row['projected_month_end_usd'])} [{row['status']}]")
    be = report["breakeven"]
    lines += ["", f"projected month: {int(report['projected_month']['tokens']):,} tokens, {money(report['projected_month']['cost_usd'])}",
              f"break-even vs {be['self_hosted']['model']} on {be['self_hosted']['instance']}: Bedrock {money(be['bedrock_monthly_usd'])}/month, "
              f"self-hosted {money(be['self_hosted_monthly_usd'])}/month, first break-even at "
              + (f"{int(be['breakeven_tokens_per_month']):,} tokens/month" if be["breakeven_tokens_per_month"] else "never"),
              f"compared pair: {be['pair']['bedrock']} vs {be['pair']['self_hosted']} ({be['pair']['why']})",
              *breakeven_lines(be["breakeven_ranges"]),
              f"today's position: self-hosted {'cheaper' if be['self_hosted_cheaper_now'] else 'dearer'} at the projected volume"]
    if report.get("sensitivity"):
        lines.append("sensitivity (traffic x GPU price -> recommendation, self-hosted cheaper?):")
        for row in report["sensitivity"]:
            lines.append(f"  traffic x{row['traffic_factor']:<4} GPU x{row['gpu_price_factor']:<4} {row['recommendation']:<22} "
                         f"{'yes' if row['self_hosted_cheaper'] else 'no'}  Bedrock {money(row['bedrock_monthly_usd'])} vs {money(row['self_hosted_monthly_usd'])}")
    lines.append(f"recommendation: {report['recommendation']['current']} (today's numbers say {report['recommendation']['today']})")
    lines += [f"  - {reason}" for reason in report["recommendation"]["reasons"]]
    return "\n".join(lines)


def _html_table(headers: list[str], rows: list[list[str]], ident: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table id="{ident}"><tr>{head}</tr>{body}</table>'


def render_html(report: dict[str, Any]) -> str:
    """A self-contained page (inline CSS and SVG, no scripts, nothing fetched)."""
    from .charts import bar_chart, curve_chart, curve_chart_data, daily_chart_data

    be = report["breakeven"]
    series = _html_table(["tenant", "backend", "model", "calls", "tokens", "cost"],
                         [[r["tenant"], r["backend"], r["model"], f"{int(r['calls']):,}", f"{int(billed_tokens(r)):,}",
                           f"${Decimal(r['cost_usd']):,.4f}"] for r in report.get("by_series", [])], "by-series")
    days = _html_table(["day", "calls", "tokens", "cost", "unpriced calls"],
                       [[d["day"], f"{int(d['calls']):,}", f"{int(billed_tokens(d)):,}", f"${Decimal(d['cost_usd']):,.4f}",
                         f"{int(d['unpriced_calls']):,}"] for d in report["by_day"]], "by-day")
    budgets = _html_table(["tenant", "budget", "month to date", "burn", "month-end projection", "status"],
                          [[b["tenant"], f"${Decimal(b['limit_usd']):,.2f}", f"${Decimal(b['month_to_date_usd']):,.2f}",
                            f"{Decimal(b['burn']):.0%}", f"${Decimal(b['projected_month_end_usd']):,.2f}", b["status"]]
                           for b in report.get("budgets", [])], "budgets") if report.get("budgets") else "<p>No tenant has a monthly budget.</p>"
    unpriced = _html_table(["tenant", "backend", "model", "unpriced calls"],
                           [[u["tenant"], u["backend"], u["model"], u["calls"]] for u in report.get("unpriced", [])], "unpriced") \
        if report.get("unpriced") else "<p>Every call was priced.</p>"
    sensitivity = _html_table(["traffic", "GPU price", "Bedrock $/month", "self-hosted $/month", "self-hosted cheaper", "recommendation"],
                              [[f"x{r['traffic_factor']}", f"x{r['gpu_price_factor']}", f"${Decimal(r['bedrock_monthly_usd']):,.0f}",
                                f"${Decimal(r['self_hosted_monthly_usd']):,.0f}", "yes" if r["self_hosted_cheaper"] else "no", r["recommendation"]]
                               for r in report.get("sensitivity", [])], "sensitivity")
    ranges = "".join(f"<li>{html.escape(line)}</li>" for line in breakeven_lines(be["breakeven_ranges"]))
    reasons = "".join(f"<li>{html.escape(r)}</li>" for r in report["recommendation"]["reasons"])
    pair = be["pair"]
    daily = bar_chart(daily_chart_data(report["daily_cost_by_series"]))
    curve = curve_chart(curve_chart_data(report["curve"], be["breakeven_ranges"], Decimal(report["projected_month"]["tokens"])))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Crossover cost report {html.escape(report['period']['from'])} to {html.escape(report['period']['to'])}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;color:#111;max-width:1000px}} table{{border-collapse:collapse;margin:.5em 0 1.5em}} td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}} td:first-child,td:nth-child(2),td:nth-child(3){{text-align:left}} .warn{{color:#b91c1c}} .rec{{font-size:18px}} svg{{display:block;margin:1em 0}}</style></head>
<body><h1>Crossover cost report</h1>
<p>{html.escape(report['period']['from'])} to {html.escape(report['period']['to'])} ({report['period']['days']} days), price catalog {html.escape(report['catalog_version'])}.</p>
<p class="rec">Recommendation: <strong id="recommendation">{html.escape(report['recommendation']['current'])}</strong> (today's numbers: {html.escape(report['recommendation']['today'])})</p>
<ul>{reasons}</ul>
<p>Projected month: {int(report['projected_month']['tokens']):,} tokens, ${Decimal(report['projected_month']['cost_usd']):,.2f}.
Bedrock ${Decimal(be['bedrock_monthly_usd']):,.2f}/month vs self-hosted ({html.escape(be['self_hosted']['model'])} on {html.escape(be['self_hosted']['instance'])}, {be['self_hosted']['instances']} instance(s)) ${Decimal(be['self_hosted_monthly_usd']):,.2f}/month;
self-hosted is <strong id="position">{'cheaper' if be['self_hosted_cheaper_now'] else 'dearer'}</strong> at today's volume.</p>
<p id="pair">Compared pair: {html.escape(pair['bedrock'])} against {html.escape(pair['self_hosted'])}{'' if pair.get('equivalent_quality') is not False else ' <strong class="warn">(not of equivalent quality)</strong>'}: {html.escape(pair['why'])}</p>
<ul id="ranges">{ranges}</ul>
{daily}
{curve}
<h2>Sensitivity (traffic ±50%, GPU price ±30%)</h2>{sensitivity}
<h2>Budgets</h2>{budgets}
<h2>Unpriced calls (cost unknown, not $0)</h2>{unpriced}
<h2>By tenant, backend and model</h2>{series}
<h2>By day</h2>{days}
</body></html>"""
