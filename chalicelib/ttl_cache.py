"""One TTL cache for warm Lambdas (API keys, budget limits, policies, secrets, the recommendation).

cachetools' TTLCache does the expiry and bounds the size (a caller presenting random API keys cannot
grow it without limit); this wrapper adds the lock it lacks and `get_or_load`, which caches a None
answer too (an unknown key is asked for once per TTL, not on every request). The load runs outside
the lock: two threads missing together both load, and the last one stored wins (as before).
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")
_ABSENT = object()


class TTLCache(Generic[V]):
    def __init__(self, ttl_s: float, maxsize: int = 1024, timer: Callable[[], float] = time.monotonic) -> None:
        from cachetools import TTLCache as _Cache

        self.ttl_s = ttl_s
        self._cache: _Cache = _Cache(maxsize=maxsize, ttl=max(ttl_s, 0.0), timer=timer)
        self._lock = threading.Lock()

    def get_or_load(self, key: Hashable, load: Callable[[], V]) -> V:
        """The cached value for `key`, else `load()` (cached for ttl_s; ttl_s <= 0 never caches)."""
        with self._lock:
            found = self._cache.get(key, _ABSENT)
        if found is not _ABSENT:
            return found  # type: ignore[return-value]
        value = load()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: V) -> None:
        if self.ttl_s <= 0:
            return
        with self._lock:
            self._cache[key] = value

    def invalidate(self, key: Hashable | None = None) -> None:
        """Forget one key (None: every key)."""
        with self._lock:
            if key is None:
                self._cache.clear()
            else:
                self._cache.pop(key, None)
