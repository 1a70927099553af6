"""Per-tenant service settings (today: the routing mode), with an account-wide default under tenant '*'.

Stored in the tenants table as one item per tenant keyed `settings#<tenant>` (a key that can never
collide with an API key digest or a `tenant#` marker), so no new infrastructure is needed. The store
works on any `chalicelib.table.Table`: DynamoDB in the app, the `InMemoryTable` twin in unit tests
(`in_memory_settings`). Screening policy lives elsewhere (the policies table): a routing mode used to
be stored there, and `migrate_routing_modes` moves it here once (`crossover routing migrate`).
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Literal, get_args

from pydantic import BaseModel, ConfigDict

from .observability import logger
from .table import InMemoryTable, Table, open_table
from .tenant_default import fold, lookup_order, parse_stored
from .ttl_cache import TTLCache

KEYS = ("key_hash",)
RoutingMode = Literal["bedrock", "self_hosted", "auto"]


class TenantSettings(BaseModel):
    """What one tenant (or the '*' default) sets; None: not set here, the next level decides."""

    model_config = ConfigDict(extra="ignore")

    routing_mode: RoutingMode | None = None

    def over(self, default: "TenantSettings") -> "TenantSettings":
        """These settings with anything unset taken from `default` (pure)."""
        return TenantSettings(**{**default.model_dump(exclude_none=True), **self.model_dump(exclude_none=True)})


class TenantSettingsStore:
    """`table`: the tenants table's name, or a Table (an InMemoryTable twin in unit tests). Reads are
    cached per process for `cache_ttl_s` (settings change rarely); a put clears this process's cache."""

    def __init__(self, table: "str | Table", cache_ttl_s: float = 0.0, dynamodb: Any | None = None,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self._table = open_table(table, KEYS, dynamodb)
        self._cache: TTLCache[TenantSettings] = TTLCache(cache_ttl_s, timer=timer)

    @staticmethod
    def _key(tenant: str) -> dict[str, Any]:
        return {"key_hash": f"settings#{tenant}"}

    def get(self, tenant: str) -> TenantSettings:
        """What is stored for exactly this key (`*` for the default); empty settings when nothing is."""
        return self._cache.get_or_load(tenant, lambda: self._load(tenant))

    def _load(self, tenant: str) -> TenantSettings:
        # A broken item must not pick a backend: it reads as empty, so the next level decides.
        item = self._table.get(self._key(tenant), consistent=False)
        stored = parse_stored(TenantSettings, item, tenant, "tenant_settings.invalid")
        return stored if stored is not None else TenantSettings()

    def put(self, tenant: str, settings: TenantSettings) -> None:
        """Replace what is stored for this key."""
        self._table.put({**self._key(tenant), "tenant": tenant, **settings.model_dump(exclude_none=True)})
        self._cache.invalidate()

    def effective(self, tenant: str) -> TenantSettings:
        """The tenant's settings over the account-wide default."""
        return fold(TenantSettings(), (self.get(key) for key in lookup_order(tenant)))


def in_memory_settings(stored: dict[str, TenantSettings] | None = None) -> TenantSettingsStore:
    """The twin: the same store on an InMemoryTable, preloaded with `stored`."""
    store = TenantSettingsStore(InMemoryTable("tenants", KEYS))
    for tenant, settings in (stored or {}).items():
        store.put(tenant, settings)
    return store


def routing_modes_to_migrate(policy_items: Iterable[dict[str, Any]], store: TenantSettingsStore) -> dict[str, str]:
    """Tenant -> mode for every policy item that still carries a routing mode the settings lack."""
    moves: dict[str, str] = {}
    for item in policy_items:
        mode, tenant = item.get("routing_mode"), item.get("tenant")
        if mode in get_args(RoutingMode) and tenant and store.get(tenant).routing_mode is None:
            moves[tenant] = mode
    return moves


def migrate_routing_modes(policies: "str | Table", store: TenantSettingsStore, dynamodb: Any | None = None) -> dict[str, str]:
    """Copy routing modes from the screening policies table into tenant settings (idempotent: a mode
    already in the settings wins). The policy items keep theirs, unread, so a rollback still works."""
    moves = routing_modes_to_migrate(open_table(policies, ("tenant",), dynamodb).scan(), store)
    for tenant, mode in sorted(moves.items()):
        store.put(tenant, TenantSettings(routing_mode=mode).over(store.get(tenant)))  # validates the mode
        logger.info("tenant_settings.migrated", extra={"tenant": tenant, "routing_mode": mode})
    return moves
