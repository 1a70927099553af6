"""The report's charts: the numbers (pure, tested) apart from their SVG drawing.

Readable with zero spend (an explicit "no spend" note over a drawn axis), and with one model or forty:
the daily chart stacks the top series and folds the rest into "other", and its legend wraps into rows
sized from the label width. Labels of the break-even chart sit in fixed rows so they cannot collide.
"""
from __future__ import annotations

import html
import math
from decimal import Decimal
from typing import Any

PALETTE = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#4d7c0f", "#be185d", "#6b7280"]
MAX_SERIES = 8  # stacked series drawn; the rest become "other"
CHAR_PX = 6.2  # average width of a 10px label character (system-ui), used to lay out legends
LEGEND_ITEM_PX = 190
SHADE = "#16a34a"


def daily_chart_data(daily_cost_by_series: dict[str, dict[str, str]], max_series: int = MAX_SERIES) -> dict[str, Any]:
    """Days, the series drawn (top by spend, the rest as "other"), their values per day, and the scale."""
    days = list(daily_cost_by_series)
    totals: dict[str, Decimal] = {}
    for values in daily_cost_by_series.values():
        for name, value in values.items():
            totals[name] = totals.get(name, Decimal(0)) + Decimal(value)
    ranked = sorted(totals, key=lambda name: (-totals[name], name))
    shown, folded = ranked[:max_series], ranked[max_series:]
    if len(folded) == 1:  # "other" for a single series hides its name for nothing
        shown, folded = ranked[:max_series + 1], []
    series = shown + ([f"other ({len(folded)} series)"] if folded else [])
    values = []
    for day in days:
        row = daily_cost_by_series[day]
        day_values = [Decimal(row.get(name, "0")) for name in shown]
        if folded:
            day_values.append(sum((Decimal(row.get(name, "0")) for name in folded), Decimal(0)))
        values.append(day_values)
    day_totals = [sum(v, Decimal(0)) for v in values]
    top = max(day_totals, default=Decimal(0))
    return {"days": days, "series": series, "values": values, "day_totals": day_totals, "max": top,
            "total": sum(day_totals, Decimal(0)), "empty": top == 0}


def legend_rows(labels: list[str], width: int, left: int = 60, item_px: int = LEGEND_ITEM_PX) -> list[list[tuple[int, str]]]:
    """Legend entries as rows of (x, label); labels clipped to the item width so neighbours never touch."""
    per_row = max(1, (width - left - 10) // item_px)
    max_chars = int((item_px - 22) / CHAR_PX)
    # clip in the middle: backend and model family stay at the front, the distinguishing version at the end
    head = max_chars // 2
    clipped = [label if len(label) <= max_chars else label[:head] + "…" + label[-(max_chars - head - 1):] for label in labels]
    return [[(left + column * item_px, text) for column, text in enumerate(clipped[start:start + per_row])]
            for start in range(0, len(clipped), per_row)]


def bar_chart(data: dict[str, Any], width: int = 760) -> str:
    legend = legend_rows(data["series"], width)
    left, top_margin, plot_h = 60, 30, 190
    bottom = top_margin + plot_h
    height = bottom + 30 + 16 * len(legend) + 6
    days = data["days"]
    scale = data["max"] if data["max"] > 0 else Decimal(1)
    bar_w = (width - left - 20) / max(1, len(days))
    parts = [f'<svg class="chart" id="daily-spend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="Daily spend by backend and model">',
             f'<text x="{left}" y="16" font-size="13">Daily spend by backend:model (peak ${data["max"]:,.4f}/day, total ${data["total"]:,.2f})</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{width - 10}" y2="{bottom}" stroke="#444"/>',
             f'<line x1="{left}" y1="{top_margin}" x2="{left}" y2="{bottom}" stroke="#444"/>',
             f'<text x="{left - 6}" y="{top_margin + 4}" font-size="10" text-anchor="end">${data["max"]:,.2f}</text>',
             f'<text x="{left - 6}" y="{bottom}" font-size="10" text-anchor="end">$0</text>']
    if data["empty"]:
        parts.append(f'<text id="no-spend" x="{left + (width - left) / 2:.0f}" y="{top_margin + plot_h / 2:.0f}" font-size="13" '
                     f'text-anchor="middle" fill="#555">No spend recorded in this period ($0.00 on every day)</text>')
    label_every = max(1, math.ceil(len(days) / 8))
    for i, day in enumerate(days):
        y = float(bottom)
        for j, value in enumerate(data["values"][i]):
            if value <= 0:
                continue
            h = float(value / scale) * plot_h
            y -= h
            parts.append(f'<rect x="{left + i * bar_w + 1:.1f}" y="{y:.1f}" width="{max(1.0, bar_w - 2):.1f}" height="{h:.1f}" '
                         f'fill="{PALETTE[j % len(PALETTE)]}"><title>{html.escape(day)} {html.escape(data["series"][j])} ${value:.4f}</title></rect>')
        if i % label_every == 0:
            parts.append(f'<text x="{left + i * bar_w + bar_w / 2:.1f}" y="{bottom + 14}" font-size="10" text-anchor="middle">{html.escape(day[5:])}</text>')
    for row_index, row in enumerate(legend):
        y = bottom + 30 + row_index * 16
        for column, (x, text) in enumerate(row):
            color = PALETTE[(row_index * len(legend[0]) + column) % len(PALETTE)]
            parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                         f'<text class="legend" x="{x + 14}" y="{y}" font-size="10">{html.escape(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def curve_chart_data(curve: list[dict[str, str]], ranges: dict[str, Any], today_tokens: Decimal) -> dict[str, Any]:
    """Log-volume axis, both cost lines, the shaded volumes where self-hosting is cheaper, and today's volume."""
    xs = [math.log10(float(point["tokens"])) for point in curve]
    ys = [float(point["bedrock_usd"]) for point in curve] + [float(point["self_hosted_usd"]) for point in curve]
    low, high = xs[0], xs[-1]
    shaded = []
    for span in ranges.get("self_hosted_cheaper", []):
        start = math.log10(max(float(span["from"]), 1.0))
        end = high if span["to"] is None else math.log10(float(span["to"]))
        if end >= low and start <= high:
            shaded.append((max(start, low), min(end, high)))
    first = ranges.get("first_tokens_per_month")
    return {"xs": xs, "bedrock": [float(p["bedrock_usd"]) for p in curve], "self_hosted": [float(p["self_hosted_usd"]) for p in curve],
            "y_max": max(ys) or 1.0, "shaded": shaded, "first": float(first) if first else None,
            "today": float(today_tokens), "again": len(ranges.get("bedrock_cheaper_again", []))}


def curve_chart(data: dict[str, Any], width: int = 760, height: int = 330) -> str:
    xs = data["xs"]
    left, right, top_m, bottom = 70, width - 20, 62, height - 40

    def px(x: float) -> float:
        return left + (x - xs[0]) / (xs[-1] - xs[0]) * (right - left)

    def py(y: float) -> float:
        return bottom - y / data["y_max"] * (bottom - top_m)

    def path(values: list[float]) -> str:
        return " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(v):.1f}" for i, (x, v) in enumerate(zip(xs, values)))

    def anchored(x: float, y: float, text: str, ident: str, color: str = "#111") -> str:
        # labels right of the marker in the left half, left of it in the right half: never past the edges
        anchor, dx = ("start", 4) if x < (left + right) / 2 else ("end", -4)
        return f'<text id="{ident}" x="{x + dx:.1f}" y="{y}" font-size="11" fill="{color}" text-anchor="{anchor}">{html.escape(text)}</text>'

    parts = [f'<svg class="chart" id="breakeven" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="Bedrock versus self-hosted monthly cost">',
             f'<text x="{left}" y="16" font-size="13">Monthly cost against monthly tokens (log scale): Bedrock vs self-hosted</text>']
    for start, end in data["shaded"]:
        parts.append(f'<rect class="cheaper" x="{px(start):.1f}" y="{top_m}" width="{max(1.0, px(end) - px(start)):.1f}" '
                     f'height="{bottom - top_m}" fill="{SHADE}" fill-opacity="0.12"/>')
    parts += [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/><line x1="{left}" y1="{top_m}" x2="{left}" y2="{bottom}" stroke="#444"/>',
              f'<path d="{path(data["bedrock"])}" fill="none" stroke="#2563eb" stroke-width="2"><title>Bedrock</title></path>',
              f'<path d="{path(data["self_hosted"])}" fill="none" stroke="#dc2626" stroke-width="2"><title>Self-hosted (GPU + ops)</title></path>']
    # legend row (y=34), fixed x slots
    for x, color, text in ((left, "#2563eb", "Bedrock"), (left + 110, "#dc2626", "self-hosted incl. ops"),
                           (left + 290, SHADE, "shaded: self-hosted cheaper")):
        parts.append(f'<rect x="{x}" y="25" width="10" height="10" fill="{color}"/><text class="legend" x="{x + 14}" y="34" font-size="11">{text}</text>')
    for exponent in range(math.ceil(xs[0]), math.floor(xs[-1]) + 1):
        parts.append(f'<text x="{px(exponent):.1f}" y="{bottom + 14}" font-size="10" text-anchor="middle">1e{exponent}</text>')
    parts.append(f'<text x="{left - 6}" y="{top_m + 4}" font-size="10" text-anchor="end">${data["y_max"]:,.0f}</text>'
                 f'<text x="{left - 6}" y="{bottom}" font-size="10" text-anchor="end">$0</text>')
    if data["first"] and xs[0] <= math.log10(data["first"]) <= xs[-1]:
        x = px(math.log10(data["first"]))
        again = f", Bedrock cheaper again in {data['again']} range(s)" if data["again"] else ""
        parts.append(f'<line id="breakeven-point" x1="{x:.1f}" y1="{top_m}" x2="{x:.1f}" y2="{bottom}" stroke="{SHADE}" stroke-dasharray="4 3"/>'
                     + anchored(x, top_m + 12, f"first break-even {data['first'] / 1e9:,.2f}B{again}", "breakeven-label", SHADE))
    if data["today"] > 0:
        x = px(min(max(math.log10(data["today"]), xs[0]), xs[-1]))
        parts.append(f'<line id="today" x1="{x:.1f}" y1="{top_m}" x2="{x:.1f}" y2="{bottom}" stroke="#111" stroke-width="2"/>'
                     + anchored(x, top_m + 28, f"you are here ({data['today'] / 1e6:,.1f}M/month)", "today-label"))
    parts.append("</svg>")
    return "".join(parts)
