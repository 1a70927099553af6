"""Per-tenant service settings (today: the routing mode), with an account-wide default under tenant '*'.

Stored in the tenants table as one item per tenant keyed `settings#<tenant>` (a key that can never
collide with an API key digest or a `tenant#` marker), so no new infrastructure is needed. Screening
policy lives elsewhere (the policies table): a routing mode used to be stored there, and
`migrate_routing_modes` moves it here once (`crossover routing migrate`).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Iterable, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from . import aws
from .observability import logger

DEFAULT_TENANT = "*"
RoutingMode = Literal["bedrock", "self_hosted", "auto"]


class TenantSettings(BaseModel):
    """What one tenant (or the '*' default) sets; None: not set here, the next level decides."""

    model_config = ConfigDict(extra="ignore")

    routing_mode: RoutingMode | None = None

    def over(self, default: "TenantSettings") -> "TenantSettings":
        """These settings with anything unset taken from `default` (pure)."""
        return TenantSettings(**{**default.model_dump(exclude_none=True), **self.model_dump(exclude_none=True)})


class TenantSettingsStore(Protocol):
    def get(self, tenant: str) -> TenantSettings:
        """What is stored for exactly this key (`*` for the default); empty settings when nothing is."""

    def put(self, tenant: str, settings: TenantSettings) -> None:
        """Replace what is stored for this key."""


def effective(store: TenantSettingsStore, tenant: str) -> TenantSettings:
    """The tenant's settings over the account-wide default."""
    return store.get(tenant).over(store.get(DEFAULT_TENANT))


class InMemoryTenantSettings:
    """The twin for tests and tools: same contract, a dict."""

    def __init__(self, stored: dict[str, TenantSettings] | None = None) -> None:
        self._stored = dict(stored or {})

    def get(self, tenant: str) -> TenantSettings:
        return self._stored.get(tenant, TenantSettings())

    def put(self, tenant: str, settings: TenantSettings) -> None:
        self._stored[tenant] = settings


class DynamoTenantSettings:
    """Settings items in the tenants table, cached per process for `cache_ttl_s` (they change rarely)."""

    def __init__(self, table_name: str, cache_ttl_s: float, dynamodb: Any | None = None,
                 clock: "Any" = time.monotonic) -> None:
        self._table = table_name
        self._ttl = cache_ttl_s
        self._dynamodb = dynamodb
        self._clock = clock
        self._cache: dict[str, tuple[float, TenantSettings]] = {}
        self._lock = threading.Lock()

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    @staticmethod
    def _key(tenant: str) -> dict[str, Any]:
        return {"key_hash": {"S": f"settings#{tenant}"}}

    def get(self, tenant: str) -> TenantSettings:
        now = self._clock()
        cached = self._cache.get(tenant)
        if cached and cached[0] > now:
            return cached[1]
        item = self._client().get_item(TableName=self._table, Key=self._key(tenant)).get("Item") or {}
        settings = TenantSettings()
        if "routing_mode" in item:
            try:
                settings = TenantSettings(routing_mode=item["routing_mode"]["S"])
            except (ValidationError, KeyError):
                # A broken item must not pick a backend: fall through to the default, and say so.
                logger.error("tenant_settings.invalid", extra={"tenant": tenant})
        with self._lock:
            self._cache[tenant] = (now + self._ttl, settings)
        return settings

    def put(self, tenant: str, settings: TenantSettings) -> None:
        item: dict[str, Any] = {**self._key(tenant), "tenant": {"S": tenant}}
        if settings.routing_mode is not None:
            item["routing_mode"] = {"S": settings.routing_mode}
        self._client().put_item(TableName=self._table, Item=item)
        with self._lock:
            self._cache.clear()


def routing_modes_to_migrate(policy_items: Iterable[dict[str, Any]], store: TenantSettingsStore) -> dict[str, str]:
    """Tenant -> mode for every policy item that still carries a routing mode the settings lack (pure over its inputs)."""
    moves: dict[str, str] = {}
    for item in policy_items:
        mode = item.get("routing_mode", {}).get("S")
        tenant = item.get("tenant", {}).get("S")
        if mode and tenant and store.get(tenant).routing_mode is None:
            moves[tenant] = mode
    return moves


def migrate_routing_modes(policies_table: str, store: TenantSettingsStore, dynamodb: Any | None = None) -> dict[str, str]:
    """Copy routing modes from the screening policies table into tenant settings (idempotent: a mode
    already in the settings wins). The policy items keep theirs, unread, so a rollback still works."""
    client = dynamodb or aws.client("dynamodb")
    items = [item for page in client.get_paginator("scan").paginate(TableName=policies_table) for item in page["Items"]]
    moves = routing_modes_to_migrate(items, store)
    for tenant, mode in sorted(moves.items()):
        store.put(tenant, TenantSettings(routing_mode=mode).over(store.get(tenant)))  # validates the mode
        logger.info("tenant_settings.migrated", extra={"tenant": tenant, "routing_mode": mode})
    return moves
