"""chalicelib/coldstart.py: the cycle collector is held back while `app` is imported and while its first event is
answered, and only then (issue 18: the collector cost ~50-110 ms of CPU in a ~500 ms cold start); bounded, so a
long first event still collects."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref

import pytest

from chalicelib import coldstart
from chalicelib.coldstart import HOLD_THRESHOLD, FirstEventHeld, collector_held

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _collector_restored():
    thresholds = gc.get_threshold()
    yield
    coldstart.release()
    gc.unfreeze()  # what the tests froze becomes collectable again
    gc.set_threshold(*thresholds)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _cyclic_garbage(collected: list[bool], count: int) -> None:
    for _ in range(count):
        weakref.finalize(_Cycle(), collected.append, True)  # each _Cycle is garbage at once, reachable only from itself


def test_inside_the_collector_waits_longer_after_it_is_as_before_and_what_lived_is_frozen():
    gc.set_threshold(700, 10, 10)
    with collector_held():
        assert gc.get_threshold() == (HOLD_THRESHOLD, 10, 10)
        kept = [object() for _ in range(10)]
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() >= len(kept)


def test_an_exception_inside_still_gives_the_thresholds_back():
    gc.set_threshold(500, 7, 3)
    with pytest.raises(ValueError):
        with collector_held():
            raise ValueError("boom")
    assert gc.get_threshold() == (500, 7, 3)


def test_only_the_first_event_runs_with_the_collector_held():
    gc.set_threshold(700, 10, 10)
    seen = []
    middleware = FirstEventHeld()
    assert middleware("first", lambda event: seen.append((event, gc.get_threshold()[0])) or "answer") == "answer"
    middleware("second", lambda event: seen.append((event, gc.get_threshold()[0])))
    assert seen == [("first", HOLD_THRESHOLD), ("second", 700)]


def test_a_failing_first_event_gives_the_collector_back_and_is_not_held_again():
    gc.set_threshold(700, 10, 10)
    middleware = FirstEventHeld()

    def fail(event):
        raise RuntimeError(event)

    with pytest.raises(RuntimeError):
        middleware("first", fail)
    assert gc.get_threshold() == (700, 10, 10)
    assert middleware("second", lambda event: gc.get_threshold()[0]) == 700


def test_a_long_allocation_heavy_first_event_still_collects_its_garbage_while_held():
    """The bound: past HOLD_THRESHOLD net allocations the collector runs, inside the held first event."""
    gc.enable()
    gc.collect()
    collections: list[int] = []

    def watch(phase, info):
        if phase == "stop":
            collections.append(info["collected"])

    def long_event(event):
        for _ in range(3 * HOLD_THRESHOLD):
            cycle: list = []
            cycle.append(cycle)  # garbage at once, reachable only from itself
        return len(collections)

    gc.callbacks.append(watch)
    try:
        during = FirstEventHeld()("first", long_event)
    finally:
        gc.callbacks.remove(watch)
    assert during >= 2 and sum(collections) > HOLD_THRESHOLD


def test_garbage_a_short_start_up_makes_is_frozen_which_is_why_the_hold_is_bounded():
    gc.enable()
    collected: list[bool] = []
    with collector_held():
        _cyclic_garbage(collected, 10)
    gc.collect()
    assert collected == []


def test_importing_app_gives_the_collector_back_and_an_event_through_chalice_holds_it():
    """A fresh interpreter: after `import app` the collector runs as usual (a test run that never sends an event is
    unaffected); the app's first event, through Chalice's own middleware chain, runs with it held."""
    code = ("import gc, json\n"
            "default = gc.get_threshold()\n"
            "import app\n"
            "after_import = gc.get_threshold() == default\n"
            "from chalice.test import Client\n"
            "states = []\n"
            "app.app.register_middleware(lambda event, get_response: states.append(gc.get_threshold()[0]) or get_response(event), 'all')  # inside\n"
            "with Client(app.app) as client:\n"
            "    codes = [client.http.get('/v1/health').status_code for _ in range(2)]\n"
            "print(json.dumps({'after_import': after_import, 'frozen': gc.get_freeze_count() > 10000, 'codes': codes,\n"
            "                  'held': states, 'after': gc.get_threshold() == default, 'default': default[0]}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"after_import": True, "frozen": True, "codes": [200, 200], "held": [HOLD_THRESHOLD, found["default"]],
                     "after": True, "default": found["default"]}
    assert found["default"] < HOLD_THRESHOLD
