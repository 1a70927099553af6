"""The ledger: one record per metered call, written exactly once (conditional put on request id)."""
from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from .. import aws
from .pricing import Usage


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request_id: str
    tenant: str
    model: str
    backend: str
    kind: str  # invoke | job | fallback
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
            "priced": {"BOOL": self.cost_usd is not None},
        }
        if self.cost_usd is not None:
            item["cost_usd"] = {"N": str(self.cost_usd)}
        if self.gpu_seconds is not None:
            item["gpu_seconds"] = {"N": str(self.gpu_seconds)}
        return item


class Ledger:
    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self._table_name = table_name
        self._dynamodb = dynamodb

    def record(self, entry: LedgerEntry) -> bool:
        """Write the entry; False when this request id was already recorded (a retry)."""
        from botocore.exceptions import ClientError

        try:
            (self._dynamodb or aws.client("dynamodb")).put_item(
                TableName=self._table_name,
                Item=entry.to_item(),
                ConditionExpression="attribute_not_exists(request_id)",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
