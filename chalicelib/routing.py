"""Which backend serves a call: the routing policy (pure) and a per-backend circuit breaker.

Modes, per tenant or global: `bedrock`, `self_hosted`, `auto`. In `auto` the router follows the
cost meter's stored recommendation for eligible workloads (long jobs first; sync calls only when
a self-hosted endpoint is configured) and falls back to Bedrock while the self-hosted path is
unhealthy (circuit open).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal

Mode = Literal["bedrock", "self_hosted", "auto"]
Workload = Literal["sync", "job"]
MODES = ("bedrock", "self_hosted", "auto")


@dataclass(frozen=True)
class RouteDecision:
    backend: Literal["bedrock", "self_hosted"]
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


class CircuitBreaker:
    """Opens after `threshold` consecutive failures; lets one trial call through after `cooldown_s`.

    Per process (a warm Lambda): each container learns on its own, which is enough to stop a
    failing backend from eating every request's latency budget.
    """

    def __init__(self, threshold: int = 3, cooldown_s: float = 30.0, clock: "callable[[], float]" = time.monotonic) -> None:  # type: ignore[valid-type]
        self._threshold = threshold
        self._cooldown = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._lock = threading.Lock()

    def allows(self) -> bool:
        with self._lock:
            if self._opened_at is None:
                return True
            if self._clock() - self._opened_at >= self._cooldown:
                self._opened_at = self._clock()  # half-open: one trial, then wait again unless it succeeds
                return True
            return False

    def record(self, success: bool) -> None:
        with self._lock:
            if success:
                self._failures, self._opened_at = 0, None
                return
            self._failures += 1
            if self._failures >= self._threshold:
                self._opened_at = self._clock()

    @property
    def is_open(self) -> bool:
        return self._opened_at is not None
