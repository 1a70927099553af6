"""Screening at the edges: per-tenant policy from DynamoDB, managed checks, audit log, errors.

Every entry point (HTTP invoke and jobs, S3 and SQS triggers, tool results in the agent loop)
calls `ScreeningService`; the decision itself is `core.screen`, a pure function.
"""
from __future__ import annotations

import hashlib
from typing import Any, Iterable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from ..dynamo import plain
from ..errors import PromptRejected, PromptTooLarge
from ..observability import logger, metrics
from ..table import Table, open_table
from ..tenant_default import fold, lookup_order, parse_stored
from ..ttl_cache import TTLCache
from .core import ManagedCheck, Policy, Role, Verdict, release_name, screen


class TenantPolicy(BaseModel):
    """A tenant's screening policy as stored (every field optional: the default fills the rest)."""

    model_config = ConfigDict(extra="ignore")

    block_threshold: float | None = Field(default=None, ge=0.05, le=1.0)
    rules_enabled: bool | None = None
    classifier_enabled: bool | None = None
    classifier_min_score: float | None = Field(default=None, ge=0, le=1)
    pii_action: Literal["off", "block", "redact"] | None = None
    pii_min_score: float | None = Field(default=None, ge=0, le=1)
    pii_entity_types: list[str] | None = None
    guardrail_enabled: bool | None = None
    fail_open: bool | None = None
    max_chars: int | None = Field(default=None, ge=1, le=1_000_000)
    # A `routing_mode` stored here by older versions is ignored: it lives in tenant settings now
    # (chalicelib/tenant_settings.py; `crossover routing migrate` moves it).

    def over(self, base: Policy) -> Policy:
        values = {key: value for key, value in self.model_dump().items() if value is not None}
        if "pii_entity_types" in values:
            values["pii_entity_types"] = tuple(values["pii_entity_types"])
        return Policy(**{**base.__dict__, **values})


class PolicyStore:
    """Tenant policies from DynamoDB (item per tenant, '*' for the account-wide default), cached briefly.

    `table_name`: the policies table's name, or a Table (an InMemoryTable twin in unit tests)."""

    def __init__(self, table_name: "str | Table", base: Policy, cache_ttl_s: float, dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, ("tenant",), dynamodb)
        self._base = base
        self._policies: TTLCache[Policy] = TTLCache(cache_ttl_s)

    def _load(self, key: str) -> TenantPolicy | None:
        # A broken policy item must not open the gate: the level below (in the end the safe base) stands.
        item = self._table.get({"tenant": key}, consistent=False)
        return parse_stored(TenantPolicy, plain(item) if item else None, key, "screening.policy_invalid")

    def _resolve(self, tenant: str) -> Policy:
        return fold(self._base, (self._load(key) for key in lookup_order(tenant)))

    def policy_for(self, tenant: str) -> Policy:
        return self._policies.get_or_load(tenant, lambda: self._resolve(tenant))

    def put(self, tenant: str, policy: TenantPolicy) -> None:
        self._table.put({"tenant": tenant, **policy.model_dump(exclude_none=True)})
        self._policies.invalidate()  # every tenant: the '*' default is folded into each cached policy


class ScreeningService:
    def __init__(self, policies: PolicyStore, checks: Iterable[ManagedCheck] = ()) -> None:
        self.policies = policies
        self.checks = tuple(checks)

    def stamp(self, tenant: str) -> str:
        """Names how `tenant`'s texts are judged now: the local layers' release (core.release_name), the tenant's policy
        and the managed checks. Texts screened under one stamp were judged alike; a stored conversation keeps the stamp
        its history was screened under, and is screened again under a new one (chalicelib/invoke.py)."""
        policy = self.policies.policy_for(tenant)
        judged_by = f"{release_name()}|{policy!r}|{[check.name for check in self.checks]}"
        return "screen-" + hashlib.sha256(judged_by.encode()).hexdigest()[:24]

    def verdict(self, text: str, tenant: str, trace_id: str, entry_point: str, managed: bool = True, *,
                subject: Mapping[str, str] | None = None, role: Role = "user") -> Verdict:
        """Screen and audit-log the decision (never the text). `subject` (e.g. {"tool": name}) names what the
        text is in the details of an error, when the entry point alone does not say (one of several tools).
        `role`: "system" for the developer's own system prompt (core.Role)."""
        policy = self.policies.policy_for(tenant)
        if len(text) > policy.max_chars:
            raise PromptTooLarge(f"Input longer than {policy.max_chars} characters.",
                                 {"max_chars": policy.max_chars, "chars": len(text), **(subject or {})})
        verdict = screen(text, policy, self.checks if managed else (), role)
        logger.info("screening.verdict", extra={
            "trace_id": trace_id, "tenant": tenant, "entry_point": entry_point, "role": role,
            "decision": "allowed" if verdict.allowed else "blocked", "reasons": list(verdict.reasons),
            "score": round(verdict.score, 3), "layer": verdict.layer, "screen_ms": round(verdict.ms, 3),
            "redacted": verdict.redacted_text is not None, "notes": list(verdict.notes),
        })
        metrics.add_metric(name="ScreeningMs", unit="Milliseconds", value=verdict.ms)
        if not verdict.allowed:
            metrics.add_metric(name="PromptsBlocked", unit="Count", value=1)
        return verdict

    def require_allowed(self, text: str, tenant: str, trace_id: str, entry_point: str, *,
                        subject: Mapping[str, str] | None = None, role: Role = "user") -> Verdict:
        """The verdict, or PromptRejected (403) with the reason codes (and `subject`, `role`: see `verdict`)."""
        verdict = self.verdict(text, tenant, trace_id, entry_point, subject=subject, role=role)
        if not verdict.allowed:
            raise PromptRejected("The prompt was rejected by screening.",
                                 {"reasons": list(verdict.reasons), "layer": verdict.layer, **(subject or {})})
        return verdict

    def tool_result_guard(self, tenant: str, trace_id: str) -> "Any":
        """A guard for the agent loop: tool output is screened (rules only) before the model reads it."""

        def guard(text: str) -> str | None:
            try:
                verdict = self.verdict(text, tenant, trace_id, "tool_result", managed=False)
            except PromptTooLarge:
                return "tool_result_too_large"
            return None if verdict.allowed else ",".join(verdict.reasons)

        return guard
