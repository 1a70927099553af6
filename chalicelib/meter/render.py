"""The cost report, rendered: text table, JSON and a self-contained HTML page with SVG charts.

Formatting only: every figure comes from the report's numbers (`meter.report.build_report` -> `CostReport`),
so the CLI (`crossover cost report --format table|json|html`), the API (`GET /v1/cost/report`, the JSON) and
the daily HTML report in S3 show the same numbers.
"""
from __future__ import annotations

import html
import json
from decimal import Decimal
from typing import Any

from .report import CostReport, Ranges



def render_json(report: CostReport) -> str:
    return json.dumps(report, indent=2, sort_keys=True)


def _volume(tokens: str | None) -> str:
    return "and above" if tokens is None else f"{int(tokens) / 1e9:,.3f}B"


def spot_share_text(side: Any) -> str:
    """The self-hosted fleet's spot share and where it comes from (measured from the queue's attempts, or the estimate)."""
    return f"{Decimal(side['spot_share']):.0%} ({side.get('spot_share_basis', 'configured estimate')})"


def breakeven_lines(ranges: Ranges) -> list[str]:
    """Every range where self-hosting is cheaper, and where Bedrock is cheaper again (an extra instance's step)."""
    if not ranges["self_hosted_cheaper"]:
        return [f"self-hosted is never cheaper up to {int(ranges['searched_up_to']) / 1e9:,.0f}B tokens/month"]
    lines = ["self-hosted cheaper (tokens/month): " + ", ".join(
        f"{_volume(r['from'])} {'and above' if r['to'] is None else 'to ' + _volume(r['to'])}" for r in ranges["self_hosted_cheaper"])]
    if ranges["bedrock_cheaper_again"]:
        lines.append("Bedrock cheaper again: " + ", ".join(f"{_volume(r['from'])} to {_volume(r['to'])}" for r in ranges["bedrock_cheaper_again"]))
    return lines


def render_table(report: CostReport) -> str:
    def money(value: str) -> str:
        return f"${Decimal(value):,.2f}"

    lines = [f"Crossover cost report {report['period']['from']} .. {report['period']['to']} ({report['period']['days']} days, catalog {report['catalog_version']})", ""]
    lines.append(f"{'tenant':<16} {'backend':<12} {'model':<46} {'calls':>9} {'tokens':>14} {'cost':>12}")
    for row in report.get("by_series", []):
        lines.append(f"{row['tenant'][:16]:<16} {row['backend'][:12]:<12} {row['model'][:46]:<46} {int(row['calls']):>9,} "
                     f"{int(row['tokens']):>14,} {money(row['cost_usd']):>12}")
    totals = report["totals"]
    lines.append(f"{'TOTAL':<16} {'':<12} {'':<46} {int(totals['calls']):>9,} {int(totals['tokens']):>14,} {money(totals['cost_usd']):>12}")
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
              f"GPU spot share: {spot_share_text(be['self_hosted'])}",
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


def render_html(report: CostReport) -> str:
    """A self-contained page (inline CSS and SVG, no scripts, nothing fetched)."""
    from .charts import bar_chart, curve_chart, curve_chart_data, daily_chart_data

    be = report["breakeven"]
    series = _html_table(["tenant", "backend", "model", "calls", "tokens", "cost"],
                         [[r["tenant"], r["backend"], r["model"], f"{int(r['calls']):,}", f"{int(r['tokens']):,}",
                           f"${Decimal(r['cost_usd']):,.4f}"] for r in report.get("by_series", [])], "by-series")
    days = _html_table(["day", "calls", "tokens", "cost", "unpriced calls"],
                       [[d["day"], f"{int(d['calls']):,}", f"{int(d['tokens']):,}", f"${Decimal(d['cost_usd']):,.4f}",
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
<p id="spot-share">GPU spot share: {html.escape(spot_share_text(be['self_hosted']))}</p>
<ul id="ranges">{ranges}</ul>
{daily}
{curve}
<h2>Sensitivity (traffic ±50%, GPU price ±30%)</h2>{sensitivity}
<h2>Budgets</h2>{budgets}
<h2>Unpriced calls (cost unknown, not $0)</h2>{unpriced}
<h2>By tenant, backend and model</h2>{series}
<h2>By day</h2>{days}
</body></html>"""
