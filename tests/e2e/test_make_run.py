"""`make run` as a developer meets it: a readable console, "ready" last, and every process gone on Ctrl-C or
SIGTERM (or when the runner itself is killed); the local API keeps answering while one request is slow."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Iterator

import pytest
import requests

from devstack.fake_bedrock import FakeBedrock, text_answer
from devstack.stack import ROOT, LocalStack
from tests.e2e.conftest import free_port, running_stack

pytestmark = pytest.mark.e2e

READY_LAST_LINE = "Ctrl-C stops everything."


def _descendants(root_pid: int) -> set[int]:
    """Every live process below root_pid (children run in their own sessions, so walk parent links)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), [root_pid]
    while frontier:
        pid = frontier.pop()
        children = {child for child, parent in parents.items() if parent == pid}
        found |= children
        frontier.extend(children)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class MakeRun:
    """`python -m devstack.stack` on free ports, in its own process group as `make run` would be."""

    def __init__(self) -> None:
        env = {key: value for key, value in os.environ.items() if key != "VERBOSE"}
        args = ["--api-port", str(free_port()), "--aws-port", str(free_port()), "--model-port", str(free_port()),
                "--bedrock-port", str(free_port())]
        self.process = subprocess.Popen([sys.executable, "-m", "devstack.stack", *args], cwd=ROOT, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def read_until(self, text: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return
        raise AssertionError(f"{text!r} not printed within {timeout_s}s; output so far:\n" + "\n".join(self.seen[-40:]))

    def drain(self, quiet_s: float) -> list[str]:
        later: list[str] = []
        deadline = time.monotonic() + quiet_s
        while time.monotonic() < deadline:
            try:
                later.append(self.lines.get(timeout=0.2))
            except queue.Empty:
                pass
        self.seen.extend(later)
        return later

    def kill_all(self) -> None:
        for pid in _descendants(self.process.pid) | {self.process.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def make_run() -> Iterator[MakeRun]:
    run = MakeRun()
    try:
        run.read_until(READY_LAST_LINE, 180)
        yield run
    finally:
        run.kill_all()


def _wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.2)
    return {pid for pid in pids if _alive(pid)}


def test_console_shows_our_logs_hides_infrastructure_chatter_and_ends_start_up_with_ready(make_run: MakeRun) -> None:
    later = make_run.drain(quiet_s=3)
    output = "\n".join(make_run.seen)
    assert "[    api] Serving on" in output and "[ events] local-events: pumping" in output
    assert "llama_model_loader" not in output and "print_info:" not in output, "the model loader's dump is shown"
    assert not [line for line in make_run.seen if line.startswith("[   moto]") and '" 200 ' in line], "moto's access log is shown"
    assert later == [], f"start-up output after the ready block: {later}"


def test_sigterm_to_the_process_group_stops_every_process_it_started(make_run: MakeRun) -> None:
    children = _descendants(make_run.process.pid)
    assert len(children) >= 4  # moto, model, bridge, events, api
    os.killpg(make_run.process.pid, signal.SIGTERM)  # what `kill -TERM -<pgid>` of `make run` delivers
    make_run.process.wait(timeout=60)
    assert _wait_gone(children, 30) == set()


def test_children_go_even_when_the_runner_is_killed_outright(make_run: MakeRun) -> None:
    children = _descendants(make_run.process.pid)
    os.kill(make_run.process.pid, signal.SIGKILL)  # no handler runs: the kernel's parent-death signal must
    make_run.process.wait(timeout=10)
    assert _wait_gone(children, 30) == set()


def test_local_api_answers_health_while_a_slow_request_is_in_flight() -> None:
    arrived, release = threading.Event(), threading.Event()

    def held(_body: dict) -> dict:
        arrived.set()
        release.wait(60)
        return text_answer("finally", 10, 3)

    with FakeBedrock() as bedrock, running_stack("concurrency", bedrock_endpoint=bedrock.url, with_events=False) as local:
        url = f"http://127.0.0.1:{local.ports.api}"
        key = local.env().get("CROSSOVER_DEV_API_KEY", "dev-key")
        bedrock.script.append(held)
        answers: list[requests.Response] = []
        slow = threading.Thread(target=lambda: answers.append(requests.post(
            f"{url}/v1/invoke", json={"prompt": "What is 2 + 2?", "max_tokens": 16},
            headers={"x-api-key": key}, timeout=120)))
        slow.start()
        try:
            assert arrived.wait(60), "the slow request never reached the model"
            health = requests.get(f"{url}/v1/health", timeout=30)
            assert health.status_code == 200
            assert slow.is_alive(), "the slow request finished before health was asked: the test proved nothing"
        finally:
            release.set()
            slow.join(120)
        assert answers and answers[0].status_code == 200, answers and answers[0].text
