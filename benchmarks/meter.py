"""Meter write cost per call, and report generation over 1,000,000 ledger rows.

1. Write cost: ms per metered call and DynamoDB requests per call (ledger put + aggregate ADD in
   one TransactWriteItems), against moto in-process (its own cost dominates the ms figure).
2. Report: fold 1,000,000 ledger rows into daily aggregates, summarise, break-even, render
   table/JSON/HTML, on one core. Target < 5 s.
"""
from __future__ import annotations

import os
import random
import time
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

from common import ROOT, summary_ms  # noqa: F401  (sets sys.path)

os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
    os.environ.pop(name, None)

WRITES = int(os.environ.get("BENCH_METER_WRITES", 500))
ROWS = int(os.environ.get("BENCH_REPORT_ROWS", 1_000_000))


def write_cost() -> None:
    import boto3
    from moto import mock_aws

    from chalicelib.meter.ledger import LedgerEntry
    from chalicelib.core import Usage
    from chalicelib.services import get_services, reset_services
    from devstack.bootstrap import bootstrap

    with mock_aws():
        reset_services()
        bootstrap({})
        services = get_services()
        client = boto3.client("dynamodb")
        from chalicelib.meter.ledger import Ledger

        ledger = Ledger(services.settings.meter.ledger_table, services.settings.meter.aggregates_table, services.settings.meter.shards, client)
        requests = {"n": 0}
        client.meta.events.register("before-send.dynamodb.*", lambda **_: requests.__setitem__("n", requests["n"] + 1))
        samples = []
        now = datetime.now(timezone.utc)
        for i in range(WRITES):
            entry = LedgerEntry(request_id=f"bench-{i}", tenant=f"t{i % 10}", model="anthropic.claude-3-sonnet-20240229-v1:0",
                                backend="bedrock", kind="invoke", usage=Usage(input_tokens=1200, output_tokens=300),
                                cost_usd=Decimal("0.0081"), catalog_version="bench", trace_id="t", created_at=now)
            started = time.perf_counter()
            ledger.record(entry)
            samples.append(time.perf_counter() - started)
        print(f"meter write: {summary_ms(samples)}; DynamoDB requests per call: {requests['n'] / WRITES:.2f} (moto in-process)")


def report_over_rows() -> None:
    from chalicelib.config import get_settings
    from chalicelib.meter.breakeven import coefficient_of_variation
    from chalicelib.meter.catalog import load_catalog
    from chalicelib.meter.render import render_html, render_json, render_table
    from chalicelib.meter.report import aggregate_ledger_rows, day_range, summarise, with_breakeven

    rng = random.Random(1)
    today = date(2026, 12, 1)
    days = day_range(30, today)
    models = ["anthropic.claude-3-sonnet-20240229-v1:0", "anthropic.claude-3-5-haiku-20241022-v1:0", "qwen3-32b", "meta.unpriced-v1"]
    rows = []
    for i in range(ROWS):
        model = models[i % 4]
        rows.append({"day": days[i % 30], "tenant": f"tenant-{rng.randrange(50)}", "backend": "self_hosted" if model == "qwen3-32b" else "bedrock",
                     "model": model, "input_tokens": 1000 + i % 900, "output_tokens": 200 + i % 300,
                     "cost_usd": None if model == "meta.unpriced-v1" else Decimal("0.00612")})
    catalog = load_catalog(get_settings().meter.price_catalog_path)
    started = time.perf_counter()
    aggregates = aggregate_ledger_rows(rows)
    folded = time.perf_counter()
    summary = summarise(aggregates, days)
    report = with_breakeven(summary, catalog, ops_ready=True,
                            daily_cv=coefficient_of_variation([Decimal(t) for t in summary["daily_tokens"]]))
    report["recommendation"] = {"today": report["breakeven"]["recommendation"], "current": report["breakeven"]["recommendation"],
                                "reasons": report["breakeven"]["reasons"], "pending": None, "pending_days": 0}
    sizes = [len(render_table(report)), len(render_json(report)), len(render_html(report))]
    finished = time.perf_counter()
    print(f"report over {ROWS:,} ledger rows: {finished - started:.2f} s total (fold {folded - started:.2f} s, "
          f"summary+break-even+render {finished - folded:.2f} s; {len(aggregates)} aggregate rows; outputs {sizes} bytes)")


if __name__ == "__main__":
    write_cost()
    report_over_rows()
