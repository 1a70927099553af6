"""Where registered tools and named agents live: one DynamoDB table, partition `tenant`, sort key `item`
(`tool#<name>`, `agent#<name>`), so a tenant's list is one Query and no key names another tenant.

A table of its own rather than a key space in an existing one: the policies table has no sort key,
and the others (ledger, jobs, events) have other lifecycles and IAM readers. A separate table gets a
grant of exactly GetItem/PutItem/DeleteItem/Query for the API function, and its own backups.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from ..dynamo import plain
from ..table import InMemoryTable, Table, open_table

Kind = Literal["tool", "agent"]
# Bounds a tenant's registry (and so the work of listing it and of the loop's tool config).
MAX_ITEMS_PER_KIND = 100


KEYS = ("tenant", "item")


def _record(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "name": name, "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _key(tenant: str, kind: Kind, name: str) -> dict[str, str]:
    return {"tenant": tenant, "item": f"{kind}#{name}"}


class RegistryStore:
    """Registered tools and agents on their table: DynamoDB by name, or a Table (InMemoryRegistryStore's twin)."""

    def __init__(self, table_name: "str | Table", dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, KEYS, dynamodb)

    def put(self, tenant: str, kind: Kind, name: str, body: dict[str, Any]) -> dict[str, Any]:
        record = _record(name, body)
        self._table.put({**_key(tenant, kind, name), "body": record})
        return record

    def get(self, tenant: str, kind: Kind, name: str) -> dict[str, Any] | None:
        item = self._table.get(_key(tenant, kind, name))
        return plain(item["body"]) if item else None

    def list(self, tenant: str, kind: Kind) -> list[dict[str, Any]]:
        return [plain(item["body"]) for item in self._table.query(tenant, prefix=f"{kind}#")]

    def delete(self, tenant: str, kind: Kind, name: str) -> bool:
        return self._table.delete(_key(tenant, kind, name)) is not None


# The name services.py builds the store by (the one implementation, on DynamoDB by table name).
DynamoRegistryStore = RegistryStore


class InMemoryRegistryStore(RegistryStore):
    """The same store on the table's in-memory twin (unit tests)."""

    def __init__(self) -> None:
        super().__init__(InMemoryTable("registry", KEYS))
