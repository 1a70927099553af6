"""HTTP operations and event sources, one Chalice blueprint per capability. app.py registers them."""
from __future__ import annotations

from ..operation import Operation


def all_operations() -> tuple[Operation, ...]:
    """Every HTTP operation, in the order the OpenAPI document lists them."""
    from . import conversations, cost, health, invoke, jobs, registry, uploads

    return (*health.OPERATIONS, *invoke.OPERATIONS, *jobs.OPERATIONS, *uploads.OPERATIONS, *conversations.OPERATIONS,
            *registry.OPERATIONS, *cost.OPERATIONS)
