"""Tenant authentication by API key.

Keys are stored only as SHA-256 digests (the DynamoDB key of the tenants table), so the
table never holds a usable secret. A warm Lambda caches lookups for a short TTL.
"""
from __future__ import annotations

import hashlib
import hmac
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .errors import Forbidden, Unauthenticated
from .table import Table, open_table
from .ttl_cache import TTLCache

API_KEY_HEADER = "x-api-key"


class Tenant(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    tenant: str
    roles: tuple[str, ...] = ("invoke",)
    enabled: bool = True
    key_hash: str = Field(repr=False)

    def require_role(self, role: str) -> None:
        if role not in self.roles:
            raise Forbidden(f"This API key lacks the {role!r} role.", {"required_role": role})


def bearer_token(authorization: str) -> str:
    """The key in `Authorization: Bearer <key>` (how OpenAI's SDKs send theirs), or ''."""
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def hash_api_key(api_key: str) -> str:
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


class TenantStore:
    """`table_name`: the tenants table's name, or a Table (an InMemoryTable twin in unit tests)."""

    def __init__(self, table_name: "str | Table", cache_ttl_s: float, dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, ("key_hash",), dynamodb)
        self._cache: TTLCache[Tenant | None] = TTLCache(cache_ttl_s)

    def put(self, tenant: str, api_key: str, roles: tuple[str, ...] = ("invoke",)) -> None:
        """Create or replace a tenant key (used by the bootstrap and admin tooling)."""
        self._table.put({"key_hash": hash_api_key(api_key), "tenant": tenant, "roles": set(roles), "enabled": True})
        self.register(tenant)

    def register(self, tenant: str) -> None:
        """Mark the tenant as existing (event triggers name tenants without keys). The item's key can
        never collide with a key digest: digests are 64 hex characters."""
        self._table.put({"key_hash": f"tenant#{tenant}", "tenant": tenant})

    def exists(self, tenant: str) -> bool:
        return self._table.get({"key_hash": f"tenant#{tenant}"}, consistent=False) is not None

    def _load(self, key_hash: str) -> Tenant | None:
        item = self._table.get({"key_hash": key_hash}, consistent=False)
        if not item or "roles" not in item:
            return None
        return Tenant(tenant=item["tenant"], roles=tuple(sorted(item["roles"])), enabled=item.get("enabled", True),
                      key_hash=item["key_hash"])

    def lookup(self, key_hash: str) -> Tenant | None:
        return self._cache.get_or_load(key_hash, lambda: self._load(key_hash))

    def authenticate(self, headers: dict[str, str]) -> Tenant:
        """The tenant owning the request's API key, or Unauthenticated/Forbidden."""
        api_key = headers.get(API_KEY_HEADER) or bearer_token(headers.get("authorization") or "")
        if not api_key:
            raise Unauthenticated("Missing API key: send it in the x-api-key header (or as Authorization: Bearer).")
        presented = hash_api_key(api_key)
        tenant = self.lookup(presented)
        # compare_digest keeps the final check constant-time even though the lookup is by digest.
        if tenant is None or not hmac.compare_digest(tenant.key_hash, presented):
            raise Unauthenticated("Invalid API key.")
        if not tenant.enabled:
            raise Forbidden("This tenant is disabled.")
        return tenant
