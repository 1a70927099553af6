"""Inject AWS faults into a real boto3 client: the request never leaves, the client gets the error
response the service would send, and botocore's own retry logic runs on it (unlike a mock of our code).
Used by the fault-injection tests and the meter load benchmark."""
from __future__ import annotations

import json
import random
from contextlib import contextmanager
from typing import Any, Iterator

from botocore.awsrequest import AWSResponse


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


class Fault:
    """Answers `operation` on `client` with an error for the first `times` attempts (None: every attempt),
    or, with `share`, for that fraction of attempts at random."""

    def __init__(self, client: Any, operation: str, status: int, code: str, times: int | None = None,
                 share: float | None = None) -> None:
        self.client, self.operation, self.status, self.code, self.times, self.share = client, operation, status, code, times, share
        self.attempts = 0
        self.injected = 0
        self.event = f"before-send.{client.meta.service_model.service_id.hyphenize()}.{operation}"

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        self.attempts += 1
        if (self.times is not None and self.attempts > self.times) or (self.share is not None and random.random() >= self.share):
            return None  # let the request through (to moto)
        self.injected += 1
        # botocore calls every before-send handler and uses the first response; moving the request
        # off moto's URLs keeps moto from also executing it (a throttled write must not land).
        request.url = "https://fault-injected.invalid/"
        protocol = self.client.meta.service_model.protocol
        if protocol in ("json", "rest-json"):
            body = json.dumps({"__type": self.code, "message": f"injected {self.code}"}).encode()
            headers = {"x-amzn-RequestId": "injected", "x-amzn-query-error": f"{self.code};Sender", "Content-Type": "application/x-amz-json-1.0"}
        else:
            body = f"<Error><Code>{self.code}</Code><Message>injected {self.code}</Message></Error>".encode()
            headers = {"x-amz-request-id": "injected"}
        return AWSResponse(request.url, self.status, headers, _Raw(body))


def inject(client: Any, operation: str, status: int, code: str, times: int | None = None, share: float | None = None) -> Fault:
    """Install a fault on the client for good (see `fault` for a scoped one)."""
    injected = Fault(client, operation, status, code, times, share)
    client.meta.events.register_first(injected.event, injected)
    return injected


@contextmanager
def fault(client: Any, operation: str, status: int, code: str, times: int | None = None) -> Iterator[Fault]:
    injected = inject(client, operation, status, code, times)
    try:
        yield injected
    finally:
        client.meta.events.unregister(injected.event, injected)


THROTTLED = (400, "ProvisionedThroughputExceededException")
