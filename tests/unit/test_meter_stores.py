"""Ledger, budgets, alerts and decisions on in-memory twins (the same Table contract as DynamoDB's,
tests/unit/test_table_contract.py): no token spend lost or counted twice, in milliseconds."""
from __future__ import annotations

import threading
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.errors import BudgetExceeded
from chalicelib.meter.alerts import AlertsConfig, BudgetAlerts
from chalicelib.meter.budgets import Budgets
from chalicelib.meter.decisions import DecisionStore
from chalicelib.meter.ledger import Ledger, LedgerEntry
from chalicelib.core import Usage
from chalicelib.meter.recommendation import Assessment, DecisionState
from chalicelib.table import InMemoryTable

DAY = datetime(2026, 12, 3, 12, tzinfo=timezone.utc)


def entry(request_id: str, cost: str | None = "0.01", tenant: str = "acme", tokens: tuple[int, int] = (100, 20)) -> LedgerEntry:
    return LedgerEntry(request_id=request_id, tenant=tenant, model="m", backend="bedrock", kind="invoke",
                       usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1]),
                       cost_usd=Decimal(cost) if cost is not None else None, catalog_version="test", trace_id="t", created_at=DAY)


def ledger(shards: int = 4) -> tuple[Ledger, InMemoryTable, InMemoryTable]:
    records, aggregates = InMemoryTable("ledger", ("request_id",)), InMemoryTable("aggregates", ("pk", "sk"))
    return Ledger(records, aggregates, shards), records, aggregates


def totals(book: Ledger) -> dict[str, Any]:
    rows = list(book.daily_aggregates(["2026-12-03"]))
    return {name: sum(row[name] for row in rows) for name in ("calls", "input_tokens", "output_tokens", "cost_usd", "unpriced_calls")}


def test_a_retried_record_is_written_and_counted_once() -> None:
    book, records, _ = ledger()
    assert book.record(entry("r1")) is True
    assert book.record(entry("r1")) is False
    assert book.record(entry("r2", cost=None)) is True
    assert len(records.items()) == 2
    assert totals(book) == {"calls": 2, "input_tokens": 200, "output_tokens": 40, "cost_usd": Decimal("0.01"), "unpriced_calls": 1}
    stored = records.get({"request_id": "r2"})
    assert stored["priced"] is False and "cost_usd" not in stored and stored["day"] == "2026-12-03"


def test_concurrent_replays_of_one_request_count_it_once() -> None:
    book, _, _ = ledger()
    outcomes: list[bool] = []
    threads = [threading.Thread(target=lambda: outcomes.append(book.record(entry("same")))) for _ in range(16)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(outcomes) == [False] * 15 + [True]
    assert totals(book)["calls"] == 1


def test_aggregates_are_sharded_by_request_and_summed_per_tenant_backend_model() -> None:
    book, _, aggregates = ledger(shards=4)
    for n in range(40):
        book.record(entry(f"r{n}", tenant="acme" if n % 2 else "beta"))
    assert len({item["pk"] for item in aggregates.items()}) > 1  # more than one shard took writes
    rows = list(book.daily_aggregates(["2026-12-03"]))
    assert {(r["tenant"], r["backend"], r["model"]) for r in rows} == {("acme", "bedrock", "m"), ("beta", "bedrock", "m")}
    assert totals(book)["cost_usd"] == Decimal("0.40")


def test_a_ledger_without_aggregates_still_refuses_duplicates() -> None:
    book = Ledger(InMemoryTable("ledger", ("request_id",)))
    assert book.record(entry("r1")) and not book.record(entry("r1"))
    assert list(book.daily_aggregates(["2026-12-03"])) == []


def budgets(limit: str | None = "1.00", alerts: BudgetAlerts | None = None, table: InMemoryTable | None = None) -> Budgets:
    store = Budgets(table or InMemoryTable("budgets", ("tenant", "period")), cache_ttl_s=30, alerts=alerts)
    if limit is not None:
        store.set_limit("acme", Decimal(limit))
    return store


def test_no_budget_means_no_reservation() -> None:
    assert budgets(limit=None).reserve("acme", Decimal("5")) is None


def test_reserve_then_settle_replaces_the_worst_case_by_the_real_cost() -> None:
    store = budgets()
    held = store.reserve("acme", Decimal("0.30"), period="2026-12")
    assert held is not None and held.committed_after == Decimal("0.30")
    store.settle(held, Decimal("0.05"))
    assert store.committed("acme", "2026-12") == Decimal("0.05")
    unpriced = store.reserve("acme", Decimal("0.20"), period="2026-12")
    store.settle(unpriced, None)  # an unpriced call keeps its reservation
    assert store.committed("acme", "2026-12") == Decimal("0.25")


def test_a_reservation_past_the_limit_is_refused_and_changes_nothing() -> None:
    store = budgets()
    store.reserve("acme", Decimal("0.90"), period="2026-12")
    with pytest.raises(BudgetExceeded):
        store.reserve("acme", Decimal("0.11"), period="2026-12")
    with pytest.raises(BudgetExceeded):
        store.reserve("acme", Decimal("1.01"), period="2026-12")  # larger than the whole budget
    assert store.committed("acme", "2026-12") == Decimal("0.90")


def test_concurrent_reservations_never_overshoot_the_limit() -> None:
    store = budgets()
    granted: list[Any] = []

    def reserve() -> None:
        try:
            granted.append(store.reserve("acme", Decimal("0.10"), period="2026-12"))
        except BudgetExceeded:
            pass

    threads = [threading.Thread(target=reserve) for _ in range(30)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(granted) == 10
    assert store.committed("acme", "2026-12") == Decimal("1.00")


class SdkFailure(Exception):
    """Stands for any exception that is not one of ours (a botocore error, a KeyError, a timeout)."""


def test_a_hold_whose_request_raises_before_settling_releases_the_whole_reservation() -> None:
    store = budgets()
    failure = SdkFailure("the model call broke")
    with pytest.raises(SdkFailure) as raised:
        with store.held("acme", Decimal("0.40")):
            assert store.committed("acme") == Decimal("0.40")
            raise failure
    assert raised.value is failure  # the request's own exception goes on, unchanged
    assert store.committed("acme") == Decimal(0)
    with store.held("acme", Decimal("1.00")) as hold:  # the whole budget is available again
        hold.settle(Decimal("0.30"))
    assert store.committed("acme") == Decimal("0.30")


def test_a_hold_settled_before_a_later_failure_keeps_that_spend_and_is_not_released_twice() -> None:
    store = budgets()
    with pytest.raises(SdkFailure):
        with store.held("acme", Decimal("0.40")) as hold:
            hold.settle(Decimal("0.07"))
            raise SdkFailure("after the settle")
    assert store.committed("acme") == Decimal("0.07")
    with store.held("acme", Decimal("0.40")) as hold:
        hold.settle(Decimal("0.01"))
        with pytest.raises(RuntimeError):
            hold.settle(Decimal("0.01"))  # a second settle is refused before it writes
    assert store.committed("acme") == Decimal("0.08")


class ReleaseFails(InMemoryTable):
    def update_if(self, key: Any, add: Any = None, condition: Any = None, **kwargs: Any) -> Any:
        if add and add.get("committed_usd", 0) < 0:
            raise SdkFailure("DynamoDB is down")
        return super().update_if(key, add=add, condition=condition, **kwargs)


def test_a_failed_release_is_logged_and_the_requests_own_exception_is_the_one_raised(captured_logs: Any) -> None:
    store = budgets(table=ReleaseFails("budgets", ("tenant", "period")))
    with pytest.raises(KeyError):
        with store.held("acme", Decimal("0.40")):
            raise KeyError("tool_output")
    assert '"budget.release_failed"' in captured_logs.getvalue() and '"SdkFailure"' in captured_logs.getvalue()


def test_changing_a_limit_takes_effect_at_once_and_limits_lists_every_tenant() -> None:
    table = InMemoryTable("budgets", ("tenant", "period"))
    store = budgets(table=table)
    assert store.limit_for("acme") == Decimal("1.00")
    store.set_limit("acme", Decimal("2.50"))
    store.set_limit("beta", Decimal("7"))
    assert store.limit_for("acme") == Decimal("2.50")
    store.reserve("acme", Decimal("0.5"), period="2026-12")  # a period row is not a limit row
    assert store.limits() == {"acme": Decimal("2.50"), "beta": Decimal("7")}
    store.set_limit("acme", None)
    assert store.limit_for("acme") is None


class RecordingSns:
    def __init__(self, fail: bool = False) -> None:
        self.messages: list[dict[str, Any]] = []
        self.fail = fail

    def publish(self, **kwargs: Any) -> dict[str, Any]:
        if self.fail:
            raise RuntimeError("SNS down")
        self.messages.append(kwargs)
        return {"MessageId": str(len(self.messages))}


def test_each_threshold_alerts_once_and_a_failed_publish_is_retried() -> None:
    table = InMemoryTable("budgets", ("tenant", "period"))
    sns = RecordingSns(fail=True)
    store = budgets(alerts=BudgetAlerts(table, AlertsConfig("arn:aws:sns:us-east-1:1:t", (50, 100)), sns=sns), table=table)
    store.settle(store.reserve("acme", Decimal("0.6"), period="2026-12"), Decimal("0.6"))
    assert sns.messages == [] and not [i for i in table.items() if i["period"].startswith("alert#")]  # marker removed
    sns.fail = False
    for _ in range(3):
        store.settle(store.reserve("acme", Decimal("0.01"), period="2026-12"), Decimal("0.01"))
    assert [m["MessageAttributes"]["threshold"]["StringValue"] for m in sns.messages] == ["50"]


class LimitReadFails(InMemoryTable):
    failing = False

    def get(self, key: Any, consistent: bool = True) -> Any:
        if self.failing and key.get("period") == "limit":
            raise SdkFailure("DynamoDB is throttling")
        return super().get(key, consistent=consistent)


def test_an_alert_that_cannot_read_its_limit_is_logged_and_the_settled_spend_stands(captured_logs: Any) -> None:
    table = LimitReadFails("budgets", ("tenant", "period"))
    store = Budgets(table, cache_ttl_s=0, alerts=BudgetAlerts(table, AlertsConfig("arn:aws:sns:us-east-1:1:t", (50,)), sns=RecordingSns()))
    store.set_limit("acme", Decimal("1.00"))
    reservation = store.reserve("acme", Decimal("0.90"), period="2026-12")
    table.failing = True
    store.settle(reservation, Decimal("0.60"))  # raised SdkFailure from the alert step after the write had landed
    table.failing = False
    assert store.committed("acme", "2026-12") == Decimal("0.60")
    assert '"budget.alert_failed"' in captured_logs.getvalue() and '"SdkFailure"' in captured_logs.getvalue()


def test_the_latest_decision_is_the_last_day_saved() -> None:
    store = DecisionStore(InMemoryTable("decisions", ("scope", "day")))
    assert store.latest() == DecisionState()
    for day, current in (("2026-12-01", "stay_on_bedrock"), ("2026-12-03", "switch_to_self_hosted"), ("2026-12-02", "stay_on_bedrock")):
        store.save("global", day, DecisionState(current=current), Assessment(current, ("r",), {}), {"day": day})
    assert store.latest().current == "switch_to_self_hosted"


class SlowQueries:
    """Wraps a twin's Query so that it waits like a network call, and counts how many run at once."""

    def __init__(self, table: InMemoryTable) -> None:
        self.in_flight = self.most_in_flight = self.calls = 0
        self._count, self._query = threading.Lock(), table.query
        table.query = self  # type: ignore[method-assign]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._count:
            self.in_flight += 1
            self.calls += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        threading.Event().wait(0.002)
        try:
            return self._query(*args, **kwargs)
        finally:
            with self._count:
                self.in_flight -= 1


def test_a_long_window_queries_its_partitions_concurrently_and_keeps_day_order() -> None:
    from chalicelib.meter.ledger import AGGREGATE_READERS

    book, _, table = ledger(shards=8)
    days = [f"2026-{month:02d}-{day:02d}" for month in (10, 11) for day in range(1, 29)]
    for n, day in enumerate(days):
        created = datetime.fromisoformat(f"{day}T12:00:00+00:00")
        book.record(entry(f"r{n}").model_copy(update={"created_at": created}))
    queries = SlowQueries(table)
    rows = list(book.daily_aggregates(days))
    assert [row["day"] for row in rows] == days  # one row a day (one tenant/backend/model), in the asked order
    assert queries.calls == len(days) * 8  # every partition of every day, once
    assert 1 < queries.most_in_flight <= AGGREGATE_READERS  # concurrent, and bounded (the client's pool)
