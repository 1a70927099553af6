"""End to end (issue 13): prompts that hung the old matcher are answered at once over HTTP, and the API
keeps answering /v1/health meanwhile (a Lambda held by one prompt is the denial of service)."""
from __future__ import annotations

import threading
import time

import pytest
import requests

from tests.data.screening.hostile import hostile_inputs
from tests.e2e.conftest import post

pytestmark = pytest.mark.e2e

BLOCKED = ("issue.role_play_3.6kb", "words.mixed_punct", "leet.words")


def test_hostile_prompts_are_answered_promptly_and_health_stays_up(api_url):
    corpus = dict(hostile_inputs(32_000))
    answers: dict[str, tuple[int, float]] = {}

    def send(name: str) -> None:
        started = time.perf_counter()
        response = post(f"{api_url}/v1/invoke", {"prompt": corpus[name], "max_tokens": 8}, timeout=120, headers={"x-api-key": "dev-key"})
        answers[name] = (response.status_code, time.perf_counter() - started)

    senders = [threading.Thread(target=send, args=(name,)) for name in BLOCKED]
    for sender in senders:
        sender.start()
    health = requests.get(f"{api_url}/v1/health", timeout=30)
    for sender in senders:
        sender.join(130)
    assert health.status_code == 200
    for name in BLOCKED:
        status, seconds = answers[name]
        assert status == 403, (name, status)
        assert seconds < 20, (name, seconds)  # a safety net on a shared machine: the old matcher never answered
