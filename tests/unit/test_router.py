"""The router on in-memory twins: mode lookup, the recommendation cache, breakers, call with fallback,
and the invoke pipeline's metering of a fallback (no AWS, no moto: milliseconds)."""
from __future__ import annotations

import json
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from chalicelib.errors import DeadlineExceeded, ModelTimeout, ModelUnavailable, Throttled, ValidationFailed
from chalicelib.core import Usage
from chalicelib.meter.budgets import Budgets as RealBudgets
from chalicelib.models import ModelTurn
from chalicelib.observability import metrics
from chalicelib.router import CircuitBreaker, RecommendationCache, Router
from chalicelib.routing import RouteDecision
from chalicelib.table import InMemoryTable
from chalicelib.tenant_settings import TenantSettings, TenantSettingsStore, in_memory_settings, routing_modes_to_migrate

SELF_HOSTED = RouteDecision("self_hosted", "test")


@pytest.fixture(autouse=True)
def clean_metrics():
    metrics.clear_metrics()
    yield
    metrics.clear_metrics()


def counted(name: str) -> float:
    metric = metrics.metric_set.get(name)
    return sum(metric["Value"]) if metric else 0


def make_router(stored: dict[str, TenantSettings] | None = None, recommendation: str = "stay_on_bedrock",
                endpoint: bool = True, **kwargs: Any) -> Router:
    return Router(in_memory_settings(stored), RecommendationCache(lambda: recommendation), default_mode="bedrock",
                  job_default_mode="self_hosted", self_hosted_endpoint=endpoint, **kwargs)


# ---------- mode lookup ----------

def test_tenant_mode_wins_over_the_account_default_which_wins_over_the_setting():
    router = make_router({"*": TenantSettings(routing_mode="auto"), "acme": TenantSettings(routing_mode="self_hosted")})
    assert router.mode_for("acme", "sync") == "self_hosted"
    assert router.mode_for("other", "sync") == "auto"
    assert make_router().mode_for("other", "sync") == "bedrock"


def test_jobs_default_to_the_gpu_path_and_a_bedrock_tenant_sends_them_straight_to_bedrock():
    router = make_router({"bedrock-only": TenantSettings(routing_mode="bedrock")})
    assert router.route_job("anyone", "t").backend == "self_hosted"
    decision = router.route_job("bedrock-only", "t")
    assert decision == RouteDecision("bedrock", "routing mode is bedrock")


def test_jobs_ignore_the_sync_endpoint_and_its_breaker():
    breaker = CircuitBreaker(threshold=1)
    breaker.record(False)
    router = make_router(endpoint=False, breakers={"self_hosted": breaker})
    assert router.route_job("t", "trace").backend == "self_hosted"
    assert router.route("t", "sync", "trace").backend == "bedrock"


def test_settings_are_read_once_per_ttl_a_put_is_seen_at_once_and_a_broken_item_routes_nowhere_special():
    table = CountingTable("tenants", ("key_hash",))
    now = [0.0]
    store = TenantSettingsStore(table, cache_ttl_s=10, timer=lambda: now[0])
    store.put("acme", TenantSettings(routing_mode="auto"))
    assert table.get({"key_hash": "settings#acme"}) == {"key_hash": "settings#acme", "tenant": "acme", "routing_mode": "auto"}
    table.reads = 0
    assert store.get("acme").routing_mode == "auto" and store.get("acme").routing_mode == "auto"
    assert table.reads == 1
    store.put("acme", TenantSettings(routing_mode="bedrock"))
    assert store.get("acme").routing_mode == "bedrock"
    table.put({"key_hash": "settings#acme", "tenant": "acme", "routing_mode": "nonsense"})
    now[0] = 11
    assert store.get("acme").routing_mode is None


def test_migration_moves_only_modes_the_settings_do_not_have_yet():
    settings = in_memory_settings({"b": TenantSettings(routing_mode="bedrock")})
    policies = [{"tenant": "*", "routing_mode": "auto"}, {"tenant": "a", "block_threshold": Decimal("0.4")},
                {"tenant": "b", "routing_mode": "self_hosted"}, {"tenant": "c", "routing_mode": "self_hosted"},
                {"tenant": "d", "routing_mode": "nonsense"}]
    assert routing_modes_to_migrate(policies, settings) == {"*": "auto", "c": "self_hosted"}


# ---------- the recommendation cache ----------

def test_recommendation_is_read_once_a_minute():
    reads = []
    now = [0.0]
    cache = RecommendationCache(lambda: reads.append(1) or "switch_to_self_hosted", ttl_s=60, timer=lambda: now[0])
    assert [cache.current() for _ in range(3)] == ["switch_to_self_hosted"] * 3 and len(reads) == 1
    now[0] = 61
    cache.current()
    cache.forget()
    cache.current()
    assert len(reads) == 3


def test_an_unreadable_recommendation_is_logged_and_counted_and_auto_stays_on_bedrock(captured_logs):
    def broken() -> str:
        raise ConnectionError("DynamoDB unreachable")

    router = Router(in_memory_settings({"*": TenantSettings(routing_mode="auto")}), RecommendationCache(broken),
                    default_mode="bedrock", job_default_mode="self_hosted", self_hosted_endpoint=True)
    decision = router.route("acme", "sync", "trace")
    assert decision.backend == "bedrock" and "stay_on_bedrock" in decision.reason
    assert counted("RecommendationUnreadable") == 1
    [line] = [json.loads(x) for x in captured_logs.getvalue().splitlines() if "routing.recommendation_unreadable" in x]
    assert line["error"] == "ConnectionError"
    router.route("acme", "sync", "trace")  # cached: not read (nor counted) again within the minute
    assert counted("RecommendationUnreadable") == 1


def test_the_recommendation_is_not_read_unless_the_mode_is_auto():
    def never() -> str:
        raise AssertionError("read")

    router = Router(in_memory_settings({"*": TenantSettings(routing_mode="self_hosted")}), RecommendationCache(never),
                    default_mode="bedrock", job_default_mode="self_hosted", self_hosted_endpoint=True)
    assert router.route("acme", "sync", "trace").backend == "self_hosted"


# ---------- breakers and call with fallback ----------

def test_open_breaker_sends_sync_calls_to_bedrock_and_a_bedrock_tenant_leaves_the_trial_call_alone():
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, cooldown_s=30, clock=lambda: now[0])
    router = make_router({"gpu": TenantSettings(routing_mode="self_hosted"), "bedrock": TenantSettings(routing_mode="bedrock")},
                         breakers={"self_hosted": breaker})
    breaker.record(False)
    decision = router.route("gpu", "sync", "t")
    assert decision.backend == "bedrock" and "circuit is open" in decision.reason
    now[0] = 31
    router.route("bedrock", "sync", "t")  # never uses the GPU, so it must not spend the half-open trial
    assert router.route("gpu", "sync", "t").backend == "self_hosted"


@pytest.mark.parametrize("error", [ModelUnavailable("down"), ModelTimeout("slow"), Throttled("busy")])
def test_self_hosted_availability_failure_falls_back_to_bedrock_once_and_counts_on_the_breaker(error, captured_logs):
    router = make_router()
    calls = []

    def call(backend: str) -> str:
        calls.append(backend)
        if backend == "self_hosted":
            raise error
        return "answer"

    attempts = router.call_with_fallback(SELF_HOSTED, call, "acme", "trace")
    assert calls == ["self_hosted", "bedrock"]
    assert [(a.backend, a.value, a.error) for a in attempts] == [("self_hosted", None, error), ("bedrock", "answer", None)]
    assert counted("SelfHostedFallbacks") == 1
    assert '"routing.fallback"' in captured_logs.getvalue() and f'"reason":"{error.code}"' in captured_logs.getvalue().replace(" ", "")
    router.call_with_fallback(SELF_HOSTED, call, "acme", "trace")
    router.call_with_fallback(SELF_HOSTED, call, "acme", "trace")
    assert router.breakers["self_hosted"].is_open  # three failures in a row


@pytest.mark.parametrize("error", [DeadlineExceeded("late"), ValidationFailed("bad")])
def test_a_requests_own_failure_neither_falls_back_nor_counts_against_the_backend(error):
    router = make_router(breakers={"self_hosted": CircuitBreaker(threshold=1)})

    def call(backend: str) -> str:
        raise error

    attempts = router.call_with_fallback(SELF_HOSTED, call, "acme", "trace")
    assert [(a.backend, a.error) for a in attempts] == [("self_hosted", error)]
    assert not router.breakers["self_hosted"].is_open and counted("SelfHostedFallbacks") == 0


def test_bedrock_has_no_fallback_and_a_success_closes_the_breaker():
    router = make_router(breakers={"self_hosted": CircuitBreaker(threshold=2)})
    failed = router.call_with_fallback(RouteDecision("bedrock", "t"), lambda b: (_ for _ in ()).throw(ModelUnavailable("x")), "a", "t")
    assert [a.backend for a in failed] == ["bedrock"]
    router.breakers["self_hosted"].record(False)
    [ok] = router.call_with_fallback(SELF_HOSTED, lambda backend: backend, "a", "t")
    assert ok.value == "self_hosted"
    router.breakers["self_hosted"].record(False)
    assert not router.breakers["self_hosted"].is_open  # the success reset the count


# ---------- the invoke pipeline: fallback metering on twins ----------

class CountingTable(InMemoryTable):
    reads = 0

    def get(self, key: dict[str, Any], consistent: bool = True) -> dict[str, Any] | None:
        self.reads += 1
        return super().get(key, consistent)


class ScriptedBackend:
    """Answers from a script: each entry a ModelTurn to return or an exception to raise."""

    def __init__(self, name: str, script: list[Any]) -> None:
        self.name, self.script = name, list(script)

    def converse(self, model_id: str, *args: Any, **kwargs: Any) -> ModelTurn:
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step


def tool_turn(tokens: int) -> ModelTurn:
    return ModelTurn([{"toolUse": {"toolUseId": "t1", "name": "not_offered", "input": {}}}], "tool_use", Usage(input_tokens=tokens, output_tokens=5))


def text_turn(text: str) -> ModelTurn:
    return ModelTurn([{"text": text}], "end_turn", Usage(input_tokens=20, output_tokens=7))


class Budgets(RealBudgets):
    """The real budgets on a table twin (acme has $100 a month), recording each settlement."""

    def __init__(self) -> None:
        super().__init__(InMemoryTable("budgets", ("tenant", "period")))
        self.set_limit("acme", Decimal(100))
        self.settled: list[Decimal | None] = []

    def settle(self, reservation: Any, actual: Decimal | None) -> None:
        self.settled.append(actual)
        super().settle(reservation, actual)


class Meter:
    def __init__(self) -> None:
        self.entries: list[Any] = []

    def record(self, entry: Any) -> str:
        self.entries.append(entry)
        return "written"


def fake_services(backends: dict[str, ScriptedBackend]) -> Any:
    from chalicelib.agent.tools import REGISTRY
    from chalicelib.config import get_settings
    from chalicelib.meter.catalog import load_catalog

    settings = get_settings()
    screening = SimpleNamespace(require_allowed=lambda *a: None, tool_result_guard=lambda *a: None)
    router = make_router({"acme": TenantSettings(routing_mode="self_hosted")})
    return SimpleNamespace(settings=settings, tools=REGISTRY, screening=screening, budgets=Budgets(), meter=Meter(),
                           catalog=load_catalog(settings.meter.price_catalog_path), router=router, backends=backends)


def run(services: Any) -> Any:
    from chalicelib.auth import Tenant
    from chalicelib.invoke import Exchange, run_exchange

    return run_exchange(services, Tenant(tenant="acme", roles=("invoke",), key_hash="h"),
                        Exchange([{"role": "user", "content": [{"text": "hello"}]}]), "trace", "req-1")


def test_fallback_meters_each_billed_model_call_once_and_settles_the_budget_once_for_both():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [tool_turn(30), ModelUnavailable("gone")]),
                              "bedrock": ScriptedBackend("bedrock", [text_turn("from Bedrock")])})
    outcome = run(services)
    assert outcome.backend == "bedrock" and outcome.result.output == "from Bedrock"
    failed, answered = services.meter.entries
    assert failed.request_id.startswith("req-1#failed-") and failed.backend == "self_hosted"
    assert (failed.usage.input_tokens, failed.usage.output_tokens) == (30, 5)
    assert answered.request_id == "req-1" and answered.backend == "bedrock" and answered.usage.input_tokens == 20
    costs = [e.cost_usd for e in services.meter.entries]
    assert None not in costs and all(costs)
    assert services.budgets.settled == [sum(costs, Decimal(0))]  # the GPU steps and the Bedrock answer, together, once


def test_a_failed_attempt_without_billed_steps_is_not_metered_and_releases_the_reservation():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [DeadlineExceeded("late")]),
                              "bedrock": ScriptedBackend("bedrock", [])})
    with pytest.raises(DeadlineExceeded):
        run(services)
    assert services.meter.entries == [] and services.budgets.settled == [Decimal(0)]


def test_deadline_after_billed_steps_meters_the_partial_usage_and_answers_504():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [tool_turn(40), DeadlineExceeded("late")]),
                              "bedrock": ScriptedBackend("bedrock", [])})
    with pytest.raises(DeadlineExceeded) as raised:
        run(services)
    assert raised.value.status == 504
    [entry] = services.meter.entries
    assert entry.backend == "self_hosted" and entry.usage.input_tokens == 40 and services.budgets.settled == [entry.cost_usd]


class SdkBug(Exception):
    """Not one of ours: what an untranslated botocore error, a KeyError in an adapter or a bug looks like."""


def test_a_non_crossover_failure_is_returned_as_internal_error_and_neither_falls_back_nor_counts_on_the_breaker():
    router = make_router(breakers={"self_hosted": CircuitBreaker(threshold=1)})
    bug = SdkBug("boom")

    def call(backend: str) -> str:
        raise bug

    [attempt] = router.call_with_fallback(SELF_HOSTED, call, "acme", "trace")
    assert (attempt.backend, attempt.error, attempt.error_code) == ("self_hosted", bug, "internal_error")
    assert not router.breakers["self_hosted"].is_open and counted("SelfHostedFallbacks") == 0


def test_a_non_crossover_failure_before_any_step_releases_the_whole_reservation():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [SdkBug("no stopReason")]),
                              "bedrock": ScriptedBackend("bedrock", [])})
    with pytest.raises(SdkBug):
        run(services)
    assert services.budgets.settled == [Decimal(0)] and services.budgets.committed("acme") == Decimal(0)
    assert services.meter.entries == []


def test_a_non_crossover_failure_after_billed_steps_settles_and_meters_exactly_what_was_spent():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [tool_turn(40), KeyError("output")]),
                              "bedrock": ScriptedBackend("bedrock", [])})
    with pytest.raises(KeyError):
        run(services)
    [entry] = services.meter.entries
    assert entry.backend == "self_hosted" and (entry.usage.input_tokens, entry.usage.output_tokens) == (40, 5) and entry.cost_usd
    assert services.budgets.settled == [entry.cost_usd] and services.budgets.committed("acme") == entry.cost_usd


def test_a_failure_after_a_fallback_keeps_the_first_attempts_spend():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", [tool_turn(30), ModelUnavailable("gone")]),
                              "bedrock": ScriptedBackend("bedrock", [SdkBug("bad response")])})
    with pytest.raises(SdkBug):
        run(services)
    [entry] = services.meter.entries
    assert entry.backend == "self_hosted" and services.budgets.committed("acme") == entry.cost_usd


def test_a_failure_reading_the_route_releases_the_reservation():
    services = fake_services({"self_hosted": ScriptedBackend("self_hosted", []), "bedrock": ScriptedBackend("bedrock", [])})

    def unreadable(*_: Any) -> Any:
        raise SdkBug("tenant settings table unreachable")

    services.router.route = unreadable
    with pytest.raises(SdkBug):
        run(services)
    assert services.budgets.settled == [Decimal(0)] and services.budgets.committed("acme") == Decimal(0)
