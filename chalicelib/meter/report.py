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
    unpriced_models: set[str] = set()
    for row in rows:
        _add(totals, row)
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
    model = bedrock_model or top_bedrock or "anthropic.claude-3-sonnet-20240229-v1:0"
    scenario = scenario_from_summary(summary, model, ops_ready, daily_cv)
    analysis = analyse(scenario, catalog)
    curve = []
    for exponent in range(14, 42):  # 10^7 .. 10^10.25 tokens/month in quarter-decades
        volume = Decimal(10) ** (Decimal(exponent) / 4)
        point = analyse(replace(scenario, tokens_per_month=volume), catalog)
        curve.append({"tokens": f"{volume:.0f}", "bedrock_usd": point["bedrock_monthly_usd"], "self_hosted_usd": point["self_hosted_monthly_usd"]})
    return {**summary, "breakeven": analysis, "sensitivity": sensitivity(scenario, catalog), "curve": curve, "catalog_version": catalog.version}


def build_report(read_rows: Callable[[list[str]], Iterable[dict[str, Any]]], days: int, today: date, catalog: PriceCatalog,
                 ops_ready: bool, decision: dict[str, Any] | None = None) -> dict[str, Any]:
    from .breakeven import coefficient_of_variation

    window = day_range(days, today)
    summary = summarise(read_rows(window), window)
    cv = coefficient_of_variation([Decimal(t) for t in summary["daily_tokens"]])
    report = with_breakeven(summary, catalog, ops_ready, cv)
    report["recommendation"] = {"today": report["breakeven"]["recommendation"], "reasons": report["breakeven"]["reasons"],
                                "current": (decision or {}).get("current", report["breakeven"]["recommendation"]),
                                "pending": (decision or {}).get("pending"), "pending_days": (decision or {}).get("pending_days", 0)}
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
    lines.append(f"{'model':<46} {'backend':<12} {'calls':>9} {'input tok':>13} {'output tok':>13} {'cost':>12}")
    models_by_backend: dict[str, str] = {}
    for day_series in report["daily_cost_by_series"].values():
        for series in day_series:
            backend, model = series.split(":", 1)
            models_by_backend[model] = backend
    for model, row in report["by_model"].items():
        lines.append(f"{model[:46]:<46} {models_by_backend.get(model, '-'):<12} {int(row['calls']):>9,} {int(row['input_tokens']):>13,} "
                     f"{int(row['output_tokens']):>13,} {money(row['cost_usd']):>12}")
    totals = report["totals"]
    lines.append(f"{'TOTAL':<46} {'':<12} {int(totals['calls']):>9,} {int(totals['input_tokens']):>13,} {int(totals['output_tokens']):>13,} {money(totals['cost_usd']):>12}")
    lines.append("")
    lines.append("by tenant: " + ", ".join(f"{t} {money(v['cost_usd'])}" for t, v in report["by_tenant"].items()))
    if report["unpriced_models"]:
        lines.append("UNPRICED (cost unknown, not $0): " + ", ".join(report["unpriced_models"]))
    be = report["breakeven"]
    lines += ["", f"projected month: {int(report['projected_month']['tokens']):,} tokens, {money(report['projected_month']['cost_usd'])}",
              f"break-even vs {be['self_hosted']['model']} on {be['self_hosted']['instance']}: Bedrock {money(be['bedrock_monthly_usd'])}/month, "
              f"self-hosted {money(be['self_hosted_monthly_usd'])}/month, break-even at "
              + (f"{int(be['breakeven_tokens_per_month']):,} tokens/month" if be["breakeven_tokens_per_month"] else "never"),
              f"compared pair: {be['pair']['bedrock']} vs {be['pair']['self_hosted']} ({be['pair']['why']})",
              *breakeven_lines(be["breakeven_ranges"]),
              f"today's position: self-hosted {'cheaper' if be['self_hosted_cheaper_now'] else 'dearer'} at the projected volume",
              f"recommendation: {report['recommendation']['current']} (today's numbers say {report['recommendation']['today']})"]
    lines += [f"  - {reason}" for reason in report["recommendation"]["reasons"]]
    return "\n".join(lines)


_PALETTE = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d"]


def _bar_chart(report: dict[str, Any], width: int = 760, height: int = 260) -> str:
    days = list(report["daily_cost_by_series"])
    series = sorted({s for day in report["daily_cost_by_series"].values() for s in day})
    totals = [sum(Decimal(v) for v in report["daily_cost_by_series"][d].values()) for d in days]
    top = max(totals + [Decimal("0.000001")])
    left, bottom, plot_h = 60, height - 40, height - 70
    bar_w = (width - left - 20) / max(1, len(days))
    parts = [f'<svg class="chart" id="daily-spend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="Daily spend by model and backend">',
             f'<text x="{left}" y="16" font-size="13">Daily spend by backend:model (max ${top:.4f}/day)</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{width - 10}" y2="{bottom}" stroke="#444"/>']
    for i, day in enumerate(days):
        y = bottom
        for j, name in enumerate(series):
            value = Decimal(report["daily_cost_by_series"][day].get(name, "0"))
            h = float(value / top) * plot_h
            y -= h
            parts.append(f'<rect x="{left + i * bar_w + 1:.1f}" y="{y:.1f}" width="{max(1.0, bar_w - 2):.1f}" height="{h:.1f}" fill="{_PALETTE[j % len(_PALETTE)]}"><title>{html.escape(day)} {html.escape(name)} ${value:.4f}</title></rect>')
        if len(days) <= 31 and i % max(1, len(days) // 8) == 0:
            parts.append(f'<text x="{left + i * bar_w:.1f}" y="{bottom + 14}" font-size="10">{html.escape(day[5:])}</text>')
    for j, name in enumerate(series):
        parts.append(f'<rect x="{left + j * 190}" y="{height - 14}" width="10" height="10" fill="{_PALETTE[j % len(_PALETTE)]}"/>'
                     f'<text x="{left + j * 190 + 14}" y="{height - 5}" font-size="10">{html.escape(name[:28])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _curve_chart(report: dict[str, Any], width: int = 760, height: int = 300) -> str:
    import math

    points = report["curve"]
    xs = [math.log10(float(p["tokens"])) for p in points]
    ys = [float(p["bedrock_usd"]) for p in points] + [float(p["self_hosted_usd"]) for p in points]
    y_max = max(ys) or 1.0
    left, right, top_m, bottom = 70, width - 20, 30, height - 40

    def px(x: float) -> float:
        return left + (x - xs[0]) / (xs[-1] - xs[0]) * (right - left)

    def py(y: float) -> float:
        return bottom - y / y_max * (bottom - top_m)

    def path(key: str) -> str:
        return " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(float(p[key])):.1f}" for i, (x, p) in enumerate(zip(xs, points)))

    parts = [f'<svg class="chart" id="breakeven" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="Bedrock versus self-hosted monthly cost">',
             f'<text x="{left}" y="16" font-size="13">Monthly cost against monthly tokens (log scale): Bedrock vs self-hosted</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/><line x1="{left}" y1="{top_m}" x2="{left}" y2="{bottom}" stroke="#444"/>',
             f'<path d="{path("bedrock_usd")}" fill="none" stroke="#2563eb" stroke-width="2"><title>Bedrock</title></path>',
             f'<path d="{path("self_hosted_usd")}" fill="none" stroke="#dc2626" stroke-width="2"><title>Self-hosted (GPU + ops)</title></path>']
    for exponent in range(math.ceil(xs[0]), math.floor(xs[-1]) + 1):
        parts.append(f'<text x="{px(exponent) - 12:.1f}" y="{bottom + 14}" font-size="10">1e{exponent}</text>')
    parts.append(f'<text x="4" y="{top_m + 4}" font-size="10">${y_max:,.0f}</text>')
    breakeven = report["breakeven"]["breakeven_tokens_per_month"]
    if breakeven and xs[0] <= math.log10(float(breakeven)) <= xs[-1]:
        x = px(math.log10(float(breakeven)))
        parts.append(f'<line id="breakeven-point" x1="{x:.1f}" y1="{top_m}" x2="{x:.1f}" y2="{bottom}" stroke="#16a34a" stroke-dasharray="4 3"/>'
                     f'<text x="{x + 4:.1f}" y="{top_m + 12}" font-size="11" fill="#16a34a">break-even {float(breakeven) / 1e6:,.0f}M</text>')
    today = float(report["projected_month"]["tokens"])
    if today > 0:
        x = px(min(max(math.log10(today), xs[0]), xs[-1]))
        parts.append(f'<line id="today" x1="{x:.1f}" y1="{top_m}" x2="{x:.1f}" y2="{bottom}" stroke="#111" stroke-width="2"/>'
                     f'<text x="{x + 4:.1f}" y="{bottom - 6}" font-size="11">you are here ({today / 1e6:,.1f}M/month)</text>')
    parts.append(f'<text x="{right - 240}" y="{top_m + 12}" font-size="11" fill="#2563eb">Bedrock</text><text x="{right - 170}" y="{top_m + 12}" font-size="11" fill="#dc2626">self-hosted incl. ops</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: dict[str, Any]) -> str:
    """A self-contained page (inline CSS and SVG, no scripts, nothing fetched)."""
    rows = "".join(
        f"<tr><td>{html.escape(model)}</td><td>{int(v['calls']):,}</td><td>{int(v['input_tokens']):,}</td><td>{int(v['output_tokens']):,}</td><td>${Decimal(v['cost_usd']):,.4f}</td></tr>"
        for model, v in report["by_model"].items())
    reasons = "".join(f"<li>{html.escape(r)}</li>" for r in report["recommendation"]["reasons"])
    be = report["breakeven"]
    unpriced = (f'<p class="warn">Unpriced models (cost unknown, not $0): {html.escape(", ".join(report["unpriced_models"]))}</p>'
                if report["unpriced_models"] else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Crossover cost report {html.escape(report['period']['from'])} to {html.escape(report['period']['to'])}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;color:#111}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}} td:first-child{{text-align:left}} .warn{{color:#b91c1c}} .rec{{font-size:18px}}</style></head>
<body><h1>Crossover cost report</h1>
<p>{html.escape(report['period']['from'])} to {html.escape(report['period']['to'])} ({report['period']['days']} days), price catalog {html.escape(report['catalog_version'])}.</p>
<p class="rec">Recommendation: <strong id="recommendation">{html.escape(report['recommendation']['current'])}</strong> (today's numbers: {html.escape(report['recommendation']['today'])})</p>
<ul>{reasons}</ul>
<p>Projected month: {int(report['projected_month']['tokens']):,} tokens, ${Decimal(report['projected_month']['cost_usd']):,.2f}.
Bedrock ${Decimal(be['bedrock_monthly_usd']):,.2f}/month vs self-hosted ({html.escape(be['self_hosted']['model'])} on {html.escape(be['self_hosted']['instance'])}, {be['self_hosted']['instances']} instance(s)) ${Decimal(be['self_hosted_monthly_usd']):,.2f}/month.</p>
{unpriced}
{_bar_chart(report)}
{_curve_chart(report)}
<h2>By model</h2><table><tr><th>model</th><th>calls</th><th>input tokens</th><th>output tokens</th><th>cost</th></tr>{rows}</table>
</body></html>"""
