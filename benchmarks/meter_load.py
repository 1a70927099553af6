"""Meter under load: 10,000 metered calls from 32 threads against moto in server mode; totals must match.

Each thread has its own boto3 client (as Lambda containers would). Prints throughput, how many
writes failed (and why), and whether the daily aggregates equal the sum of what was written.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from decimal import Decimal

from common import ROOT  # noqa: F401  (sets sys.path)

CALLS = int(os.environ.get("BENCH_METER_CALLS", 10_000))
THREADS = int(os.environ.get("BENCH_METER_THREADS", 32))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    import boto3
    from botocore.config import Config
    from moto.server import ThreadedMotoServer

    port = free_port()
    os.environ.update({"AWS_ACCESS_KEY_ID": "load", "AWS_SECRET_ACCESS_KEY": "load", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "MOTO_PORT": str(port)})
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        from chalicelib.meter.ledger import Ledger, LedgerEntry
        from chalicelib.meter.pricing import Usage
        from chalicelib.services import get_settings
        from devstack.bootstrap import bootstrap

        bootstrap({})
        settings = get_settings()
        local = threading.local()
        errors: Counter[str] = Counter()
        now = datetime.now(timezone.utc)

        def write(index: int) -> bool:
            if not hasattr(local, "ledger"):
                client = boto3.client("dynamodb", config=Config(retries={"mode": "standard", "total_max_attempts": 8}, max_pool_connections=4))
                local.ledger = Ledger(settings.ledger_table, settings.aggregates_table, settings.meter_shards, client)
            entry = LedgerEntry(request_id=f"load-{index}", tenant=f"t{index % 7}", model="anthropic.claude-3-sonnet-20240229-v1:0",
                                backend="bedrock", kind="invoke", usage=Usage(input_tokens=100 + index % 13, output_tokens=20),
                                cost_usd=Decimal("0.00061"), catalog_version="load", trace_id="t", created_at=now)
            try:
                return local.ledger.record(entry)
            except Exception as exc:
                errors[f"{exc.__class__.__name__}: {str(exc)[:80]}"] += 1
                return False

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            written = sum(pool.map(write, range(CALLS)))
        elapsed = time.perf_counter() - started
        ledger = Ledger(settings.ledger_table, settings.aggregates_table, settings.meter_shards, boto3.client("dynamodb"))
        rows = list(ledger.daily_aggregates([now.strftime("%Y-%m-%d")]))
        calls = sum(int(row["calls"]) for row in rows)
        tokens = sum(int(row["input_tokens"]) for row in rows)
        ledger_rows = sum(page["Count"] for page in boto3.client("dynamodb").get_paginator("scan").paginate(TableName=settings.ledger_table, Select="COUNT"))
        expected_tokens = sum(100 + i % 13 for i in range(CALLS))
        print(f"meter under load: {CALLS} calls, {THREADS} threads, moto server: {CALLS / elapsed:.0f} calls/s, "
              f"{written} written, {sum(errors.values())} failed")
        for error, count in errors.most_common(3):
            print(f"  failed x{count}: {error}")
        print(f"  ledger rows {ledger_rows}, aggregate calls {calls}, aggregate input tokens {tokens} "
              f"(expected for all calls {expected_tokens}); aggregates match the ledger: {calls == ledger_rows}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
