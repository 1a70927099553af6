"""Fixtures shared by the integration tests: the jobs environment (moto executing the real ASL) and the packaged deploy artefact (built once per run; chalice package takes ~10 s). Helpers that are not fixtures live in support.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TENANTS, _reset, stage_environment
from tests.integration.support import FakeOpenAI

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """build/prod as `make package` leaves it: sam.json, its SAM expansion, the zips; cfn-lint clean on both."""
    out = tmp_path_factory.mktemp("package")
    subprocess.run([sys.executable, "deploy/package.py", "--stage", "prod", "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    subprocess.run([sys.executable, "deploy/expand.py", str(out / "sam.json"), str(out / "expanded.json")], cwd=ROOT, check=True, capture_output=True)
    lint = subprocess.run([os.path.join(os.path.dirname(sys.executable), "cfn-lint"), str(out / "sam.json"), str(out / "expanded.json")],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # no errors, no warnings (W3660 included), as SAM and as expanded
    assert (out / "deployment.zip").stat().st_size > 0
    return out


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


# ---- the jobs environment: moto with Step Functions executing the real ASL; shared by jobs, events and uploads tests ----
@pytest.fixture
def jobs_aws(monkeypatch):
    from moto import mock_aws

    for name, value in stage_environment("dev").items():
        monkeypatch.setenv(name, value)
    # 6 s: short enough to test a lost heartbeat, long enough for a loaded 2-core runner to get from one step to the next.
    monkeypatch.setenv("JOB_HEARTBEAT_SECONDS", "6")
    monkeypatch.setenv("JOB_RETRY_INTERVAL_SECONDS", "1")
    monkeypatch.setenv("FALLBACK_CHUNK_SIZE", "2")
    monkeypatch.setenv("FALLBACK_CONCURRENCY", "1")  # chunks in order, so the Stubber's answers line up
    monkeypatch.setenv("FALLBACK_PARALLEL_CALLS", "1")  # and the items inside a chunk too
    monkeypatch.setenv("JOB_WATCH_INTERVAL_SECONDS", "1")
    monkeypatch.setenv("JOB_CAPACITY_TIMEOUT_SECONDS", "14")  # over two heartbeat windows: only the capacity watch bridges them
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "batch": {"use_docker": False}}):
        _reset()
        from devstack.bootstrap import bootstrap

        bootstrap(TENANTS)
        yield
    _reset()


@pytest.fixture
def jobs_client(jobs_aws):
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        yield client


@pytest.fixture
def pump(jobs_aws):
    from chalicelib import handlers
    from devstack.event_pump import EventPump

    return EventPump(handlers.sqs_handlers())


@pytest.fixture
def services(jobs_aws):
    from chalicelib.services import get_services

    return get_services()


@pytest.fixture
def self_hosted(aws, monkeypatch):
    """A fake OpenAI-compatible model server configured as the self-hosted endpoint."""
    from chalicelib.services import reset_services

    server = FakeOpenAI()
    monkeypatch.setenv("SELF_HOSTED_ENDPOINT", server.url)
    monkeypatch.setenv("SELF_HOSTED_MODEL", "local.smollm2-135m-instruct")
    reset_services()
    yield server
    server.server.shutdown()
    reset_services()
