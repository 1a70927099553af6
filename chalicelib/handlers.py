"""Event handlers (schedules, queues, buckets): app.py wires them, they call the services."""
from __future__ import annotations

from typing import Any

from .observability import metrics
from .services import get_services


def daily_cost_report() -> dict[str, Any]:
    from .meter.service import publish_daily_report

    services = get_services()
    settings = services.settings
    try:
        return publish_daily_report(services.ledger, services.decisions, services.catalog, settings.ops_ready,
                                    settings.reports_bucket, settings.report_days, services.catalog.recommendation.days_to_confirm,
                                    settings.kms_key_id)
    finally:
        metrics.flush_metrics()
