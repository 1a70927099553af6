"""Monthly budgets per tenant, enforced by reservation (check-and-add in one conditional update).

Gateways that check the spend and then add to it let concurrent requests overspend. Here a call
first reserves its worst-case cost with one conditional ADD (which DynamoDB serialises per item),
then settles to the real cost. The committed total (reservations + spend) never passes the limit.

A request holds its reservation through `Budgets.held`, the one place that pairs the two: whatever the
request raises, the reservation is settled exactly once (released when the request did not settle it).

    with budgets.held(tenant, worst_case) as hold:
        ...                           # the model call; any exception releases the reservation
        hold.settle(actual_cost)
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterator

from ..errors import BudgetExceeded
from ..observability import logger
from ..table import ConditionFailed, Table, attr, open_table
from ..ttl_cache import TTLCache
from .alerts import BudgetAlerts, parse_thresholds

LIMIT_ROW = "limit"


@dataclass(frozen=True)
class Reservation:
    tenant: str
    period: str
    amount: Decimal
    committed_after: Decimal | None = None  # the tenant's committed total right after reserving


@dataclass
class Hold:
    """One request's reservation inside `Budgets.held`: settled at most once."""

    budgets: "Budgets"
    reservation: Reservation | None
    settled: bool = False

    def settle(self, actual_usd: Decimal | None) -> None:
        """Replace the reservation by the request's real cost (see Budgets.settle)."""
        if self.settled:
            raise RuntimeError("a reservation is settled once")
        # Marked before the write: a write that failed (or may have landed) is never followed by a second one,
        # which could count the same spend twice.
        self.settled = True
        self.budgets.settle(self.reservation, actual_usd)


def current_period(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m")


class Budgets:
    """`table_name`: the budgets table's name, or a Table (an InMemoryTable twin in unit tests)."""

    def __init__(self, table_name: "str | Table", dynamodb: Any | None = None, cache_ttl_s: float = 30.0,
                 alerts: "BudgetAlerts | None" = None) -> None:
        self._table = open_table(table_name, ("tenant", "period"), dynamodb)
        self._alerts = alerts
        # (limit, alert thresholds) per tenant: read on every request, changed rarely.
        self._limits: TTLCache[tuple[Decimal | None, tuple[int, ...] | None]] = TTLCache(cache_ttl_s)

    def set_limit(self, tenant: str, monthly_usd: Decimal | None, alert_thresholds: tuple[int, ...] | None = None) -> None:
        """Set (None: remove) a tenant's monthly budget, and optionally its alert thresholds in percent."""
        if monthly_usd is None:
            self._table.delete({"tenant": tenant, "period": LIMIT_ROW})
        else:
            item: dict[str, Any] = {"tenant": tenant, "period": LIMIT_ROW, "limit_usd": monthly_usd}
            if alert_thresholds:
                item["alert_thresholds"] = ",".join(str(t) for t in parse_thresholds(",".join(map(str, alert_thresholds))))
            self._table.put(item)
        self._limits.invalidate(tenant)

    def limits(self) -> dict[str, Decimal]:
        """Every tenant's monthly limit (a scan of the limit rows: one per tenant with a budget)."""
        return {item["tenant"]: item["limit_usd"] for item in self._table.scan(attr("period").eq(LIMIT_ROW))}

    def _load_limit(self, tenant: str) -> tuple[Decimal | None, tuple[int, ...] | None]:
        item = self._table.get({"tenant": tenant, "period": LIMIT_ROW}, consistent=False)
        if item is None:
            return None, None
        raw = item.get("alert_thresholds")
        return item["limit_usd"], parse_thresholds(raw) if raw else None

    def limit_for(self, tenant: str) -> Decimal | None:
        return self._limits.get_or_load(tenant, lambda: self._load_limit(tenant))[0]

    def reserve(self, tenant: str, worst_case_usd: Decimal, period: str | None = None) -> Reservation | None:
        """Reserve `worst_case_usd` of this month's budget, or raise BudgetExceeded. None: no budget set."""
        limit = self.limit_for(tenant)
        if limit is None:
            return None
        period = period or current_period()
        if worst_case_usd > limit:  # the condition below only guards items that already exist
            raise BudgetExceeded("This request's worst-case cost is larger than the tenant's monthly budget.",
                                 {"monthly_budget_usd": str(limit), "period": period, "request_worst_case_usd": str(worst_case_usd)})
        try:
            # One conditional ADD: DynamoDB serialises it per item, so concurrent reservations cannot overshoot.
            updated = self._table.update_if({"tenant": tenant, "period": period}, add={"committed_usd": worst_case_usd},
                                            condition=attr("committed_usd").not_exists() | attr("committed_usd").lte(limit - worst_case_usd))
        except ConditionFailed as exc:
            raise BudgetExceeded(
                "This tenant's monthly budget would be exceeded by this request.",
                {"monthly_budget_usd": str(limit), "period": period, "request_worst_case_usd": str(worst_case_usd)},
            ) from exc
        return Reservation(tenant, period, worst_case_usd, updated.get("committed_usd"))

    @contextmanager
    def held(self, tenant: str, worst_case_usd: Decimal) -> Iterator[Hold]:
        """Reserve `worst_case_usd` (or raise BudgetExceeded) for the block, which settles it with `hold.settle`.

        If the block ends without settling (it raised: a bug, an SDK error, a timeout), the reservation is
        released, so the tenant's budget is whole again; the exception goes on unchanged. A block that may
        fail after spending settles that spend itself before re-raising (as run_exchange does)."""
        hold = Hold(self, self.reserve(tenant, worst_case_usd))
        try:
            yield hold
        finally:
            if not hold.settled:
                self._release(hold)

    def _release(self, hold: Hold) -> None:
        try:
            hold.settle(Decimal(0))
        except Exception as exc:  # the request's own failure is the one to report; this one is logged
            reservation = hold.reservation
            logger.error("budget.release_failed", extra={"tenant": reservation.tenant if reservation else None,
                                                          "amount_usd": str(reservation.amount) if reservation else None,
                                                          "error": exc.__class__.__name__})

    def settle(self, reservation: Reservation | None, actual_usd: Decimal | None) -> None:
        """Replace the reservation by the real cost (an unpriced call keeps its reservation: we can't know)."""
        if reservation is None:
            return
        actual = reservation.amount if actual_usd is None else actual_usd
        delta = actual - reservation.amount
        committed = reservation.committed_after
        if delta != 0:
            updated = self._table.update_if({"tenant": reservation.tenant, "period": reservation.period}, add={"committed_usd": delta})
            committed = updated.get("committed_usd")
        self._alert(reservation.tenant, reservation.period, committed)

    def _alert(self, tenant: str, period: str, committed: Decimal | None) -> None:
        """Budget alerts on the settled total (after the real cost replaced the worst case)."""
        if self._alerts is None or not self._alerts.enabled or committed is None:
            return
        try:
            limit, thresholds = self._limits.get_or_load(tenant, lambda: self._load_limit(tenant))
            if limit is not None:
                self._alerts.check(tenant, period, committed, limit, thresholds)
        except Exception as exc:  # the spend is settled already: an alert (or reading its limit) never fails the request
            logger.warning("budget.alert_failed", extra={"tenant": tenant, "error": exc.__class__.__name__})

    def committed(self, tenant: str, period: str | None = None) -> Decimal:
        item = self._table.get({"tenant": tenant, "period": period or current_period()})
        return item.get("committed_usd", Decimal(0)) if item else Decimal(0)
