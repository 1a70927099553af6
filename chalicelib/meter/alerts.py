"""Budget alerts: one SNS message per tenant, threshold and month, however many requests cross it.

When a settled request takes a tenant's committed spend past a threshold (by default 50, 80 and 100%
of the monthly budget; per tenant on its budget row), the first writer of the marker item
`alert#<period>#<threshold>` in the budgets table (a conditional put) publishes; retries and
concurrent requests find the marker and stay quiet. If the publish fails, the marker is removed so
the next request retries it. Alerting never fails the request that triggered it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .. import aws
from ..observability import logger, metrics
from ..table import ConditionFailed, Table, open_table

DEFAULT_THRESHOLDS = (50, 80, 100)


def crossed_thresholds(committed: Decimal, limit: Decimal, thresholds: tuple[int, ...]) -> list[int]:
    """Thresholds (percent of `limit`) that `committed` has reached, lowest first."""
    if limit <= 0:
        return []
    return sorted(t for t in set(thresholds) if committed * 100 >= limit * t)


def marker_key(tenant: str, period: str, threshold: int) -> dict[str, str]:
    return {"tenant": tenant, "period": f"alert#{period}#{threshold}"}


def parse_thresholds(raw: str) -> tuple[int, ...]:
    values = tuple(int(part) for part in raw.replace(" ", "").split(",") if part)
    if not values or any(v <= 0 or v > 1000 for v in values):
        raise ValueError(f"budget alert thresholds must be percentages between 1 and 1000: {raw!r}")
    return values


@dataclass(frozen=True)
class AlertsConfig:
    """BUDGET_ALERTS_TOPIC_ARN (empty: alerts off) and BUDGET_ALERT_THRESHOLDS (default "50,80,100")."""

    topic_arn: str = ""
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS

    @classmethod
    def from_env(cls) -> "AlertsConfig":
        raw = os.environ.get("BUDGET_ALERT_THRESHOLDS", "").strip()
        return cls(os.environ.get("BUDGET_ALERTS_TOPIC_ARN", "").strip(), parse_thresholds(raw) if raw else DEFAULT_THRESHOLDS)


class BudgetAlerts:
    def __init__(self, table_name: "str | Table", config: AlertsConfig, dynamodb: Any | None = None, sns: Any | None = None) -> None:
        self._table = open_table(table_name, ("tenant", "period"), dynamodb)  # the budgets table
        self._config = config
        self._sns = sns

    @property
    def enabled(self) -> bool:
        return bool(self._config.topic_arn)

    def check(self, tenant: str, period: str, committed: Decimal, limit: Decimal, thresholds: tuple[int, ...] | None = None) -> list[int]:
        """Publish every newly crossed threshold once; the thresholds published by this call."""
        if not self.enabled:
            return []
        published = []
        for threshold in crossed_thresholds(committed, limit, thresholds or self._config.thresholds):
            try:
                if self._claim(tenant, period, threshold, committed, limit):
                    self._publish(tenant, period, threshold, committed, limit)
                    published.append(threshold)
            except Exception as exc:  # an alert must never fail the request that crossed the line
                logger.warning("budget.alert_failed", extra={"tenant": tenant, "threshold": threshold, "error": exc.__class__.__name__})
        return published

    def _claim(self, tenant: str, period: str, threshold: int, committed: Decimal, limit: Decimal) -> bool:
        try:
            self._table.put_new({**marker_key(tenant, period, threshold), "committed_usd": committed, "limit_usd": limit,
                                 "claimed_at": datetime.now(timezone.utc).isoformat()})
        except ConditionFailed:
            return False  # someone else crossed it first (or a retry): already published
        return True

    def _publish(self, tenant: str, period: str, threshold: int, committed: Decimal, limit: Decimal) -> None:
        sns = self._sns or aws.client("sns")
        message = {"tenant": tenant, "period": period, "threshold_percent": threshold, "committed_usd": str(committed),
                   "limit_usd": str(limit), "burn": f"{committed / limit:.3f}"}
        try:
            sns.publish(TopicArn=self._config.topic_arn, Subject=f"Crossover budget: {tenant} at {threshold}% of its {period} budget"[:100],
                        Message=json.dumps(message),
                        MessageAttributes={"tenant": {"DataType": "String", "StringValue": tenant},
                                           "threshold": {"DataType": "Number", "StringValue": str(threshold)}})
        except Exception:
            self._table.delete(marker_key(tenant, period, threshold))
            raise
        metrics.add_metric(name="BudgetAlertsPublished", unit="Count", value=1)
        logger.info("budget.alert_published", extra={"tenant": tenant, "period": period, "threshold": threshold})
