"""Store cost per operation through the table facade (chalicelib/table.py).

1. Twin: Ledger.record (record + aggregate, one transaction) and Budgets reserve+settle on InMemoryTable:
   what a unit test pays per operation.
2. Facade overhead on DynamoDB: the same calls on DynamoTable with a client that answers at once,
   i.e. our serialisation and expression building alone, without any DynamoDB (or moto) time.
3. The same on moto in-process, for scale (moto's own cost dominates).
"""
from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable

from common import summary_ms  # noqa: F401  (sets sys.path)

os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
    os.environ.pop(name, None)

CALLS = int(os.environ.get("BENCH_STORE_CALLS", 2000))


class InstantClient:
    """A DynamoDB client that answers every call at once (measures our side of a request)."""

    def transact_write_items(self, **kwargs: Any) -> dict[str, Any]:
        return {}

    def update_item(self, **kwargs: Any) -> dict[str, Any]:
        return {"Attributes": {"committed_usd": {"N": "0.5"}}}

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        return {"Item": {"tenant": {"S": "acme"}, "period": {"S": "limit"}, "limit_usd": {"N": "1000000"}}}


def timed(op: Callable[[int], Any], calls: int) -> list[float]:
    samples = []
    for n in range(calls):
        started = time.perf_counter()
        op(n)
        samples.append(time.perf_counter() - started)
    return samples


def run(label: str, ledger_table: Any, aggregates: Any, budgets_table: Any, calls: int) -> None:
    from chalicelib.core import Usage
    from chalicelib.meter.budgets import Budgets
    from chalicelib.meter.ledger import Ledger, LedgerEntry

    ledger = Ledger(ledger_table, aggregates, 8)
    budgets = Budgets(budgets_table, cache_ttl_s=3600)
    budgets.set_limit("acme", Decimal("1000000"))
    when = datetime.now(timezone.utc)

    def record(n: int) -> None:
        ledger.record(LedgerEntry(request_id=f"{label}-{n}", tenant="acme", model="m", backend="bedrock", kind="invoke",
                                  usage=Usage(input_tokens=100, output_tokens=20), cost_usd=Decimal("0.0012"),
                                  catalog_version="bench", trace_id="t", created_at=when))

    def reserve_settle(n: int) -> None:
        budgets.settle(budgets.reserve("acme", Decimal("0.01")), Decimal("0.004"))

    record(-1), reserve_settle(-1)  # warm: imports, clients
    print(f"{label:28s} Ledger.record          {summary_ms(timed(record, calls))}")
    print(f"{label:28s} Budgets.reserve+settle {summary_ms(timed(reserve_settle, calls))}")


def main() -> None:
    from chalicelib.table import DynamoTable, InMemoryTable

    run("twin (InMemoryTable)", InMemoryTable("ledger", ("request_id",)), InMemoryTable("agg", ("pk", "sk")),
        InMemoryTable("budgets", ("tenant", "period")), CALLS)
    instant = InstantClient()

    class SettableBudgets(DynamoTable):
        def put(self, item: Any, condition: Any = None) -> None:  # set_limit's write: not what is measured
            return None

    run("facade only (instant client)", DynamoTable("ledger", ("request_id",), instant), DynamoTable("agg", ("pk", "sk"), instant),
        SettableBudgets("budgets", ("tenant", "period"), instant), CALLS)

    import boto3
    from moto import mock_aws

    from devstack.bootstrap import bootstrap
    from chalicelib.config import get_settings

    with mock_aws():
        bootstrap({})
        settings, client = get_settings(), boto3.client("dynamodb")
        run("moto in-process", DynamoTable(settings.meter.ledger_table, ("request_id",), client),
            DynamoTable(settings.meter.aggregates_table, ("pk", "sk"), client), DynamoTable(settings.meter.budgets_table, ("tenant", "period"), client),
            min(CALLS, 500))


if __name__ == "__main__":
    main()
