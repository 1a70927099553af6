"""The route decision: which backend serves a call, as pure functions over plain data.

Modes, per tenant (chalicelib/tenant_settings.py) or global: `bedrock`, `self_hosted`, `auto`. In
`auto` a call follows the cost meter's stored recommendation; sync calls go self-hosted only when a
self-hosted endpoint is configured, and fall back to Bedrock while that path is unhealthy (circuit
open) or when a self-hosted call fails for availability. Jobs always have the Batch GPU path; in
`bedrock` mode a job goes straight to the Bedrock path.

The state these functions are fed from (the mode lookup, the recommendation cache, the circuit
breakers) and the call with fallback live in chalicelib/router.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import ModelTimeout, ModelUnavailable, Throttled

Mode = Literal["bedrock", "self_hosted", "auto"]
Workload = Literal["sync", "job"]
Backend = Literal["bedrock", "self_hosted"]
MODES = ("bedrock", "self_hosted", "auto")
# A self-hosted call failing with one of these is retried once on Bedrock (the error is about the
# backend, not the request); anything else, a deadline included, is the caller's answer.
FALLBACK_CODES = frozenset({ModelUnavailable.code, ModelTimeout.code, Throttled.code})


@dataclass(frozen=True)
class RouteDecision:
    backend: Backend
    reason: str


def choose_backend(mode: str, workload: Workload, recommendation: str | None,
                   self_hosted_available: bool, self_hosted_healthy: bool) -> RouteDecision:
    if mode not in MODES:
        return RouteDecision("bedrock", f"unknown routing mode {mode!r}: Bedrock is the safe default")
    if mode == "bedrock":
        return RouteDecision("bedrock", "routing mode is bedrock")
    if mode == "auto" and recommendation != "switch_to_self_hosted":
        return RouteDecision("bedrock", f"auto: the cost meter recommends {recommendation or 'nothing yet'}")
    if not self_hosted_available:
        what = "sync calls" if workload == "sync" else "jobs"
        return RouteDecision("bedrock", f"{mode}: no self-hosted capacity is configured for {what}")
    if not self_hosted_healthy:
        return RouteDecision("bedrock", f"{mode}: self-hosted circuit is open, falling back to Bedrock")
    reason = "routing mode is self_hosted" if mode == "self_hosted" else "auto: the cost meter recommends switch_to_self_hosted"
    return RouteDecision("self_hosted", reason)


def fallback_backend(backend: str, error_code: str | None) -> Backend | None:
    """Where a call goes after failing on `backend` with `error_code` (None: it succeeded): Bedrock once
    for a self-hosted availability failure, nowhere otherwise (Bedrock has no fallback)."""
    if backend == "self_hosted" and error_code in FALLBACK_CODES:
        return "bedrock"
    return None


def model_for(backend: str, bedrock_model: str, self_hosted_model: str) -> str:
    """The model a backend runs for a request that asked for `bedrock_model` (self-hosted serves one model)."""
    return self_hosted_model if backend == "self_hosted" else bedrock_model
