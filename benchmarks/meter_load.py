"""Meter under load: 10,000 metered calls from 32 threads against moto in server mode; totals must match.

Each thread has its own boto3 clients (as Lambda containers would) and writes through the app's
MeterWriter: ledger transaction, botocore retries, spill queue when DynamoDB still refuses. A share of
TransactWriteItems attempts (BENCH_METER_THROTTLE, default 5%) is answered with throttling before it
reaches moto, and AWS_MAX_ATTEMPTS is 2, so some entries exhaust their retries and are spilled; the
spill queue is then drained through the real `meter_spill` handler. Totals must equal the calls made.

Two changes to moto's server, in this process only, and said in the output:
- its TransactWriteItems is serialised (DynamoDB transactions are; moto's are not thread-safe and
  race into HTTP 500s or a rollback that wipes a concurrent write);
- its rollback snapshot holds the items the transaction touches, not a deep copy of every touched table
  (which made each call O(table): 7 calls/s at 2,000 rows, ~2 hours for 10,000).
Same semantics for our two-item transactions; without them (BENCH_METER_PLAIN_MOTO=1) the run is the raw one.
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

from common import ROOT, item_level_moto_transactions  # noqa: F401  (sets sys.path)

CALLS = int(os.environ.get("BENCH_METER_CALLS", 10_000))
THREADS = int(os.environ.get("BENCH_METER_THREADS", 32))
THROTTLE = float(os.environ.get("BENCH_METER_THROTTLE", 0.05))
PLAIN_MOTO = os.environ.get("BENCH_METER_PLAIN_MOTO") == "1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def drain_spill_queue(queue_name: str) -> int:
    """Run the spill queue through the app's meter_spill handler until it is empty (what Lambda would do)."""
    import boto3

    from chalicelib import handlers
    from devstack.event_pump import lambda_sqs_event

    sqs = boto3.client("sqs")
    url = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    replayed = 0
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, AttributeNames=["All"]).get("Messages", [])
        if not messages:
            return replayed
        failed = {item["itemIdentifier"] for item in handlers.meter_spill(lambda_sqs_event(messages, arn))["batchItemFailures"]}
        for message in messages:
            if message["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                replayed += 1


def main() -> None:
    import boto3
    from botocore.config import Config
    from moto.server import ThreadedMotoServer

    port = free_port()
    os.environ.update({"AWS_ACCESS_KEY_ID": "load", "AWS_SECRET_ACCESS_KEY": "load", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "MOTO_PORT": str(port), "AWS_MAX_ATTEMPTS": "2",
                       "POWERTOOLS_LOG_LEVEL": "ERROR", "POWERTOOLS_METRICS_NAMESPACE": "CrossoverBench"})
    if not PLAIN_MOTO:
        item_level_moto_transactions()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        from chalicelib.meter.ledger import Ledger, LedgerEntry
        from chalicelib.meter.spill import MeterWriter
        from devstack.faults import THROTTLED, inject
        from chalicelib.core import Usage
        from chalicelib.services import get_settings
        from devstack.bootstrap import bootstrap

        bootstrap({})
        settings = get_settings()
        local = threading.local()
        outcomes: Counter[str] = Counter()
        faults: list = []
        errors: Counter[str] = Counter()
        now = datetime.now(timezone.utc)

        def write(index: int) -> None:
            if not hasattr(local, "meter"):
                client = boto3.client("dynamodb", config=Config(max_pool_connections=4))
                faults.append(inject(client, "TransactWriteItems", *THROTTLED, share=THROTTLE))
                local.meter = MeterWriter(Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, settings.meter.shards, client),
                                          settings.meter.spill_queue, boto3.client("sqs"))
            entry = LedgerEntry(request_id=f"load-{index}", tenant=f"t{index % 7}", model="anthropic.claude-3-sonnet-20240229-v1:0",
                                backend="bedrock", kind="invoke", usage=Usage(input_tokens=100 + index % 13, output_tokens=20),
                                cost_usd=Decimal("0.00061"), catalog_version="load", trace_id="t", created_at=now)
            try:
                outcomes[local.meter.record(entry)] += 1
            except Exception as exc:  # MeterWriter never raises; count it if it ever does
                errors[f"{exc.__class__.__name__}: {str(exc)[:80]}"] += 1

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            list(pool.map(write, range(CALLS)))
        elapsed = time.perf_counter() - started
        replayed = drain_spill_queue(settings.meter.spill_queue)
        ledger = Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, settings.meter.shards, boto3.client("dynamodb"))
        rows = list(ledger.daily_aggregates([now.strftime("%Y-%m-%d")]))
        calls = sum(int(row["calls"]) for row in rows)
        tokens = sum(int(row["input_tokens"]) for row in rows)
        cost = sum(Decimal(row["cost_usd"]) for row in rows)
        ledger_rows = sum(page["Count"] for page in boto3.client("dynamodb").get_paginator("scan").paginate(TableName=settings.meter.ledger_table, Select="COUNT"))
        expected_tokens = sum(100 + i % 13 for i in range(CALLS))
        print(f"meter under load: {CALLS} calls, {THREADS} threads, moto server{' (unmodified)' if PLAIN_MOTO else ' (transactions serialised, item-level rollback)'}: "
              f"{CALLS / elapsed:.0f} calls/s ({elapsed:.1f} s)")
        print(f"  injected: {sum(f.injected for f in faults)} throttled TransactWriteItems attempts ({THROTTLE:.0%} of attempts), AWS_MAX_ATTEMPTS=2")
        print(f"  outcomes: {dict(outcomes)}; raised: {sum(errors.values())}; spilled entries replayed by the meter_spill handler: {replayed}")
        for error, count in errors.most_common(3):
            print(f"  raised x{count}: {error}")
        exact = ledger_rows == calls == CALLS and tokens == expected_tokens and cost == Decimal("0.00061") * CALLS
        print(f"  ledger rows {ledger_rows}, aggregate calls {calls}, input tokens {tokens} (expected {expected_tokens}), "
              f"cost {cost} (expected {Decimal('0.00061') * CALLS}); totals exact: {exact}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
