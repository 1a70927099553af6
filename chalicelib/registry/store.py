"""Where registered tools and named agents live: one DynamoDB table, partition `tenant`, sort key `item`
(`tool#<name>`, `agent#<name>`), so a tenant's list is one Query and no key names another tenant.

A table of its own rather than a key space in an existing one: the policies table has no sort key,
and the others (ledger, jobs, events) have other lifecycles and IAM readers. A separate table gets a
grant of exactly GetItem/PutItem/DeleteItem/Query for the API function, and its own backups.
"""
from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from .. import aws
from ..dynamo import from_item, to_item

Kind = Literal["tool", "agent"]
# Bounds a tenant's registry (and so the work of listing it and of the loop's tool config).
MAX_ITEMS_PER_KIND = 100


class RegistryStore(Protocol):
    def put(self, tenant: str, kind: Kind, name: str, body: dict[str, Any]) -> dict[str, Any]: ...
    def get(self, tenant: str, kind: Kind, name: str) -> dict[str, Any] | None: ...
    def list(self, tenant: str, kind: Kind) -> list[dict[str, Any]]: ...
    def delete(self, tenant: str, kind: Kind, name: str) -> bool: ...


def _record(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "name": name, "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


class InMemoryRegistryStore:
    """The twin used by unit tests."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def put(self, tenant: str, kind: Kind, name: str, body: dict[str, Any]) -> dict[str, Any]:
        record = _record(name, body)
        with self._lock:
            self._items[(tenant, kind, name)] = record
        return dict(record)

    def get(self, tenant: str, kind: Kind, name: str) -> dict[str, Any] | None:
        found = self._items.get((tenant, kind, name))
        return dict(found) if found else None

    def list(self, tenant: str, kind: Kind) -> list[dict[str, Any]]:
        return [dict(v) for (t, k, _), v in sorted(self._items.items()) if t == tenant and k == kind]

    def delete(self, tenant: str, kind: Kind, name: str) -> bool:
        with self._lock:
            return self._items.pop((tenant, kind, name), None) is not None


class DynamoRegistryStore:
    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self._table = table_name
        self._dynamodb = dynamodb

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def put(self, tenant: str, kind: Kind, name: str, body: dict[str, Any]) -> dict[str, Any]:
        record = _record(name, body)
        self._client().put_item(TableName=self._table, Item=to_item({"tenant": tenant, "item": f"{kind}#{name}", "body": record}))
        return record

    def get(self, tenant: str, kind: Kind, name: str) -> dict[str, Any] | None:
        item = self._client().get_item(TableName=self._table, Key={"tenant": {"S": tenant}, "item": {"S": f"{kind}#{name}"}},
                                       ConsistentRead=True).get("Item")
        return from_item(item)["body"] if item else None

    def list(self, tenant: str, kind: Kind) -> list[dict[str, Any]]:
        paginator = self._client().get_paginator("query")
        pages = paginator.paginate(TableName=self._table, KeyConditionExpression="tenant = :t AND begins_with(#i, :k)",
                                   ExpressionAttributeNames={"#i": "item"},
                                   ExpressionAttributeValues={":t": {"S": tenant}, ":k": {"S": f"{kind}#"}})
        return [from_item(item)["body"] for page in pages for item in page.get("Items", [])]

    def delete(self, tenant: str, kind: Kind, name: str) -> bool:
        answer = self._client().delete_item(TableName=self._table, Key={"tenant": {"S": tenant}, "item": {"S": f"{kind}#{name}"}},
                                            ReturnValues="ALL_OLD")
        return "Attributes" in answer
