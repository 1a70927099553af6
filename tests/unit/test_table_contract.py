"""The table facade's contract, run twice: on the in-memory twin and on DynamoDB (moto, in process).

Every store's unit tests run on the twin; this file is what keeps the twin honest. A behaviour a
store relies on belongs here, so both implementations are held to it.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Iterator

import pytest

from chalicelib.table import (
    Check, ConditionFailed, Delete, DynamoTable, InMemoryTable, Put, Table, Update, attr, transact,
)

PAIR = ("pk", "sk")


@pytest.fixture(params=["memory", "dynamodb"])
def make(request: pytest.FixtureRequest) -> Iterator:
    """make(name, keys) -> a fresh Table of the parametrised kind."""
    if request.param == "memory":
        yield lambda name, keys=PAIR: InMemoryTable(name, keys)
        return
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")

        def create(name: str, keys: tuple[str, ...] = PAIR) -> Table:
            schema = [{"AttributeName": keys[0], "KeyType": "HASH"}] + ([{"AttributeName": keys[1], "KeyType": "RANGE"}] if len(keys) > 1 else [])
            client.create_table(TableName=name, KeySchema=schema, BillingMode="PAY_PER_REQUEST",
                                AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in keys])
            return DynamoTable(name, keys, client)

        yield create


@pytest.fixture
def t(make) -> Table:
    return make("things")


def test_put_then_get_gives_back_what_dynamodb_stores(t: Table) -> None:
    t.put({"pk": "a", "sk": "1", "n": 3, "f": 0.25, "d": Decimal("0.00000000"), "s": "x", "b": True,
           "roles": {"ops", "invoke"}, "m": {"deep": [1, "two", 1.5]}, "gone": None})
    assert t.get({"pk": "a", "sk": "1"}) == {"pk": "a", "sk": "1", "n": Decimal(3), "f": Decimal("0.25"), "d": Decimal(0),
                                             "s": "x", "b": True, "roles": {"ops", "invoke"},
                                             "m": {"deep": [Decimal(1), "two", Decimal("1.5")]}}
    assert t.get({"pk": "a", "sk": "2"}) is None


def test_numbers_keep_all_38_digits_and_refuse_more(t: Table) -> None:
    import decimal

    exact = Decimal("1234567890123456789012345678901.2345678")  # 38 significant digits: DynamoDB's limit
    t.put({"pk": "a", "sk": "1", "n": exact, "tiny": Decimal("0.0000001234")})
    assert t.get({"pk": "a", "sk": "1"}) == {"pk": "a", "sk": "1", "n": exact, "tiny": Decimal("0.0000001234")}
    with pytest.raises(decimal.DecimalException):  # as boto3 refuses it
        t.put({"pk": "a", "sk": "2", "n": Decimal("1." + "1" * 40)})
    assert t.get({"pk": "a", "sk": "2"}) is None


def test_put_replaces_the_whole_item(t: Table) -> None:
    t.put({"pk": "a", "sk": "1", "old": 1})
    t.put({"pk": "a", "sk": "1", "new": 2})
    assert t.get({"pk": "a", "sk": "1"}) == {"pk": "a", "sk": "1", "new": 2}


def test_put_new_refuses_an_existing_key_and_keeps_the_first_item(t: Table) -> None:
    t.put_new({"pk": "a", "sk": "1", "v": "first"})
    with pytest.raises(ConditionFailed) as refused:
        t.put_new({"pk": "a", "sk": "1", "v": "second"})
    assert refused.value.failed == (0,)
    assert t.get({"pk": "a", "sk": "1"})["v"] == "first"
    t.put_new({"pk": "a", "sk": "2", "v": "other sort key"})  # same partition, another item


def test_update_creates_a_missing_item_and_add_counts_absent_as_zero(t: Table) -> None:
    after = t.update_if({"pk": "a", "sk": "1"}, add={"calls": 1, "cost": Decimal("0.25")}, set={"label": "x"})
    assert after == {"pk": "a", "sk": "1", "calls": 1, "cost": Decimal("0.25"), "label": "x"}
    after = t.update_if({"pk": "a", "sk": "1"}, add={"calls": 1, "cost": Decimal("-0.05")}, remove=("label",))
    assert after == {"pk": "a", "sk": "1", "calls": 2, "cost": Decimal("0.2")}


def test_conditional_add_never_passes_the_ceiling(t: Table) -> None:
    """The budget reservation: ADD only while the committed total leaves room."""
    key = {"pk": "tenant", "sk": "2026-12"}

    def reserve(amount: str, limit: str = "1") -> Decimal:
        ceiling = Decimal(limit) - Decimal(amount)
        return t.update_if(key, add={"committed": Decimal(amount)},
                           condition=attr("committed").not_exists() | attr("committed").lte(ceiling))["committed"]

    assert reserve("0.6") == Decimal("0.6")
    assert reserve("0.4") == Decimal("1")
    with pytest.raises(ConditionFailed):
        reserve("0.01")
    assert t.get(key)["committed"] == Decimal(1)


def test_a_failed_condition_on_a_missing_item_creates_nothing(t: Table) -> None:
    with pytest.raises(ConditionFailed):
        t.update_if({"pk": "a", "sk": "1"}, set={"v": 1}, condition=attr("pk").exists())
    assert t.get({"pk": "a", "sk": "1"}) is None


def test_conditions_follow_dynamodb_on_absent_and_mistyped_attributes(t: Table) -> None:
    key = {"pk": "a", "sk": "1"}
    t.put({**key, "status": "RUNNING", "n": 5, "text": "abc"})

    def holds(condition) -> bool:
        try:
            t.update_if(key, set={"touched": True}, condition=condition)
            return True
        except ConditionFailed:
            return False

    assert holds(attr("status").eq("RUNNING"))
    assert not holds(attr("status").eq("DONE"))
    assert not holds(attr("missing").eq("x"))
    assert holds(attr("missing").ne("x"))
    assert holds(attr("n").lt(9) & attr("n").gte(5))
    assert holds(attr("n").between(1, 5))
    assert not holds(attr("missing").lte(1))
    assert holds(~attr("status").is_in(["SUCCEEDED", "FAILED"]))
    assert not holds(~attr("status").is_in(["RUNNING", "FAILED"]))
    assert holds(attr("text").begins_with("ab"))
    assert not holds(attr("n").begins_with("5"))
    assert holds(attr("missing").eq(0) | attr("missing").not_exists())  # "absent counts as 0"


def test_delete_returns_the_old_item_and_honours_its_condition(t: Table) -> None:
    t.put({"pk": "a", "sk": "1", "v": 1})
    with pytest.raises(ConditionFailed):
        t.delete({"pk": "a", "sk": "1"}, condition=attr("v").eq(2))
    assert t.delete({"pk": "a", "sk": "1"}, condition=attr("v").eq(1)) == {"pk": "a", "sk": "1", "v": 1}
    assert t.delete({"pk": "a", "sk": "1"}) is None
    assert t.get({"pk": "a", "sk": "1"}) is None


def test_query_reads_one_partition_in_sort_key_order(t: Table) -> None:
    for sk in ("conv#b", "conv#a#turn#000002", "conv#a", "conv#a#turn#000001", "tool#x"):
        t.put({"pk": "tenant", "sk": sk})
    t.put({"pk": "other", "sk": "conv#a"})
    assert [i["sk"] for i in t.query("tenant")] == ["conv#a", "conv#a#turn#000001", "conv#a#turn#000002", "conv#b", "tool#x"]
    assert [i["sk"] for i in t.query("tenant", prefix="conv#a#turn#", consistent=True)] == ["conv#a#turn#000001", "conv#a#turn#000002"]
    assert [i["sk"] for i in t.query("tenant", descending=True, limit=2)] == ["tool#x", "conv#b"]
    assert t.query("nobody") == []
    assert t.query("tenant", prefix="conv#b", attributes=["pk", "sk"]) == [{"pk": "tenant", "sk": "conv#b"}]


def test_delete_many_deletes_past_one_batch(t: Table) -> None:
    for n in range(60):
        t.put({"pk": "p", "sk": f"{n:03d}", "v": n})
    t.put({"pk": "q", "sk": "000"})
    t.delete_many([{"pk": "p", "sk": f"{n:03d}"} for n in range(60)] + [{"pk": "p", "sk": "never-written"}])
    assert t.query("p") == [] and t.get({"pk": "q", "sk": "000"}) is not None


def test_query_reads_every_page(make) -> None:
    t = make("big")
    blob = "x" * 60_000  # 20 items of 60 kB pass DynamoDB's 1 MB page
    for n in range(20):
        t.put({"pk": "p", "sk": f"{n:03d}", "blob": blob})
    assert [i["sk"] for i in t.query("p")] == [f"{n:03d}" for n in range(20)]


def test_scan_filters_items(t: Table) -> None:
    t.put({"pk": "a", "sk": "limit", "usd": 5})
    t.put({"pk": "b", "sk": "limit", "usd": 7})
    t.put({"pk": "a", "sk": "2026-12", "committed": 1})
    assert sorted(i["pk"] for i in t.scan(attr("sk").eq("limit"))) == ["a", "b"]
    assert len(list(t.scan())) == 3


def test_a_transaction_across_tables_is_all_or_nothing(make) -> None:
    """The ledger's write: the record once, and its aggregate only with it."""
    ledger, aggregates = make("ledger", ("request_id",)), make("aggregates")

    def record(request_id: str) -> None:
        transact([Put(ledger, {"request_id": request_id, "cost": Decimal("0.5")}, attr("request_id").not_exists()),
                  Update(aggregates, {"pk": "day#2026-12-03", "sk": "t#bedrock#m"}, add={"calls": 1, "cost": Decimal("0.5")})])

    record("r1")
    with pytest.raises(ConditionFailed) as duplicate:
        record("r1")
    assert duplicate.value.failed == (0,)
    record("r2")
    assert aggregates.get({"pk": "day#2026-12-03", "sk": "t#bedrock#m"})["calls"] == 2
    assert ledger.get({"request_id": "r2"})["cost"] == Decimal("0.5")


def test_a_transaction_names_the_operations_whose_condition_failed(t: Table) -> None:
    t.put({"pk": "conv", "sk": "meta", "turns": 3})
    t.put({"pk": "conv", "sk": "other", "v": 1})
    with pytest.raises(ConditionFailed) as stale:
        transact([Put(t, {"pk": "conv", "sk": "turn#4"}, attr("sk").not_exists()),
                  Put(t, {"pk": "conv", "sk": "meta", "turns": 4}, attr("turns").eq(2)),
                  Check(t, {"pk": "conv", "sk": "other"}, attr("v").eq(1))])
    assert stale.value.failed == (1,)
    assert t.get({"pk": "conv", "sk": "turn#4"}) is None
    transact([Delete(t, {"pk": "conv", "sk": "meta"}, attr("turns").eq(3)), Put(t, {"pk": "conv", "sk": "turn#4"})])
    assert t.get({"pk": "conv", "sk": "meta"}) is None and t.get({"pk": "conv", "sk": "turn#4"}) is not None


def test_a_transaction_touches_an_item_once(t: Table) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises((ValueError, ClientError)):
        transact([Put(t, {"pk": "a", "sk": "1"}), Update(t, {"pk": "a", "sk": "1"}, add={"n": 1})])
    assert t.get({"pk": "a", "sk": "1"}) is None


def test_delete_many_backs_off_before_resending_what_dynamodb_left_unprocessed() -> None:
    from chalicelib.table import DynamoTable, IncompleteBatch

    class Throttled:
        """BatchWriteItem that leaves everything unprocessed `refusals` times, then takes it."""

        def __init__(self, refusals: int) -> None:
            self.refusals, self.sends = refusals, 0

        def batch_write_item(self, RequestItems: dict) -> dict:  # noqa: N803 (boto3's parameter name)
            self.sends += 1
            return {"UnprocessedItems": RequestItems} if self.sends <= self.refusals else {}

    waits: list[float] = []
    client = Throttled(refusals=2)
    DynamoTable("t", ("pk", "sk"), client).delete_many([{"pk": "p", "sk": "1"}], sleep=waits.append)
    assert client.sends == 3 and len(waits) == 2 and all(0 <= w <= 0.5 for w in waits)  # a wait before each resend only
    waits.clear()
    with pytest.raises(IncompleteBatch):
        DynamoTable("t", ("pk", "sk"), Throttled(refusals=99)).delete_many([{"pk": "p", "sk": "1"}], attempts=4, sleep=waits.append)
    assert len(waits) == 3  # bounded: attempts sends, attempts - 1 waits
