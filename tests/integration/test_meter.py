"""The meter against moto: exact sums under concurrency, idempotent replays, budgets, reports."""
from __future__ import annotations

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timezone
from decimal import Decimal
from html.parser import HTMLParser

import boto3
import pytest

from chalicelib.errors import BudgetExceeded
from chalicelib.meter.ledger import LedgerEntry
from chalicelib.core import Usage
from tests.conftest import OPS_KEY, converse_text, ledger_items, post_json
from tests.integration.support import AtomicCalls, totals

SONNET = "anthropic.claude-3-sonnet-20240229-v1:0"


def entry(request_id, tenant="dev", model=SONNET, cost="0.001", tokens=(100, 20), day=None):
    created = datetime.combine(day or datetime.now(timezone.utc).date(), datetime.min.time(), tzinfo=timezone.utc)
    return LedgerEntry(request_id=request_id, tenant=tenant, model=model, backend="bedrock", kind="invoke",
                       usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1]),
                       cost_usd=Decimal(cost) if cost is not None else None, catalog_version="test", trace_id="t",
                       created_at=created)


def test_concurrent_writes_sum_exactly_and_replays_do_not_double_count(aws):
    from chalicelib.meter.ledger import Ledger
    from chalicelib.services import get_services

    services = get_services()
    settings = services.settings
    ledger = Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, settings.meter.shards, AtomicCalls(boto3.client("dynamodb")))
    ids = [f"req-{i}" for i in range(200)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        first = list(pool.map(lambda rid: ledger.record(entry(rid)), ids + ids[:50]))
        replay = list(pool.map(lambda rid: ledger.record(entry(rid)), ids[:50]))
    assert first.count(True) == 200 and first.count(False) == 50
    assert not any(replay)
    day = datetime.now(timezone.utc).date().isoformat()
    assert totals(services, day) == {"calls": 200, "input_tokens": 20000, "output_tokens": 4000,
                                     "cost_usd": Decimal("0.2"), "unpriced_calls": 0}
    assert len(ledger_items()) == 200


def test_aggregates_are_sharded(aws):
    from chalicelib.services import get_services

    services = get_services()
    for i in range(64):
        services.ledger.record(entry(f"hot-{i}"))
    day = datetime.now(timezone.utc).date().isoformat()
    keys = {row["pk"] for row in services.ledger.daily_aggregates([day])}
    assert len(keys) > 4  # one hot tenant spreads over the shards


def test_budget_reservations_under_concurrency_never_exceed_the_budget(aws):
    from chalicelib.meter.budgets import Budgets
    from chalicelib.services import get_services

    budgets = Budgets(get_services().settings.meter.budgets_table, AtomicCalls(boto3.client("dynamodb")))
    budgets.set_limit("dev", Decimal("1.00"))
    granted, refused = [], []
    lock = threading.Lock()

    def attempt(_):
        try:
            reservation = budgets.reserve("dev", Decimal("0.07"))
            with lock:
                granted.append(reservation)
        except BudgetExceeded:
            with lock:
                refused.append(1)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(attempt, range(40)))
    assert len(granted) == 14 and len(refused) == 26  # floor(1.00 / 0.07)
    assert budgets.committed("dev") == Decimal("0.98")
    for reservation in granted:
        budgets.settle(reservation, Decimal("0.01"))  # real cost lower than the worst case
    assert budgets.committed("dev") == Decimal("0.14")


def test_over_budget_request_is_402_before_the_model_is_called(client, bedrock):
    from chalicelib.services import get_services

    get_services().budgets.set_limit("dev", Decimal("0.0001"))
    response = post_json(client, "/v1/invoke", {"prompt": "hello", "max_tokens": 1000})
    assert response.status_code == 402 and response.json_body["error"]["code"] == "budget_exceeded"


def test_budget_is_settled_to_the_real_cost(client, bedrock):
    from chalicelib.services import get_services

    budgets = get_services().budgets
    budgets.set_limit("dev", Decimal("10"))
    bedrock.add_response("converse", converse_text("ok", 1000, 100))
    assert post_json(client, "/v1/invoke", {"prompt": "hello"}).status_code == 200
    assert budgets.committed("dev") == Decimal("0.0045")  # 1000 x $3/M + 100 x $15/M


def test_partial_spend_is_metered_when_a_later_step_fails(client, bedrock):
    from tests.conftest import converse_tool_use

    bedrock.add_response("converse", converse_tool_use([("t1", "calculator", {"expression": "1+1"})], 300, 30))
    bedrock.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    response = post_json(client, "/v1/invoke", {"prompt": "add", "tools": ["calculator"]})
    assert response.status_code == 429
    [row] = ledger_items()
    assert row["input_tokens"]["N"] == "300" and "#failed-" in row["request_id"]["S"]


def seed_ledger(services, today):
    for offset in range(7):
        day = date.fromordinal(today.toordinal() - offset)
        for i in range(5):
            services.ledger.record(entry(f"{day}-{i}", tenant=["dev", "other"][i % 2], day=day, tokens=(2_000_000, 500_000), cost="13.5"))
        services.ledger.record(entry(f"{day}-u", model="meta.unpriced-v1", cost=None, day=day))


def test_report_renders_from_a_seeded_ledger(aws):
    from chalicelib.meter.render import render_html, render_table
    from chalicelib.meter.service import report_for
    from chalicelib.services import get_services

    services = get_services()
    today = datetime.now(timezone.utc).date()
    seed_ledger(services, today)
    report = report_for(services.ledger, services.decisions, services.catalog, 7, ops_ready=True, today=today)
    assert report["totals"]["calls"] == "42" and Decimal(report["totals"]["cost_usd"]) == Decimal("472.5")
    assert report["unpriced_models"] == ["meta.unpriced-v1"]
    assert set(report["by_tenant"]) == {"dev", "other"}
    assert report["recommendation"]["today"] in {"stay_on_bedrock", "evaluate", "switch_to_self_hosted"}

    class Collector(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.ids = [], set()

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.ids.update(value for name, value in attrs if name == "id")

    page = Collector()
    page.feed(render_html(report))
    assert page.tags.count("svg") == 2 and {"daily-spend", "breakeven", "today", "recommendation"} <= page.ids
    assert page.tags.count("rect") > 7 and "path" in page.tags
    assert "UNPRICED" in render_table(report)


def test_cost_report_endpoint_is_for_the_ops_role_only(client):
    assert client.http.get("/v1/cost/report", headers={"x-api-key": "dev-key"}).status_code == 403
    response = client.http.get("/v1/cost/report?days=7", headers={"x-api-key": OPS_KEY})
    assert response.status_code == 200 and response.json_body["period"]["days"] == 7
    assert client.http.get("/v1/cost/report?days=abc", headers={"x-api-key": OPS_KEY}).status_code == 400


def test_scheduled_report_writes_json_and_html_and_stores_the_decision(aws):
    from chalicelib import handlers
    from chalicelib.services import get_services

    services = get_services()
    seed_ledger(services, datetime.now(timezone.utc).date())
    result = handlers.daily_cost_report()
    s3 = boto3.client("s3")
    keys = sorted(obj["Key"] for obj in s3.list_objects_v2(Bucket=result["bucket"])["Contents"])
    assert keys == [result["prefix"] + "cost-report.html", result["prefix"] + "cost-report.json"]
    head = s3.head_object(Bucket=result["bucket"], Key=keys[1])
    assert head["ServerSideEncryption"] in ("AES256", "aws:kms")
    stored = json.loads(s3.get_object(Bucket=result["bucket"], Key=keys[1])["Body"].read())
    assert stored["recommendation"]["current"] == services.decisions.latest().current


def test_cli_whatif_prints_the_required_fields(capsys):
    from chalicelib.cli import main

    assert main(["cost", "whatif", "--tokens-per-month", "2e9", "--no-ops-ready"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["recommendation"] == "evaluate" and any("ops-ready" in reason for reason in result["reasons"])
    assert {"bedrock_monthly_usd", "self_hosted_monthly_usd", "breakeven_tokens_per_month"} <= set(result)


def test_zero_cost_calls_accumulate_on_one_aggregate(aws):
    """Self-hosted calls on a $0 instance: DynamoDB number formatting must survive repeated ADDs."""
    from chalicelib.meter.ledger import Ledger
    from chalicelib.services import get_services

    settings = get_services().settings
    ledger = Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, shards=1)
    for i in range(4):
        assert ledger.record(entry(f"zero-{i}", cost="0E-8"))
    day = datetime.now(timezone.utc).date().isoformat()
    assert totals(get_services(), day)["calls"] == 4
