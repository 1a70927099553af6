"""Orchestration overhead of POST /v1/invoke with Bedrock answered instantly, and cold import time.

Two figures per request: (a) pure orchestration (auth from warm cache, validation, screening,
agent loop, pricing, idempotency skipped, ledger write to an in-memory table), and (b) the same
with the ledger and tenant lookups going to moto's in-process DynamoDB, whose own cost dominates.
Targets (issue 3): overhead p99 < 5 ms, handler import < 300 ms.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from common import ROOT, cold_import_ms, summary_ms  # noqa: F401  (sets sys.path)

os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                   "POWERTOOLS_LOG_LEVEL": "WARNING"})
for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_PROFILE"):
    os.environ.pop(name, None)

REQUESTS = int(os.environ.get("BENCH_REQUESTS", 2000))


class InstantBedrock:
    name = "bedrock"

    def converse(self, model_id: str, messages: Any, system: Any, tool_config: Any, max_tokens: int, timeout_s: Any = None,
                 inference: Any = None) -> Any:
        from chalicelib.core import Usage
        from chalicelib.models import ModelTurn

        return ModelTurn([{"text": "ok"}], "end_turn", Usage(input_tokens=20, output_tokens=3))


def memory_ledger() -> Any:
    """The ledger's in-memory twin (the same conditional put as DynamoDB, no moto)."""
    from chalicelib.table import InMemoryTable

    return InMemoryTable("ledger", ("request_id",))


def run(with_moto: bool) -> list[float]:
    from chalicelib.meter.ledger import Ledger
    from chalicelib.services import get_services, reset_services
    from devstack.bootstrap import bootstrap

    reset_services()
    bootstrap({"bench-key": ("bench", ("invoke",))})
    services = get_services()
    services.backends["bedrock"] = InstantBedrock()
    if not with_moto:
        services.ledger = services.meter.ledger = Ledger(memory_ledger(), "", 1)
    return time_invokes("bench-key", "Summarise our refund policy for a customer in two sentences.", REQUESTS)


def time_invokes(api_key: str, prompt: str, requests: int, warmup: int = 50) -> list[float]:
    """Seconds per POST /v1/invoke through the real handler (after `warmup` calls for clients and caches)."""
    from chalicelib.http import dispatch
    from chalicelib.routes.invoke import OPERATIONS

    [invoke] = [operation for operation in OPERATIONS if operation.operation_id == "invoke"]

    body = json.dumps({"prompt": prompt, "max_tokens": 64}).encode()
    headers = {"x-api-key": api_key, "content-type": "application/json"}
    for _ in range(warmup):
        dispatch(headers, body, invoke.run)
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        response = dispatch(headers, body, invoke.run)
        samples.append(time.perf_counter() - started)
        assert response.status_code == 200, response.body
    return samples


def main() -> None:
    import contextlib

    from moto import mock_aws

    # The EMF metrics are printed to stdout as in Lambda (part of the cost); keep them off the report.
    with mock_aws(), open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        pure = run(with_moto=False)
        moto = run(with_moto=True)
    print(f"invoke overhead, orchestration only (ledger in memory): {summary_ms(pure)}")
    print(f"invoke overhead, with moto in-process DynamoDB ledger: {summary_ms(moto)}")
    median_ms, top = cold_import_ms("app")
    print(f"cold import of app.py (median of 5 fresh interpreters): {median_ms:.0f} ms")
    print(f"  slowest imports: {top}")


if __name__ == "__main__":
    main()
