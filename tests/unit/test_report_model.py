"""The cost report is numbers (one pure function, one plain data model) apart from its renderings, and the
CLI table, the JSON (what the API returns) and the HTML page show the same numbers."""
from __future__ import annotations

import json
import types
import typing
from datetime import date
from decimal import Decimal

from typing_extensions import is_typeddict

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.render import render_html, render_json, render_table
from chalicelib.meter.report import CostReport, build_report

CATALOG = load_catalog(get_settings().meter.price_catalog_path)
TODAY = date(2026, 12, 3)
SONNET = "anthropic.claude-3-sonnet-20240229-v1:0"


def _rows(window: list[str]) -> list[dict]:
    rows = []
    for index, day in enumerate(window):
        rows.append({"day": day, "tenant": "acme", "backend": "bedrock", "model": SONNET, "calls": 10 + index,
                     "input_tokens": 12_000, "output_tokens": 3_000, "cache_read_tokens": 20_000, "cache_write_tokens": 3_000,
                     "cache_write_1h_tokens": 0, "cost_usd": Decimal("0.1234567"), "unpriced_calls": 0, "gpu_seconds": 0})
        rows.append({"day": day, "tenant": "beta", "backend": "self_hosted", "model": "qwen3-32b", "calls": 2,
                     "input_tokens": 500, "output_tokens": 100, "cost_usd": Decimal(0), "unpriced_calls": 2, "gpu_seconds": Decimal("12.5")})
    return rows


def _report() -> CostReport:
    return build_report(_rows, 7, TODAY, CATALOG, ops_ready=True,
                        budgets=({"acme": Decimal(100)}, {"acme": Decimal("2.5")}))


def _conforms(value: object, hint: object, where: str = "report") -> list[str]:
    """Where `value` is not exactly of the plain type `hint` (TypedDicts: every key declared, none extra)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        fields = typing.get_type_hints(hint)
        problems = [f"{where}: keys {sorted(set(value) ^ set(fields))}"] if set(value) != set(fields) else []
        return problems + [p for key in fields.keys() & value.keys() for p in _conforms(value[key], fields[key], f"{where}.{key}")]
    if origin in (typing.Union, types.UnionType):
        return [] if any(not _conforms(value, arg, where) for arg in args) else [f"{where}: {value!r} is none of {args}"]
    if origin is list:
        return [f"{where}: not a list"] if not isinstance(value, list) else [p for i, v in enumerate(value) for p in _conforms(v, args[0], f"{where}[{i}]")]
    if origin is dict:
        return [f"{where}: not an object"] if not isinstance(value, dict) else [p for k, v in value.items() for p in _conforms(v, args[1], f"{where}.{k}")]
    if hint is type(None):
        return [] if value is None else [f"{where}: not null"]
    if hint is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: {value!r} not int"]
    return [] if type(value) is hint else [f"{where}: {value!r} is not {hint}"]


def test_the_report_is_exactly_its_plain_data_model():
    assert _conforms(_report(), CostReport) == []


def test_the_report_is_a_pure_function_of_its_rows():
    assert _report() == _report()
    json.dumps(_report())  # plain JSON data: no Decimal, no dates, no objects


def test_table_json_and_html_show_the_same_numbers():
    report = _report()
    table, page, as_json = render_table(report), render_html(report), json.loads(render_json(report))
    assert as_json == report  # the API returns this object; the CLI's --format json prints it
    total_tokens = f"{int(report['totals']['tokens']):,}"
    assert int(report["totals"]["tokens"]) == 7 * (12_000 + 3_000 + 20_000 + 3_000 + 600)  # cache tokens count
    for series in report["by_series"]:
        assert f"{int(series['tokens']):,}" in table and f"{int(series['tokens']):,}" in page
    assert total_tokens in table
    projected = f"${Decimal(report['projected_month']['cost_usd']):,.2f}"
    assert projected in table and projected in page
    assert report["recommendation"]["current"] in table and report["recommendation"]["current"] in page
    assert "qwen3-32b" in table and "qwen3-32b" in page  # the unpriced rows, listed on both
