"""Event handlers (schedules, queues, buckets): app.py wires them, they call the services."""
from __future__ import annotations

from typing import Any

from .observability import logger, metrics
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


def job_steps(raw_event: dict[str, Any]) -> dict[str, Any]:
    """SQS job-steps queue: each record is one workflow step; a failing record fails alone (partial batch)."""
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from .jobs.models import StepMessage
    from .jobs.service import job_service

    jobs = job_service(get_services())

    def handle(record: SQSRecord) -> None:
        try:
            jobs.run_step(StepMessage.model_validate_json(record.body))
        except Exception:
            # The record fails alone and is redelivered (then dead-lettered); say which and why, not what it held.
            logger.exception("job_steps.record_failed", extra={"message_id": record.message_id})
            raise

    try:
        return process_partial_response(event=raw_event, record_handler=handle, processor=BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False))
    finally:
        metrics.flush_metrics()


def batch_job_failed(detail: dict[str, Any]) -> str:
    """EventBridge 'Batch Job State Change' FAILED: fail the waiting workflow step at once."""
    from .jobs.service import job_service

    return job_service(get_services()).on_batch_failure(detail)


def sqs_handlers() -> dict[str, Any]:
    """Queue name -> handler, for the local event pump (in AWS, the event source mappings)."""
    settings = get_services().settings
    return {settings.job_steps_queue: job_steps}
