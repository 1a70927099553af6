"""The router: the one owner of route choice for sync calls and jobs.

It holds what the pure decision (`routing.choose_backend`) is fed from: the tenant's routing mode
(tenant settings, `*` default, then the `ROUTING_MODE` / `JOB_ROUTING_MODE` setting), the cost
meter's recommendation (cached for a minute; a failed read is logged and counted, and Bedrock stays
the default), and one circuit breaker for the self-hosted endpoint. It also runs a call with
fallback: a self-hosted call that fails for availability runs once more on Bedrock.

    route = services.router.route(tenant, "sync", trace_id)          # logged with its reason
    tried = services.router.call_with_fallback(route, run_on, tenant, trace_id)
    tried[-1].value or tried[-1].error                                # every attempt is returned, for metering

Jobs: `services.router.route_job(tenant, trace_id)` at submit.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from . import aws
from .errors import CrossoverError
from .observability import logger, metrics
from .routing import FALLBACK_CODES, Backend, RouteDecision, Workload, choose_backend, fallback_backend
from .tenant_settings import TenantSettingsStore
from .ttl_cache import TTLCache

T = TypeVar("T")
SAFE_RECOMMENDATION = "stay_on_bedrock"


class CircuitBreaker:
    """Opens after `threshold` consecutive failures; lets one trial call through after `cooldown_s`.

    Per process (a warm Lambda): each container learns on its own, which is enough to stop a
    failing backend from eating every request's latency budget.
    """

    def __init__(self, threshold: int = 3, cooldown_s: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
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


class RecommendationCache:
    """The cost meter's current recommendation, read at most once per `ttl_s` (it changes once a day).

    A failed read (no decision table yet, DynamoDB unreachable) is logged and counted
    (`RecommendationUnreadable`), and `stay_on_bedrock` stands in until the next read.
    """

    def __init__(self, read: Callable[[], str], ttl_s: float = 60.0, timer: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._cache: TTLCache[str] = TTLCache(ttl_s, maxsize=1, timer=timer)

    def current(self) -> str:
        return self._cache.get_or_load("current", self._load)

    def _load(self) -> str:
        try:
            return self._read()
        except Exception as exc:  # any failure: auto mode must keep serving, on Bedrock
            logger.warning("routing.recommendation_unreadable", extra={"error": type(exc).__name__, "code": aws.error_code(exc),
                                                                        "detail": str(exc)[:300], "using": SAFE_RECOMMENDATION})
            metrics.add_metric(name="RecommendationUnreadable", unit="Count", value=1)
            return SAFE_RECOMMENDATION

    def forget(self) -> None:
        """Read again on the next call (after a new decision was saved)."""
        self._cache.invalidate()


@dataclass(frozen=True)
class Tried(Generic[T]):
    """One call on one backend: its value, or what it raised (a CrossoverError, or any other exception)."""

    backend: Backend
    value: T | None = None
    error: Exception | None = None

    @property
    def error_code(self) -> str | None:
        """The error's stable code; `internal_error` (CrossoverError's own) for an exception that is not ours."""
        if self.error is None:
            return None
        return self.error.code if isinstance(self.error, CrossoverError) else CrossoverError.code


def _try(backend: Backend, call: Callable[[Backend], T]) -> Tried[T]:
    try:
        return Tried(backend, value=call(backend))
    except Exception as exc:  # any failure: the caller settles and meters what the attempt spent, then raises it
        return Tried(backend, error=exc)


class Router:
    def __init__(self, tenant_settings: TenantSettingsStore, recommendations: RecommendationCache, *, default_mode: str,
                 job_default_mode: str, self_hosted_endpoint: bool, breakers: dict[str, CircuitBreaker] | None = None) -> None:
        """`default_mode` / `job_default_mode`: the mode when neither the tenant nor `*` sets one;
        `self_hosted_endpoint`: whether sync calls have a self-hosted backend at all."""
        self.tenant_settings = tenant_settings
        self.recommendations = recommendations
        self.default_mode = default_mode
        self.job_default_mode = job_default_mode
        self.self_hosted_endpoint = self_hosted_endpoint
        self.breakers = breakers if breakers is not None else {"self_hosted": CircuitBreaker()}

    def mode_for(self, tenant: str, workload: Workload) -> str:
        stored = self.tenant_settings.effective(tenant).routing_mode
        return stored or (self.job_default_mode if workload == "job" else self.default_mode)

    def route(self, tenant: str, workload: Workload, trace_id: str) -> RouteDecision:
        """Choose the backend and log why (every routing decision is audited)."""
        mode = self.mode_for(tenant, workload)
        recommendation = self.recommendations.current() if mode == "auto" else None
        # Jobs always have the Batch GPU path (with its own fallback); sync calls need a configured endpoint.
        available = workload == "job" or self.self_hosted_endpoint
        decision = choose_backend(mode, workload, recommendation, available, True)
        # Ask the breaker only when the call would use it: a half-open breaker lets one trial through.
        if decision.backend == "self_hosted" and workload == "sync" and not self.breakers["self_hosted"].allows():
            decision = choose_backend(mode, workload, recommendation, available, False)
        logger.info("routing.decision", extra={"trace_id": trace_id, "tenant": tenant, "workload": workload,
                                               "mode": mode, "backend": decision.backend, "reason": decision.reason})
        return decision

    def route_job(self, tenant: str, trace_id: str) -> RouteDecision:
        """Where a job starts: `self_hosted` (the Batch GPU path, which falls back by itself) or `bedrock` (straight to it)."""
        return self.route(tenant, "job", trace_id)

    def call_with_fallback(self, route: RouteDecision, call: Callable[[Backend], T], tenant: str, trace_id: str) -> list[Tried[T]]:
        """`call(backend)` on the routed backend, then once on Bedrock if a self-hosted call failed for
        availability. Returns every attempt in order (the caller meters each and answers with the last),
        failed ones too whatever they raised: an exception that is not a CrossoverError (a bug, an SDK error
        no adapter translated) is `internal_error`, which neither falls back nor counts on the breaker."""
        first = _try(route.backend, call)
        self._learn(first)
        to = fallback_backend(first.backend, first.error_code)
        if to is None:
            return [first]
        logger.warning("routing.fallback", extra={"trace_id": trace_id, "tenant": tenant, "from": first.backend,
                                                  "to": to, "reason": first.error_code})
        metrics.add_metric(name="SelfHostedFallbacks", unit="Count", value=1)
        return [first, _try(to, call)]

    def _learn(self, tried: Tried[object]) -> None:
        """Feed the backend's breaker: a success closes it, an availability failure counts; a request's own
        fault (a deadline, a bad input) says nothing about the backend."""
        breaker = self.breakers.get(tried.backend)
        if breaker is None:
            return
        if tried.error is None:
            breaker.record(True)
        elif tried.error_code in FALLBACK_CODES:
            breaker.record(False)
