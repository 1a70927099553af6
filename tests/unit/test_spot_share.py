"""The break-even's spot share comes from the queue: spot instance-seconds / the GPU instance-seconds of known
capacity of the metered Batch attempts in the report window, else the configured estimate (GPU_SPOT_SHARE / the
catalog's), and the report says which one it used. Attempts of unknown capacity are priced on-demand but left out
of the share (counting them as on-demand time would bias it low)."""
from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal as D

import pytest

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.gpu_cost import GpuAttempt, gpu_entries
from chalicelib.meter.ledger import Ledger
from chalicelib.meter.planning import FleetConfig, measured_spot_share, with_measured_spot
from chalicelib.meter.render import render_html, render_table
from chalicelib.meter.report import aggregate_ledger_rows, build_report, summarise
from chalicelib.table import InMemoryTable

CATALOG = load_catalog(get_settings().meter.price_catalog_path)
TODAY = date(2026, 12, 3)
NOW = datetime(2026, 12, 3, 12, tzinfo=timezone.utc)
JOB = {"job_id": "job-abc", "tenant": "acme", "trace_id": "t"}
# a reclaimed spot attempt (600 s), a crashed on-demand one (90 s), one of unknown capacity (priced on-demand, 10 s)
ATTEMPTS = [GpuAttempt(0, D(600), "g6e.xlarge", "spot"), GpuAttempt(1, D(90), "g6e.xlarge", "on_demand"),
            GpuAttempt(2, D(10), "g6e.xlarge", None)]


@pytest.fixture(autouse=True)
def _no_fleet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GPU_SPOT_SHARE", "GPU_SAVINGS_PLAN_SHARE", "GPU_MIN_VCPUS", "GPU_INSTANCE_TYPES"):
        monkeypatch.delenv(name, raising=False)


def test_the_measured_share_is_spot_time_over_all_gpu_time() -> None:
    assert measured_spot_share(3, D(700), D(600)) == D(600) / D(700)
    assert measured_spot_share(2, D(100), D(0)) == 0
    assert measured_spot_share(0, D(0), D(0)) is None  # nothing ran: nothing measured
    assert measured_spot_share(1, D(0), D(0)) is None  # an attempt without instance time measures nothing


def test_the_estimate_stands_without_attempts_and_gives_way_with_them() -> None:
    config = FleetConfig(spot_share=D("0.7"))
    assert with_measured_spot(config, CATALOG, 0, D(0), D(0)) == config
    measured = with_measured_spot(config, CATALOG, 4, D(1000), D(250))
    assert (measured.spot_share, measured.spot_share_basis) == (D("0.25"), "measured over 4 attempts")
    assert with_measured_spot(config, CATALOG, 1, D(10), D(10)).spot_share_basis == "measured over 1 attempt"
    # the unknown attempts are left out of the share and said so; none known: the estimate stands
    mixed = with_measured_spot(config, CATALOG, 4, D(800), D(200), unknown_attempts=1)
    assert (mixed.spot_share, mixed.spot_share_basis) == (D("0.25"), "measured over 4 attempts (1 of unknown capacity left out)")
    assert with_measured_spot(config, CATALOG, 2, D(0), D(0), unknown_attempts=2) == config


def test_a_savings_plan_share_is_capped_to_the_measured_non_spot_rest() -> None:
    measured = with_measured_spot(FleetConfig(savings_plan_share=D("0.3")), CATALOG, 5, D(100), D(90))
    assert (measured.spot_share, measured.savings_plan_share) == (D("0.9"), D("0.1"))


def _ledger() -> tuple[Ledger, InMemoryTable]:
    records = InMemoryTable("ledger", ("request_id",))
    return Ledger(records, InMemoryTable("aggregates", ("pk", "sk")), 4), records


def test_a_gpu_attempts_entry_carries_its_capacity_and_instance_seconds_once() -> None:
    book, records = _ledger()
    for _ in range(2):  # a replayed Batch event: recorded and counted once
        for entry in gpu_entries(JOB, "batch-1", ATTEMPTS, CATALOG, "qwen3-32b", "t", NOW):
            book.record(entry)
    stored = sorted(records.scan(), key=lambda r: r["request_id"])
    assert [(r["capacity"], r["instance_seconds"]) for r in stored] == [("spot", 600), ("on_demand", 90), ("unknown", 10)]
    capacity = summarise(book.daily_aggregates(["2026-12-03"]), ["2026-12-03"])["gpu_capacity"]
    assert capacity == {"attempts": "3", "instance_seconds": "700.0", "spot_seconds": "600.0", "known_seconds": "690.0",
                        "unknown_attempts": "1"}
    # the raw records fold to the same counters (reconciliation path)
    assert summarise(aggregate_ledger_rows(stored), ["2026-12-03"])["gpu_capacity"] == capacity


def test_the_report_uses_the_queues_measured_share_and_says_so() -> None:
    book, _ = _ledger()
    estimate = build_report(book.daily_aggregates, 7, TODAY, CATALOG, ops_ready=True)["breakeven"]["self_hosted"]
    assert (D(estimate["spot_share"]), estimate["spot_share_basis"]) == (CATALOG.fleet.spot_share, "configured estimate")
    for entry in gpu_entries(JOB, "batch-1", ATTEMPTS, CATALOG, "qwen3-32b", "t", NOW):
        book.record(entry)
    report = build_report(book.daily_aggregates, 7, TODAY, CATALOG, ops_ready=True)
    side = report["breakeven"]["self_hosted"]
    basis = "measured over 3 attempts (1 of unknown capacity left out)"
    assert (D(side["spot_share"]), side["spot_share_basis"]) == (D(600) / D(690), basis)
    # 87% spot instead of 70%: the blended hour is cheaper, not just relabelled
    assert D(side["blended_usd_per_hour"]) < D(estimate["blended_usd_per_hour"])
    assert f"GPU spot share: 87% ({basis})" in render_table(report)
    assert basis in render_html(report)


def test_an_attempt_of_unknown_capacity_does_not_lower_the_share() -> None:
    book, _ = _ledger()
    known = [GpuAttempt(0, D(300), "g6e.xlarge", "spot"), GpuAttempt(1, D(100), "g6e.xlarge", "on_demand")]
    for entry in gpu_entries(JOB, "batch-1", [*known, GpuAttempt(2, D(400), "g6e.xlarge", None)], CATALOG, "qwen3-32b", "t", NOW):
        book.record(entry)
    side = build_report(book.daily_aggregates, 7, TODAY, CATALOG, ops_ready=True)["breakeven"]["self_hosted"]
    assert (D(side["spot_share"]), side["spot_share_basis"]) == (D("0.75"), "measured over 3 attempts (1 of unknown capacity left out)")


def test_only_attempts_of_unknown_capacity_keep_the_estimate() -> None:
    book, _ = _ledger()
    for entry in gpu_entries(JOB, "batch-1", [GpuAttempt(0, D(500), "g6e.xlarge", None)], CATALOG, "qwen3-32b", "t", NOW):
        book.record(entry)
    report = build_report(book.daily_aggregates, 7, TODAY, CATALOG, ops_ready=True)
    assert report["gpu_capacity"]["known_seconds"] == "0.0"
    side = report["breakeven"]["self_hosted"]
    assert (D(side["spot_share"]), side["spot_share_basis"]) == (CATALOG.fleet.spot_share, "configured estimate")


def test_an_aggregate_written_before_the_unknown_counters_reads_as_all_known() -> None:
    # a day row from before the unknown-capacity counters: its attempts' capacities were never told apart, so
    # they read as known, and the report is what it was
    old = {"day": "2026-12-02", "tenant": "acme", "backend": "self_hosted", "model": "qwen3-32b", "calls": 4,
           "gpu_attempts": 4, "gpu_instance_seconds": D(1000), "gpu_spot_seconds": D(250)}
    report = build_report(lambda days: iter([old]), 7, TODAY, CATALOG, ops_ready=True)
    assert report["gpu_capacity"] == {"attempts": "4", "instance_seconds": "1000.0", "spot_seconds": "250.0",
                                      "known_seconds": "1000.0", "unknown_attempts": "0"}
    side = report["breakeven"]["self_hosted"]
    assert (D(side["spot_share"]), side["spot_share_basis"]) == (D("0.25"), "measured over 4 attempts")
