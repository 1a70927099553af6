"""The measured spot share through DynamoDB (moto) rather than the in-memory twin: GPU attempts recorded twice
(a replayed Batch event) are counted once in the aggregates, and the report's break-even uses their share, with
the attempt of unknown capacity left out of it."""
from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest


def test_gpu_attempts_through_dynamodb_give_the_measured_spot_share(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.meter.gpu_cost import GpuAttempt, gpu_entries
    from chalicelib.meter.ledger import Ledger
    from chalicelib.meter.report import build_report
    from chalicelib.services import get_services

    monkeypatch.delenv("GPU_SPOT_SHARE", raising=False)
    services = get_services()
    settings, catalog = services.settings, services.catalog
    ledger = Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, shards=2)
    now = datetime.now(timezone.utc)
    attempts = [GpuAttempt(0, Decimal("450.5"), "g6e.xlarge", "spot"), GpuAttempt(1, Decimal("49.5"), "g6e.xlarge", "on_demand"),
                GpuAttempt(2, Decimal("300"), "g6e.xlarge", None)]
    job = {"job_id": "job-spot", "tenant": "acme", "trace_id": "t"}
    written = [ledger.record(e) for _ in range(2) for e in gpu_entries(job, "batch-9", attempts, catalog, "qwen3-32b", "t", now)]
    assert written == [True, True, True, False, False, False]
    report = build_report(ledger.daily_aggregates, 1, now.date(), catalog, ops_ready=True)
    assert report["gpu_capacity"] == {"attempts": "3", "instance_seconds": "800.0", "spot_seconds": "450.5",
                                      "known_seconds": "500.0", "unknown_attempts": "1"}
    side = report["breakeven"]["self_hosted"]
    assert (Decimal(side["spot_share"]), side["spot_share_basis"]) == (
        Decimal("0.901"), "measured over 3 attempts (1 of unknown capacity left out)")
