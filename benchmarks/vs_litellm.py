"""Crossover's invoke path against LiteLLM's completion, same run, same instant Converse server.

Both talk HTTP to one local server that speaks Bedrock's Converse protocol and answers at once
(devstack/fake_bedrock.py). Crossover does more per request: API key auth, body validation, prompt
screening, routing, budget check, the agent loop, pricing and metering to DynamoDB (moto, in-process).
Figures: p50/p99 per request for both and their ratio, plus cold import times.
Target (issue 9): Crossover's p99 at most one third of LiteLLM's.
"""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import time

from common import cold_import_ms, item_level_moto_transactions, summary_ms, percentile  # noqa: F401  (sets sys.path)

os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                   "POWERTOOLS_LOG_LEVEL": "WARNING", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"})
for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
    os.environ.pop(name, None)

REQUESTS = int(os.environ.get("BENCH_REQUESTS", 2000))
MODEL = "anthropic.claude-3-sonnet-20240229-v1:0"
PROMPT = "Summarise our refund policy for a customer in two sentences."


def ledger_writes_alone(count: int) -> list[float]:
    """Seconds per Ledger.record against moto in-process, nothing else: what moto adds per metered call."""
    from datetime import datetime, timezone
    from decimal import Decimal

    from chalicelib.meter.ledger import LedgerEntry
    from chalicelib.core import Usage
    from chalicelib.services import get_services

    ledger = get_services().ledger
    samples = []
    for index in range(count):
        entry = LedgerEntry(request_id=f"alone-{index}", tenant="bench", model=MODEL, backend="bedrock", kind="invoke",
                            usage=Usage(input_tokens=20, output_tokens=5), cost_usd=Decimal("0.0001"), catalog_version="b",
                            trace_id="t", created_at=datetime.now(timezone.utc))
        started = time.perf_counter()
        ledger.record(entry)
        samples.append(time.perf_counter() - started)
    return samples


def crossover(url: str) -> tuple[list[float], list[float], list[float]]:
    """(with the ledger in moto's DynamoDB, with the ledger in memory, moto's ledger write alone).

    moto's transactions are made item-level (common.item_level_moto_transactions) unless
    BENCH_PLAIN_MOTO=1: unmodified, each metered call costs O(ledger size) inside moto."""
    from moto import mock_aws

    from chalicelib.meter.ledger import Ledger
    from chalicelib.services import get_services, reset_services
    from devstack.bootstrap import bootstrap
    from invoke_overhead import memory_ledger, time_invokes

    os.environ["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = url
    if os.environ.get("BENCH_PLAIN_MOTO") != "1":
        item_level_moto_transactions()
    with mock_aws(), open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        reset_services()
        bootstrap({"bench-key": ("bench", ("invoke",))})
        with_moto = time_invokes("bench-key", PROMPT, REQUESTS)
        write_alone = ledger_writes_alone(REQUESTS)
        services = get_services()
        services.ledger = services.meter.ledger = Ledger(memory_ledger(), "", 1)
        in_memory = time_invokes("bench-key", PROMPT, REQUESTS)
    return with_moto, in_memory, write_alone


def litellm_run(url: str) -> list[float]:
    import litellm

    kwargs = dict(model=f"bedrock/converse/{MODEL}", messages=[{"role": "user", "content": PROMPT}], max_tokens=64,
                  aws_bedrock_runtime_endpoint=url, aws_access_key_id="bench", aws_secret_access_key="bench", aws_region_name="us-east-1")
    for _ in range(50):
        litellm.completion(**kwargs)
    samples = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        response = litellm.completion(**kwargs)
        samples.append(time.perf_counter() - started)
        assert response.choices[0].message.content == "ok"
    return samples


def main() -> None:
    from devstack.fake_bedrock import FakeBedrock

    with FakeBedrock() as server:
        ours, ours_no_moto, moto_write = crossover(server.url)
        theirs = litellm_run(server.url)
    p99 = lambda samples: percentile(samples, 99)  # noqa: E731
    moto_kind = "unmodified" if os.environ.get("BENCH_PLAIN_MOTO") == "1" else "item-level transactions"
    print(f"crossover invoke (auth+screen+route+agent+meter to moto DynamoDB, {moto_kind}): {summary_ms(ours)}")
    print(f"crossover invoke, ledger in memory (moto's transaction cost removed): {summary_ms(ours_no_moto)}")
    print(f"  of which one Ledger.record into moto, measured alone:                   {summary_ms(moto_write)}")
    print(f"litellm.completion (bedrock converse provider):                     {summary_ms(theirs)}")
    print(f"p99 ratio crossover/litellm: {p99(ours) / p99(theirs):.2f} (with moto ledger), "
          f"{p99(ours_no_moto) / p99(theirs):.2f} (ledger in memory); target <= 0.33")
    print(f"p50 ratio crossover/litellm: {statistics.median(ours) / statistics.median(theirs):.2f} / "
          f"{statistics.median(ours_no_moto) / statistics.median(theirs):.2f}")
    app_ms, _ = cold_import_ms("app")
    litellm_ms, _ = cold_import_ms("litellm", runs=3)
    print(f"cold import: app.py {app_ms:.0f} ms, litellm {litellm_ms:.0f} ms (median of fresh interpreters)")


if __name__ == "__main__":
    main()
