"""The cycle collector during a cold start (issue 18: import + first invoke <= 500 ms).

A cold start allocates a few hundred thousand objects (modules, classes, pydantic schemas, boto3's
session and clients, botocore's service models) that live as long as the process, and little cyclic
garbage. Python's collector runs every 700 net allocations and, every tenth and hundredth time, walks
the older objects again: ~50-110 ms of CPU in a ~500 ms cold start (benchmarks/cold_start_zip.py).
So while the process starts up (while `app` is imported, and while its first event is answered) the
collector waits for HOLD_THRESHOLD net allocations instead of 700, which a cold start does not reach:
no collection at all. On release everything alive is frozen (`gc.freeze`: moved to a generation no
collection scans again, so later collections stay cheap) and the collector's thresholds come back.

Bounded on purpose, not switched off: a long, allocation-heavy first event (an agent loop with many tool
rounds, a month of ledger rows folded into a report) still gets a collection every HOLD_THRESHOLD
allocations, so at most that many objects' worth of its cyclic garbage is frozen, once per process. A
process that imports `app` and never answers an event (a test run) collects as usual after the import.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Callable, Iterator

# ~140 times the default: a cold start (import + first invoke) makes ~120k net allocations in all.
HOLD_THRESHOLD = 100_000
_saved: tuple[int, ...] | None = None  # the thresholds to give back, while held


def hold() -> None:
    """Raise the collector's first threshold until `release` (no-op if already held)."""
    global _saved
    if _saved is None:
        _saved = gc.get_threshold()
        gc.set_threshold(max(HOLD_THRESHOLD, _saved[0]), *_saved[1:])


def release() -> None:
    """Start-up is over: freeze what is alive and restore the thresholds. Idempotent; a no-op unless held."""
    global _saved
    if _saved is not None:
        saved, _saved = _saved, None
        gc.freeze()
        gc.set_threshold(*saved)


@contextmanager
def collector_held() -> Iterator[None]:
    """The collector held inside, released on the way out (even on an exception)."""
    hold()
    try:
        yield
    finally:
        release()


class FirstEventHeld:
    """Chalice middleware for every event type: the process's first event runs with the collector held
    (it imports boto3 and builds the clients and services), every later one untouched."""

    def __init__(self) -> None:
        self.answered_one = False

    def __call__(self, event: Any, get_response: Callable[[Any], Any]) -> Any:
        if self.answered_one:
            return get_response(event)
        self.answered_one = True
        with collector_held():
            return get_response(event)
