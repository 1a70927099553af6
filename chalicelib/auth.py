"""Tenant authentication by API key.

Keys are stored only as SHA-256 digests (the DynamoDB key of the tenants table), so the
table never holds a usable secret. A warm Lambda caches lookups for a short TTL.
"""
from __future__ import annotations

import hashlib
import hmac
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from . import aws
from .errors import Forbidden, Unauthenticated

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
    def __init__(self, table_name: str, cache_ttl_s: float, dynamodb: Any | None = None) -> None:
        self._table_name = table_name
        self._ttl = cache_ttl_s
        self._dynamodb = dynamodb
        self._cache: dict[str, tuple[float, Tenant | None]] = {}
        self._lock = threading.Lock()

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def put(self, tenant: str, api_key: str, roles: tuple[str, ...] = ("invoke",)) -> None:
        """Create or replace a tenant key (used by the bootstrap and admin tooling)."""
        self._client().put_item(
            TableName=self._table_name,
            Item={
                "key_hash": {"S": hash_api_key(api_key)},
                "tenant": {"S": tenant},
                "roles": {"SS": list(roles)},
                "enabled": {"BOOL": True},
            },
        )
        self.register(tenant)

    def register(self, tenant: str) -> None:
        """Mark the tenant as existing (event triggers name tenants without keys). The item's key can
        never collide with a key digest: digests are 64 hex characters."""
        self._client().put_item(TableName=self._table_name, Item={"key_hash": {"S": f"tenant#{tenant}"}, "tenant": {"S": tenant}})

    def exists(self, tenant: str) -> bool:
        return "Item" in self._client().get_item(TableName=self._table_name, Key={"key_hash": {"S": f"tenant#{tenant}"}})

    def lookup(self, key_hash: str) -> Tenant | None:
        now = time.monotonic()
        cached = self._cache.get(key_hash)
        if cached and cached[0] > now:
            return cached[1]
        item = self._client().get_item(TableName=self._table_name, Key={"key_hash": {"S": key_hash}}, ConsistentRead=False).get("Item")
        tenant = None
        if item and "roles" in item:
            tenant = Tenant(
                tenant=item["tenant"]["S"],
                roles=tuple(sorted(item.get("roles", {}).get("SS", ["invoke"]))),
                enabled=item.get("enabled", {}).get("BOOL", True),
                key_hash=item["key_hash"]["S"],
            )
        with self._lock:
            self._cache[key_hash] = (now + self._ttl, tenant)
        return tenant

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
