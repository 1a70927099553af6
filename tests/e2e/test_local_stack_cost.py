"""End to end: `crossover --stage local cost report` against the running local stack, nothing set by hand."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def test_cost_report_reads_the_local_stack_from_the_stage_config(stack):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LEDGER_", "AGGREGATES_", "BUDGETS_", "DECISIONS_", "STAGE"))}
    # the e2e stack runs on a free port; `make run` uses 4566, which --stage local assumes by default
    env["AWS_ENDPOINT_URL"] = stack.env()["AWS_ENDPOINT_URL"]
    result = subprocess.run([sys.executable, "-m", "chalicelib.cli", "--stage", "local", "cost", "report", "--days", "7", "--format", "json"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["period"]["days"] == 7 and "breakeven_ranges" in report["breakeven"]
