from __future__ import annotations

import pytest

from chalicelib.router import CircuitBreaker
from chalicelib.routing import choose_backend


@pytest.mark.parametrize(("mode", "workload", "recommendation", "available", "healthy", "expected"), [
    ("bedrock", "sync", "switch_to_self_hosted", True, True, "bedrock"),
    ("self_hosted", "sync", None, True, True, "self_hosted"),
    ("self_hosted", "sync", None, False, True, "bedrock"),          # nothing configured
    ("self_hosted", "sync", None, True, False, "bedrock"),          # circuit open
    ("auto", "sync", "stay_on_bedrock", True, True, "bedrock"),
    ("auto", "sync", "evaluate", True, True, "bedrock"),
    ("auto", "sync", "switch_to_self_hosted", True, True, "self_hosted"),
    ("auto", "sync", "switch_to_self_hosted", False, True, "bedrock"),  # sync only with an endpoint
    ("auto", "job", "switch_to_self_hosted", True, True, "self_hosted"),
    ("auto", "job", "switch_to_self_hosted", True, False, "bedrock"),
    ("nonsense", "sync", None, True, True, "bedrock"),
])
def test_routing_policy(mode, workload, recommendation, available, healthy, expected):
    decision = choose_backend(mode, workload, recommendation, available, healthy)
    assert decision.backend == expected and decision.reason


def test_circuit_breaker_opens_after_failures_and_half_opens_after_cooldown():
    now = [0.0]
    breaker = CircuitBreaker(threshold=3, cooldown_s=30, clock=lambda: now[0])
    for _ in range(2):
        breaker.record(False)
    assert breaker.allows()
    breaker.record(False)
    assert not breaker.allows() and breaker.is_open
    now[0] = 31
    assert breaker.allows()        # one trial call
    assert not breaker.allows()    # and only one
    breaker.record(True)
    assert breaker.allows() and not breaker.is_open
