"""The local stack, started the way `make run` starts it, on free ports."""
from __future__ import annotations

import os
import socket
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import boto3
import pytest

from devstack.stack import LocalStack, Ports
from tests.conftest import record_sent, record_stack_log


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_stack(name: str, check_log: Callable[[str], None] | None = None, **options: Any) -> Iterator[LocalStack]:
    """A LocalStack on free ports, its output in a temporary log (shown if it fails to start)."""
    log = tempfile.NamedTemporaryFile("w+", prefix=f"crossover-{name}-", suffix=".log", delete=False)
    local = LocalStack(Ports(aws=free_port(), model=free_port(), bedrock=free_port(), api=free_port()), log=log, **options)
    try:
        try:
            local.start()
        except Exception:
            local.stop()
            log.seek(0)
            pytest.fail(f"{name} stack did not start:\n" + log.read()[-4000:])
        yield local
        local.stop()
        if check_log:
            log.seek(0)
            check_log(log.read())
    finally:
        local.stop()
        log.seek(0)
        record_stack_log(log.read())  # scanned with the rest of the suite's logs (tests/conftest.py)
        log.close()
        os.unlink(log.name)


def post(url: str, body: dict[str, Any], **kwargs: Any) -> Any:
    """requests.post with a JSON body, remembered for the end-of-run log scan."""
    import requests

    record_sent(body)
    return requests.post(url, json=body, **kwargs)


@pytest.fixture(scope="session")
def stack() -> Iterator[LocalStack]:
    with running_stack("stack") as local:
        yield local


@pytest.fixture(scope="session")
def api_url(stack: LocalStack) -> str:
    return f"http://127.0.0.1:{stack.ports.api}"


@pytest.fixture(scope="session")
def stack_client(stack: LocalStack) -> Any:
    """A boto3 factory pointed at the stack's moto server."""
    env = stack.env()

    def make(service: str) -> Any:
        return boto3.client(service, endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_DEFAULT_REGION"],
                            aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])

    return make
