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
from .ledger import number

LIMIT_ROW = "limit"


@dataclass(frozen=True)
class Reservation:
    tenant: str
    period: str
    amount: Decimal


def current_period(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m")


class Budgets:
    def __init__(self, table_name: str, dynamodb: Any | None = None, cache_ttl_s: float = 30.0) -> None:
        self._table = table_name
        self._dynamodb = dynamodb
        self._ttl = cache_ttl_s
        self._limits: dict[str, tuple[float, Decimal | None]] = {}

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def set_limit(self, tenant: str, monthly_usd: Decimal | None) -> None:
        if monthly_usd is None:
            self._client().delete_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW}})
        else:
            self._client().put_item(TableName=self._table, Item={"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW},
                                                                 "limit_usd": {"N": number(monthly_usd)}})
        self._limits.pop(tenant, None)

    def limit_for(self, tenant: str) -> Decimal | None:
        cached = self._limits.get(tenant)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        item = self._client().get_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": LIMIT_ROW}}).get("Item")
        limit = Decimal(item["limit_usd"]["N"]) if item else None
        self._limits[tenant] = (time.monotonic() + self._ttl, limit)
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
            self._client().update_item(
                TableName=self._table,
                Key={"tenant": {"S": tenant}, "period": {"S": period}},
                UpdateExpression="ADD committed_usd :amount",
                ConditionExpression="attribute_not_exists(committed_usd) OR committed_usd <= :ceiling",
                ExpressionAttributeValues={":amount": {"N": number(worst_case_usd)}, ":ceiling": {"N": number(limit - worst_case_usd)}},
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise BudgetExceeded(
                    "This tenant's monthly budget would be exceeded by this request.",
                    {"monthly_budget_usd": str(limit), "period": period, "request_worst_case_usd": str(worst_case_usd)},
                ) from exc
            raise
        return Reservation(tenant, period, worst_case_usd)

    def settle(self, reservation: Reservation | None, actual_usd: Decimal | None) -> None:
        """Replace the reservation by the real cost (an unpriced call keeps its reservation: we can't know)."""
        if reservation is None:
            return
        actual = reservation.amount if actual_usd is None else actual_usd
        delta = actual - reservation.amount
        if delta == 0:
            return
        self._client().update_item(
            TableName=self._table, Key={"tenant": {"S": reservation.tenant}, "period": {"S": reservation.period}},
            UpdateExpression="ADD committed_usd :delta", ExpressionAttributeValues={":delta": {"N": number(delta)}},
        )

    def committed(self, tenant: str, period: str | None = None) -> Decimal:
        item = self._client().get_item(TableName=self._table, Key={"tenant": {"S": tenant}, "period": {"S": period or current_period()}},
                                       ConsistentRead=True).get("Item")
        return Decimal(item["committed_usd"]["N"]) if item else Decimal(0)
