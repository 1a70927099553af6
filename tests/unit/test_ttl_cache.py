"""The one TTL cache: expiry, cached misses, a size bound, invalidation."""
from __future__ import annotations

from chalicelib.ttl_cache import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_loaded_once_per_ttl_and_a_miss_is_cached_too() -> None:
    clock, loads = Clock(), []
    cache: TTLCache[str | None] = TTLCache(30, timer=clock)

    def load(value):
        return lambda: loads.append(value) or value

    assert cache.get_or_load("k", load("v1")) == "v1"
    assert cache.get_or_load("k", load("v2")) == "v1"
    assert cache.get_or_load("unknown", load(None)) is None
    assert cache.get_or_load("unknown", load("late")) is None  # an unknown key is not asked for again within the TTL
    clock.now = 31
    assert cache.get_or_load("k", load("v3")) == "v3"
    assert loads == ["v1", None, "v3"]


def test_zero_ttl_never_caches_and_invalidate_forgets() -> None:
    uncached: TTLCache[int] = TTLCache(0)
    assert [uncached.get_or_load("k", lambda n=n: n) for n in range(3)] == [0, 1, 2]
    cache: TTLCache[int] = TTLCache(60)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.invalidate("a")
    assert cache.get_or_load("a", lambda: 10) == 10 and cache.get_or_load("b", lambda: 20) == 2
    cache.invalidate()
    assert cache.get_or_load("b", lambda: 30) == 30


def test_the_cache_is_bounded() -> None:
    cache: TTLCache[int] = TTLCache(60, maxsize=100)
    for n in range(1000):  # a caller presenting 1,000 random API keys
        cache.put(f"key-{n}", n)
    assert len(cache._cache) == 100
