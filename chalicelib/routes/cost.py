"""The meter's outputs: GET /v1/cost/report (ops role), the daily report, and replaying spilled ledger entries."""
from __future__ import annotations

from typing import Any

from .. import api, handlers
from ..operation import AUTHENTICATED, Operation, blueprint
from ..timing import CONSUMERS

DAYS = {"name": "days", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1, "maximum": 366, "default": 30}}
OPERATIONS = (
    Operation("costReport", "GET", "/v1/cost/report", api.cost_report, 200, "CostReport", "Cost report (ops role)",
              (400, *AUTHENTICATED), role="ops", parameters=(DAYS,)),
)
routes = blueprint(__name__, OPERATIONS)


@routes.schedule("cron(15 0 * * ? *)", name="daily_cost_report")
def daily_cost_report(event: Any) -> Any:
    return handlers.daily_cost_report()


# Ledger entries DynamoDB refused after a paid call (chalicelib/meter/spill.py), replayed idempotently.
@routes.on_sqs_message(queue=handlers.queue_name("meter_spill"), batch_size=CONSUMERS["meter_spill"].batch_size, name="meter_spill")
def meter_spill(event: Any) -> Any:
    return handlers.meter_spill(event.to_dict())
