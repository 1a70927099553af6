"""Cost report operations at the edges: read aggregates, decide with hysteresis, publish to S3."""
from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any, Callable

from .. import storage
from ..observability import logger, metrics
from .budgets import Budgets
from .decisions import DecisionStore
from .ledger import Ledger
from .recommendation import Assessment, next_state
from .render import render_html, render_json
from .report import build_report

DAYS_PER_READ = 31  # days whose aggregate partitions are queried together (Ledger.daily_aggregates)


def budgets_snapshot(budgets: Budgets | None, today: date) -> tuple[dict[str, Decimal], dict[str, Decimal]] | None:
    """(limits, month-to-date committed spend) for every tenant with a budget; None without a budgets table."""
    if budgets is None:
        return None
    limits = budgets.limits()
    period = today.strftime("%Y-%m")
    return limits, {tenant: budgets.committed(tenant, period) for tenant in limits}


def report_for(ledger: Ledger, decisions: DecisionStore, catalog: Any, days: int, ops_ready: bool,
               today: date | None = None, progress: Callable[[str], None] | None = None,
               budgets: Budgets | None = None) -> dict[str, Any]:
    def read(window: list[str]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for start in range(0, len(window), DAYS_PER_READ):  # a batch of days read concurrently, then progress
            days_read = window[start:start + DAYS_PER_READ]
            rows.extend(ledger.daily_aggregates(days_read))
            if progress:
                progress(f"read {start + len(days_read)}/{len(window)} days ({len(rows)} aggregate rows)")
        return rows

    state = decisions.latest()
    today = today or datetime.now(timezone.utc).date()
    return build_report(read, days, today, catalog, ops_ready, state.to_dict(), budgets_snapshot(budgets, today))


def publish_daily_report(ledger: Ledger, decisions: DecisionStore, catalog: Any, ops_ready: bool, bucket: str,
                         days: int, days_to_confirm: int, kms_key_id: str = "", today: date | None = None,
                         budgets: Budgets | None = None) -> dict[str, Any]:
    """The scheduled job: report, advance the recommendation (hysteresis), store the decision, write S3."""
    today = today or datetime.now(timezone.utc).date()
    report = report_for(ledger, decisions, catalog, days, ops_ready, today, budgets=budgets)
    breakeven = report["breakeven"]
    assessment = Assessment(breakeven["recommendation"], tuple(breakeven["reasons"]), breakeven["numbers"])
    state = next_state(decisions.latest(), assessment, days_to_confirm)
    decisions.save("global", today.isoformat(), state, assessment, {"catalog_version": catalog.version, "days": days, "ops_ready": ops_ready})
    report["recommendation"].update({"current": state.current, "pending": state.pending, "pending_days": state.pending_days})
    prefix = f"reports/{today.isoformat()}/"
    # Operator data across tenants: no tenant context (tenant=None).
    storage.put_text(bucket, prefix + "cost-report.json", render_json(report), kms_key_id, None, "application/json")
    storage.put_text(bucket, prefix + "cost-report.html", render_html(report), kms_key_id, None, "text/html; charset=utf-8")
    metrics.add_metric(name="ProjectedMonthlyCostUSD", unit="None", value=float(report["projected_month"]["cost_usd"]))
    metrics.add_metric(name="ProjectedMonthlyTokens", unit="Count", value=float(report["projected_month"]["tokens"]))
    metrics.add_metric(name="UnpricedModels", unit="Count", value=len(report["unpriced_models"]))
    logger.info("cost.report_published", extra={"day": today.isoformat(), "recommendation": state.current, "pending": state.pending,
                                                 "bucket": bucket, "prefix": prefix})
    return {"bucket": bucket, "prefix": prefix, "recommendation": state.current}
