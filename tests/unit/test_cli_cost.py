"""`crossover cost ...`: a missing region, stage, endpoint or table is one line on stderr, never a traceback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from chalicelib.cli import stage_environment

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    clean.update({"PYTHONPATH": str(ROOT), "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                  "AWS_MAX_ATTEMPTS": "1", "AWS_EC2_METADATA_DISABLED": "true", **env})
    return subprocess.run([sys.executable, "-m", "chalicelib.cli", *args], capture_output=True, text=True, timeout=120, env=clean, cwd=ROOT)


def one_line_error(result: subprocess.CompletedProcess, expected: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("crossover: error:") and expected in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_no_region_is_one_line():
    one_line_error(run("cost", "report"), "no AWS region")


def test_unknown_stage_is_one_line():
    one_line_error(run("--stage", "staging", "cost", "report"), "unknown stage 'staging'")


def test_local_stage_without_the_stack_running_is_one_line():
    one_line_error(run("--stage", "local", "cost", "report", AWS_ENDPOINT_URL="http://127.0.0.1:9"), "is the local stack running")


def test_local_stage_reads_table_names_and_the_stacks_endpoint():
    env = stage_environment("local", str(ROOT / ".chalice" / "config.json"))
    assert env["AGGREGATES_TABLE"] == "crossover-local-aggregates" and env["LEDGER_TABLE"] == "crossover-local-ledger"
    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:4566" and env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert "AWS_ENDPOINT_URL" not in stage_environment("prod", str(ROOT / ".chalice" / "config.json"))
