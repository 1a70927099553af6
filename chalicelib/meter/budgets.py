"""Monthly budgets per tenant, enforced by reservation (check-and-add in one conditional update).

Gateways that check the spend and then add to it let concurrent requests overspend. Here a call
first reserves its worst-case cost with one conditional ADD (which DynamoDB serialises per item),
then settles to the real cost. The committed total (reservations + spend) never passes the limit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .. import aws
from ..errors import BudgetExceeded
from .alerts import BudgetAlerts, parse_thresholds
from .ledger import number

LIMIT_ROW = "limit"


@dataclass(frozen=True)
class Reservation:
    tenant: str
    period: str
    amount: Decimal
    committed_after: Decimal | None = None  # the tenant's committed total right after reserving


def current_period(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m")


class Budgets:
    def __init__(self, table_name: str, dynamodb: Any | None = None, cache_ttl_s: float = 30.0, alerts: "BudgetAlerts | None" = None) -> None:
        self._table = table_name
        self._dynamodb = dynamodb
        self._ttl = cache_ttl_s
        self._alerts = alerts
        self._limits: dict[str, tuple[float, Decimal | None]] = {}
        self._thresholds: dict[str, tuple[int, ...] | None] = {}

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def set_limit(self, tenant: str, monthly_usd: Decimal | None, alert_thresholds: tuple[int, ...] | None = None) -> None:
        """Set (None: remove) a tenant's monthly budget, and optionally its alert thresholds in percent."""
        if monthly_usd is None:
            self._client().delete_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW}})
        else:
            item = {"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW}, "limit_usd": {"N": number(monthly_usd)}}
            if alert_thresholds:
                item["alert_thresholds"] = {"S": ",".join(str(t) for t in parse_thresholds(",".join(map(str, alert_thresholds))))}
            self._client().put_item(TableName=self._table, Item=item)
        self._limits.pop(tenant, None)

    def limits(self) -> dict[str, Decimal]:
        """Every tenant's monthly limit (a scan of the limit rows: one per tenant with a budget)."""
        paginator = self._client().get_paginator("scan")
        found: dict[str, Decimal] = {}
        for page in paginator.paginate(TableName=self._table, FilterExpression="#p = :limit",
                                       ExpressionAttributeNames={"#p": "period"}, ExpressionAttributeValues={":limit": {"S": LIMIT_ROW}}):
            for item in page.get("Items", []):
                found[item["tenant"]["S"]] = Decimal(item["limit_usd"]["N"])
        return found

    def limit_for(self, tenant: str) -> Decimal | None:
        cached = self._limits.get(tenant)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        item = self._client().get_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW}}).get("Item")
        limit = Decimal(item["limit_usd"]["N"]) if item else None
        self._limits[tenant] = (time.monotonic() + self._ttl, limit)
        raw = (item or {}).get("alert_thresholds", {}).get("S")
        self._thresholds[tenant] = parse_thresholds(raw) if raw else None
        return limit

    def reserve(self, tenant: str, worst_case_usd: Decimal, period: str | None = None) -> Reservation | None:
        """Reserve `worst_case_usd` of this month's budget, or raise BudgetExceeded. None: no budget set."""
        from botocore.exceptions import ClientError

        limit = self.limit_for(tenant)
        if limit is None:
            return None
        period = period or current_period()
        if worst_case_usd > limit:  # the condition below only guards items that already exist
            raise BudgetExceeded("This request's worst-case cost is larger than the tenant's monthly budget.",
                                 {"monthly_budget_usd": str(limit), "period": period, "request_worst_case_usd": str(worst_case_usd)})
        try:
            updated = self._client().update_item(
                TableName=self._table,
                Key={"tenant": {"S": tenant}, "period": {"S": period}},
                UpdateExpression="ADD committed_usd :amount",
                ConditionExpression="attribute_not_exists(committed_usd) OR committed_usd <= :ceiling",
                ExpressionAttributeValues={":amount": {"N": number(worst_case_usd)}, ":ceiling": {"N": number(limit - worst_case_usd)}},
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise BudgetExceeded(
                    "This tenant's monthly budget would be exceeded by this request.",
                    {"monthly_budget_usd": str(limit), "period": period, "request_worst_case_usd": str(worst_case_usd)},
                ) from exc
            raise
        committed = updated.get("Attributes", {}).get("committed_usd", {}).get("N")
        return Reservation(tenant, period, worst_case_usd, Decimal(committed) if committed is not None else None)

    def settle(self, reservation: Reservation | None, actual_usd: Decimal | None) -> None:
        """Replace the reservation by the real cost (an unpriced call keeps its reservation: we can't know)."""
        if reservation is None:
            return
        actual = reservation.amount if actual_usd is None else actual_usd
        delta = actual - reservation.amount
        committed = reservation.committed_after
        if delta != 0:
            updated = self._client().update_item(
                TableName=self._table, Key={"tenant": {"S": reservation.tenant}, "period": {"S": reservation.period}},
                UpdateExpression="ADD committed_usd :delta", ExpressionAttributeValues={":delta": {"N": number(delta)}},
                ReturnValues="UPDATED_NEW",
            )
            raw = updated.get("Attributes", {}).get("committed_usd", {}).get("N")
            committed = Decimal(raw) if raw is not None else None
        self._alert(reservation.tenant, reservation.period, committed)

    def _alert(self, tenant: str, period: str, committed: Decimal | None) -> None:
        """Budget alerts on the settled total (after the real cost replaced the worst case)."""
        if self._alerts is None or not self._alerts.enabled or committed is None:
            return
        limit = self.limit_for(tenant)
        if limit is not None:
            self._alerts.check(tenant, period, committed, limit, self._thresholds.get(tenant))

    def committed(self, tenant: str, period: str | None = None) -> Decimal:
        item = self._client().get_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": period or current_period()}},
                                       ConsistentRead=True).get("Item")
        return Decimal(item["committed_usd"]["N"]) if item else Decimal(0)
