"""The cycle collector during a cold start (issue 18: import + first invoke <= 500 ms).

A cold start allocates a few hundred thousand objects (modules, classes, pydantic schemas, boto3's
session and clients, botocore's service models) that live as long as the process, and little cyclic
garbage. Python's collector runs every 700 net allocations and, every tenth and hundredth time, walks
the older objects again: ~50-110 ms of CPU in a ~500 ms cold start (benchmarks/cold_start_zip.py).
So the collector is held while `app` is imported and while the first event is answered; after each,
everything still alive is frozen (`gc.freeze`: moved to a generation no collection scans again) and
collection resumes as it was. Held only inside those two windows, never left off: a process that
imports `app` and never answers an event (a test run) collects as usual.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Callable, Iterator


@contextmanager
def collector_held() -> Iterator[None]:
    """No cycle collection inside; on the way out, freeze what is alive and restore the collector's state.
    Cyclic garbage made inside is frozen too (never collected): a one-off, bounded by what one start makes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


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
