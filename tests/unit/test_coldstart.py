"""chalicelib/coldstart.py: the cycle collector is held while `app` is imported and while its first event is
answered, and only then (issue 18: the collector cost ~50-110 ms of CPU in a ~500 ms cold start)."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from chalicelib.coldstart import FirstEventHeld, collector_held

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _collector_restored():
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()  # what the tests froze becomes collectable again
    (gc.enable if was_enabled else gc.disable)()


def test_the_collector_is_off_inside_and_back_on_after_with_what_lived_frozen():
    gc.enable()
    with collector_held():
        assert not gc.isenabled()
        kept = [object() for _ in range(10)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with collector_held():
        pass
    assert not gc.isenabled()


def test_an_exception_inside_still_gives_the_collector_back():
    gc.enable()
    with pytest.raises(ValueError):
        with collector_held():
            raise ValueError("boom")
    assert gc.isenabled()


def test_only_the_first_event_runs_with_the_collector_held():
    gc.enable()
    seen = []
    middleware = FirstEventHeld()
    assert middleware("first", lambda event: seen.append((event, gc.isenabled())) or "answer") == "answer"
    middleware("second", lambda event: seen.append((event, gc.isenabled())))
    assert seen == [("first", False), ("second", True)]
    assert gc.isenabled()


def test_a_failing_first_event_gives_the_collector_back_and_is_not_held_again():
    gc.enable()
    middleware = FirstEventHeld()

    def fail(event):
        raise RuntimeError(event)

    with pytest.raises(RuntimeError):
        middleware("first", fail)
    assert gc.isenabled()
    assert middleware("second", lambda event: gc.isenabled()) is True


def test_importing_app_leaves_the_collector_on_and_an_event_through_chalice_holds_it():
    """A fresh interpreter: after `import app` the collector runs (a test run that never sends an event is
    unaffected); the app's first event, through Chalice's own middleware chain, runs with it held."""
    code = ("import gc, json\n"
            "import app\n"
            "after_import = gc.isenabled()\n"
            "from chalice.test import Client\n"
            "states = []\n"
            "app.app.register_middleware(lambda event, get_response: states.append(gc.isenabled()) or get_response(event), 'all')  # inside\n"
            "with Client(app.app) as client:\n"
            "    codes = [client.http.get('/v1/health').status_code for _ in range(2)]\n"
            "print(json.dumps({'after_import': after_import, 'frozen': gc.get_freeze_count() > 10000, 'codes': codes,\n"
            "                  'held': states, 'after': gc.isenabled()}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"after_import": True, "frozen": True, "codes": [200, 200],
                                                                "held": [False, True], "after": True}
