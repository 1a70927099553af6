"""Cold start per Lambda entry point: what a fresh interpreter imports before the first event is handled.

Every Chalice function's handler is `app.<name>`, so each starts with `import app` (the API handler's
whole import); the event handlers then import, on their first call, the modules listed below (read off
chalicelib/handlers.py; boto3 and the service objects are imported on first use, not by `app`).
Figures: median of fresh interpreters, with the slowest imports from `python -X importtime`.
Target (issue 9): the API handler under 300 ms.
"""
from __future__ import annotations

import os

from common import cold_import_ms  # noqa: F401  (sets sys.path)

RUNS = int(os.environ.get("BENCH_COLD_RUNS", 5))
SERVICES = ["boto3", "chalicelib.services"]
BATCH = "aws_lambda_powertools.utilities.batch"
FIRST_CALL = {
    "api_handler (GET /v1/health)": [],
    "api_handler (POST /v1/invoke)": SERVICES,
    "job_steps": [*SERVICES, BATCH, "chalicelib.jobs.service"],
    "requests / requests_fifo / object_events": [*SERVICES, BATCH, "chalicelib.events"],
    "meter_spill": [*SERVICES, BATCH, "chalicelib.meter.spill"],
    "batch_job_failed": [*SERVICES, "chalicelib.jobs.service"],
    "daily_cost_report": [*SERVICES, "chalicelib.meter.service"],
}


def main() -> None:
    for entry, modules in FIRST_CALL.items():
        statement = ", ".join(["app", *modules])
        median_ms, slowest = cold_import_ms(statement, runs=RUNS)
        print(f"{entry:42s} import {statement}: {median_ms:6.0f} ms   slowest: {slowest}")
    litellm_ms, _ = cold_import_ms("litellm", runs=3)
    print(f"{'(for comparison) import litellm':42s} {litellm_ms:6.0f} ms")


if __name__ == "__main__":
    main()
