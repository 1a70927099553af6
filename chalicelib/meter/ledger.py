"""The ledger: one record per metered call, written exactly once, with daily aggregates.

The record and its aggregate increment are one DynamoDB transaction: a conditional put on the
request id plus an atomic ADD on the day's aggregate item, so a retry neither double counts nor
leaves the aggregate behind. Aggregates are sharded (pk `day#<day>#s<n>`) so one hot tenant cannot
throttle a single partition.
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict

from ..core import Usage
from ..dynamo import number  # noqa: F401  (re-exported: callers format money for DynamoDB with it)
from ..table import ConditionFailed, Put, Table, Update, attr, open_table, transact

DEFAULT_SHARDS = 8
AGGREGATE_READERS = 10  # concurrent Query calls when a report reads many days (= botocore's default connection pool)


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request_id: str
    tenant: str
    model: str
    backend: str
    kind: str  # invoke | job | fallback | event
    usage: Usage
    cost_usd: Decimal | None
    catalog_version: str
    trace_id: str
    gpu_seconds: Decimal | None = None
    # a GPU attempt's capacity ("spot" | "on_demand"; None: unknown, priced on-demand) and its instance-seconds:
    # the report measures the queue's real spot share from these (gpu_seconds counts GPUs, not instances)
    capacity: str | None = None
    instance_seconds: Decimal | None = None
    created_at: datetime

    @property
    def day(self) -> str:
        return self.created_at.astimezone(timezone.utc).strftime("%Y-%m-%d")

    def to_record(self) -> dict[str, Any]:
        """The ledger item (plain values; the table facade types them)."""
        record: dict[str, Any] = {
            "request_id": self.request_id, "tenant": self.tenant, "model": self.model, "backend": self.backend,
            "kind": self.kind, "day": self.day, "created_at": self.created_at.isoformat(),
            "catalog_version": self.catalog_version, "trace_id": self.trace_id,
            "input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens,
            "cache_read_tokens": self.usage.cache_read_tokens, "cache_write_tokens": self.usage.cache_write_tokens,
            "cache_write_1h_tokens": self.usage.cache_write_1h_tokens, "priced": self.cost_usd is not None,
        }
        if self.cost_usd is not None:
            record["cost_usd"] = self.cost_usd
        if self.gpu_seconds is not None:
            record["gpu_seconds"] = self.gpu_seconds
        if self.instance_seconds is not None:
            record["instance_seconds"] = self.instance_seconds
            record["capacity"] = self.capacity or "unknown"
        return record

    def capacity_counters(self) -> dict[str, Any]:
        """What this entry adds to the day's GPU capacity counters (empty unless it is a GPU attempt)."""
        if self.instance_seconds is None:
            return {}
        return gpu_capacity_counters(self.capacity, self.instance_seconds)


def gpu_capacity_counters(capacity: str | None, instance_seconds: Decimal) -> dict[str, Any]:
    """One GPU attempt's share of the day's capacity counters. An attempt of unknown capacity (None, or "unknown"
    in a record) is priced on-demand but left out of the measured spot share, so it is counted apart. The unknown
    part is counted rather than the known one so that a day row written before these counters existed (or still
    being added to across the deploy) reads as "every attempt known", exactly as its reports read then."""
    unknown = capacity not in ("spot", "on_demand")
    return {"gpu_attempts": 1, "gpu_instance_seconds": instance_seconds,
            "gpu_spot_seconds": instance_seconds if capacity == "spot" else Decimal(0),
            "gpu_unknown_attempts": 1 if unknown else 0, "gpu_unknown_seconds": instance_seconds if unknown else Decimal(0)}


def aggregate_key(day: str, shard: int) -> str:
    return f"day#{day}#s{shard}"


def shard_of(request_id: str, shards: int) -> int:
    return int(hashlib.sha256(request_id.encode()).hexdigest()[:8], 16) % shards


class Ledger:
    """`table_name`/`aggregates_table`: DynamoDB table names, or Tables (InMemoryTable twins in unit tests)."""

    def __init__(self, table_name: "str | Table", aggregates_table: "str | Table" = "", shards: int = DEFAULT_SHARDS,
                 dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, ("request_id",), dynamodb)
        self._aggregates = open_table(aggregates_table, ("pk", "sk"), dynamodb) if aggregates_table else None
        self._shards = shards

    @property
    def shards(self) -> int:
        return self._shards

    def record(self, entry: LedgerEntry) -> bool:
        """Write the entry and its aggregate once; False when this request id was already recorded."""
        try:
            if self._aggregates is None:
                self._table.put_new(entry.to_record())
            else:
                transact([Put(self._table, entry.to_record(), attr("request_id").not_exists()), self._aggregate_update(entry)])
        except ConditionFailed as exc:
            if exc.failed[:1] == (0,):  # the record exists: a retry or replay, counted already
                return False
            raise
        return True

    def _aggregate_update(self, entry: LedgerEntry) -> Update:
        assert self._aggregates is not None
        usage = entry.usage
        # cache_tokens (all cache tokens) stays for older readers; the split prices the break-even's mix.
        return Update(self._aggregates,
                      {"pk": aggregate_key(entry.day, shard_of(entry.request_id, self._shards)), "sk": f"{entry.tenant}#{entry.backend}#{entry.model}"},
                      add={"calls": 1, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                           "cache_tokens": usage.cache_read_tokens + usage.cache_write_tokens + usage.cache_write_1h_tokens,
                           "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
                           "cache_write_1h_tokens": usage.cache_write_1h_tokens,
                           "cost_usd": entry.cost_usd if entry.cost_usd is not None else Decimal(0),
                           "unpriced_calls": 0 if entry.cost_usd is not None else 1, "gpu_seconds": entry.gpu_seconds or Decimal(0),
                           **entry.capacity_counters()})

    def daily_aggregates(self, days: list[str]) -> Iterator[dict[str, Any]]:
        """Every aggregate row for the given days (all shards), as plain dicts with Decimals, in day order.

        One Query per day and shard: a year's report is 366 x 8 = 2,928 of them, which one after another
        take longer than API Gateway's 29 s (6-16 s against moto in-process). They run on a bounded pool
        (boto3 clients are thread-safe), so the time grows with days / AGGREGATE_READERS.
        """
        if self._aggregates is None:
            return
        aggregates = self._aggregates
        partitions = [(day, shard) for day in days for shard in range(self._shards)]

        def read(partition: tuple[str, int]) -> list[dict[str, Any]]:
            day, shard = partition
            return list(aggregates.query(aggregate_key(day, shard)))  # money stays Decimal

        with ThreadPoolExecutor(max_workers=max(1, min(AGGREGATE_READERS, len(partitions)))) as pool:
            for (day, _), rows in zip(partitions, pool.map(read, partitions)):
                for row in rows:
                    tenant, backend, model = row["sk"].split("#", 2)
                    yield {"day": day, "tenant": tenant, "backend": backend, "model": model, **row}
