"""Structured logs (Powertools Logger, JSON) and metrics (Powertools Metrics, CloudWatch EMF).

Log what an operator needs (trace id, tenant, model, backend, decision, reason codes, latency),
never raw prompts, tool inputs or API keys.
"""
from __future__ import annotations

import os
import re
import secrets
import time

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "crossover"))
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Crossover"))

TRACE_HEADER = "X-Amzn-Trace-Id"
# Accept what X-Ray and load balancers send; anything else is replaced, so a header can't inject into logs.
_TRACE_ID_SHAPE = re.compile(r"^[A-Za-z0-9=;:._-]{1,256}$")

__all__ = ["logger", "metrics", "MetricUnit", "new_trace_id", "trace_id_from", "TRACE_HEADER"]


def new_trace_id() -> str:
    """An X-Ray style trace id: Root=1-<epoch hex>-<96 random bits>."""
    return f"Root=1-{int(time.time()):08x}-{secrets.token_hex(12)}"


def trace_id_from(headers: dict[str, str]) -> str:
    presented = headers.get(TRACE_HEADER.lower()) or headers.get(TRACE_HEADER) or ""
    return presented if _TRACE_ID_SHAPE.match(presented) else new_trace_id()
