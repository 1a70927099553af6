"""The ledger: one record per metered call, written exactly once, with daily aggregates.

The record and its aggregate increment are one DynamoDB transaction: a conditional put on the
request id plus an atomic ADD on the day's aggregate item, so a retry neither double counts nor
leaves the aggregate behind. Aggregates are sharded (pk `day#<day>#s<n>`) so one hot tenant cannot
throttle a single partition.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict

from .. import aws
from ..dynamo import from_item
from ..core import Usage

DEFAULT_SHARDS = 8


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
    created_at: datetime

    @property
    def day(self) -> str:
        return self.created_at.astimezone(timezone.utc).strftime("%Y-%m-%d")

    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "request_id": {"S": self.request_id},
            "tenant": {"S": self.tenant},
            "model": {"S": self.model},
            "backend": {"S": self.backend},
            "kind": {"S": self.kind},
            "day": {"S": self.day},
            "created_at": {"S": self.created_at.isoformat()},
            "catalog_version": {"S": self.catalog_version},
            "trace_id": {"S": self.trace_id},
            "input_tokens": {"N": str(self.usage.input_tokens)},
            "output_tokens": {"N": str(self.usage.output_tokens)},
            "cache_read_tokens": {"N": str(self.usage.cache_read_tokens)},
            "cache_write_tokens": {"N": str(self.usage.cache_write_tokens)},
            "cache_write_1h_tokens": {"N": str(self.usage.cache_write_1h_tokens)},
            "priced": {"BOOL": self.cost_usd is not None},
        }
        if self.cost_usd is not None:
            item["cost_usd"] = {"N": number(self.cost_usd)}
        if self.gpu_seconds is not None:
            item["gpu_seconds"] = {"N": number(self.gpu_seconds)}
        return item


def number(value: Decimal | int) -> str:
    """A DynamoDB number in plain notation with no trailing zeros ("0", never "0E-8" or "0.00000000",
    whose sums moto renders in exponent form and then refuses)."""
    return format(value.normalize(), "f") if isinstance(value, Decimal) else str(value)


def aggregate_key(day: str, shard: int) -> str:
    return f"day#{day}#s{shard}"


def shard_of(request_id: str, shards: int) -> int:
    return int(hashlib.sha256(request_id.encode()).hexdigest()[:8], 16) % shards


class Ledger:
    def __init__(self, table_name: str, aggregates_table: str = "", shards: int = DEFAULT_SHARDS, dynamodb: Any | None = None) -> None:
        self._table_name = table_name
        self._aggregates = aggregates_table
        self._shards = shards
        self._dynamodb = dynamodb

    @property
    def shards(self) -> int:
        return self._shards

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def record(self, entry: LedgerEntry) -> bool:
        """Write the entry and its aggregate once; False when this request id was already recorded."""
        from botocore.exceptions import ClientError

        put = {"Put": {"TableName": self._table_name, "Item": entry.to_item(),
                       "ConditionExpression": "attribute_not_exists(request_id)"}}
        try:
            if not self._aggregates:
                self._client().put_item(**put["Put"])
            else:
                self._client().transact_write_items(TransactItems=[put, {"Update": self._aggregate_update(entry)}])
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
            reasons = [reason.get("Code") for reason in exc.response.get("CancellationReasons", [])]
            if code == "ConditionalCheckFailedException" or (code == "TransactionCanceledException" and reasons[:1] == ["ConditionalCheckFailed"]):
                return False
            raise
        return True

    def _aggregate_update(self, entry: LedgerEntry) -> dict[str, Any]:
        values = {
            ":calls": {"N": "1"},
            ":input": {"N": str(entry.usage.input_tokens)},
            ":output": {"N": str(entry.usage.output_tokens)},
            ":cache": {"N": str(entry.usage.cache_read_tokens + entry.usage.cache_write_tokens + entry.usage.cache_write_1h_tokens)},
            ":cache_read": {"N": str(entry.usage.cache_read_tokens)},
            ":cache_write": {"N": str(entry.usage.cache_write_tokens)},
            ":cache_write_1h": {"N": str(entry.usage.cache_write_1h_tokens)},
            ":cost": {"N": number(entry.cost_usd if entry.cost_usd is not None else Decimal(0))},
            ":unpriced": {"N": "0" if entry.cost_usd is not None else "1"},
            ":gpu": {"N": number(entry.gpu_seconds or Decimal(0))},
        }
        return {
            "TableName": self._aggregates,
            "Key": {"pk": {"S": aggregate_key(entry.day, shard_of(entry.request_id, self._shards))},
                    "sk": {"S": f"{entry.tenant}#{entry.backend}#{entry.model}"}},
            # cache_tokens (all cache tokens) stays for older readers; the split prices the break-even's mix.
            "UpdateExpression": ("ADD calls :calls, input_tokens :input, output_tokens :output, cache_tokens :cache, "
                                 "cache_read_tokens :cache_read, cache_write_tokens :cache_write, cache_write_1h_tokens :cache_write_1h, "
                                 "cost_usd :cost, unpriced_calls :unpriced, gpu_seconds :gpu"),
            "ExpressionAttributeValues": values,
        }

    def daily_aggregates(self, days: list[str]) -> Iterator[dict[str, Any]]:
        """Every aggregate row for the given days (all shards), as plain dicts with Decimals."""
        paginator = self._client().get_paginator("query")
        for day in days:
            for shard in range(self._shards):
                pages = paginator.paginate(TableName=self._aggregates, KeyConditionExpression="pk = :pk",
                                           ExpressionAttributeValues={":pk": {"S": aggregate_key(day, shard)}})
                for page in pages:
                    for item in page["Items"]:
                        row = from_item(item, plain=False)  # money stays Decimal
                        tenant, backend, model = row["sk"].split("#", 2)
                        yield {"day": day, "tenant": tenant, "backend": backend, "model": model, **row}
