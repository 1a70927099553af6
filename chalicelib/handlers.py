"""Event handlers (schedules, queues, buckets): chalicelib/routes/ wires them, they call the services."""
from __future__ import annotations

from typing import Any, Callable

from .config import Settings, get_settings
from .observability import logger, metrics
from .services import get_services
from .timing import lambda_deadline


def daily_cost_report() -> dict[str, Any]:
    from .meter.service import publish_daily_report

    services = get_services()
    settings = services.settings
    try:
        return publish_daily_report(services.ledger, services.decisions, services.catalog, settings.meter.ops_ready,
                                    settings.meter.reports_bucket, settings.meter.report_days, services.catalog.recommendation.days_to_confirm,
                                    settings.storage.kms_key_id, budgets=services.budgets)
    finally:
        metrics.flush_metrics()


def _partial_batch(raw_event: dict[str, Any], queue: str, handle: Any, processor: Any = None) -> dict[str, Any]:
    """Run `handle` on each SQS record with Powertools' partial batch response: a failing record fails
    alone (logged by `_logged`), the rest are acknowledged. Standard queues unless a processor is given."""
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

    processor = processor or BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    try:
        return process_partial_response(event=raw_event, record_handler=_logged(handle, queue), processor=processor)
    finally:
        metrics.flush_metrics()


def job_steps(raw_event: dict[str, Any]) -> dict[str, Any]:
    """SQS job-steps queue: each record is one workflow step; a failing record fails alone (partial batch)."""
    from .jobs.models import StepMessage
    from .jobs.service import job_service

    jobs = job_service(get_services())
    return _partial_batch(raw_event, "job_steps", lambda record: jobs.run_step(StepMessage.model_validate_json(record.body)))


def batch_job_failed(detail: dict[str, Any]) -> str:
    """EventBridge 'Batch Job State Change' FAILED: fail the waiting workflow step at once."""
    from .jobs.service import job_service

    return job_service(get_services()).on_batch_failure(detail)


def _trace_id(record: Any) -> str:
    from .observability import new_trace_id, trace_id_from

    attributes = record.raw_event.get("messageAttributes") or {}
    given = attributes.get("trace_id") or attributes.get("X-Amzn-Trace-Id") or {}
    header = given.get("stringValue") or record.attributes.aws_trace_header or ""
    return trace_id_from({"x-amzn-trace-id": header}) if header else new_trace_id()


def object_events(raw_event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """S3 ObjectCreated notifications delivered through the object-events queue."""
    from .events import EventProcessor

    processor = EventProcessor(get_services(), lambda_deadline(context))
    return _partial_batch(raw_event, "object_events", lambda record: processor.s3_notification(record.body, record.message_id, _trace_id(record)))


def meter_spill(raw_event: dict[str, Any]) -> dict[str, Any]:
    """Spilled ledger entries back into the ledger; one DynamoDB still refuses stays on the queue alone."""
    from .meter.spill import replay

    ledger = get_services().ledger
    return _partial_batch(raw_event, "meter_spill", lambda record: replay(ledger, record.body))


def requests(raw_event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The standard request queue: records are independent; a poison one fails alone."""
    return _requests(raw_event, context=context)


def requests_fifo(raw_event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The FIFO request queue (message group per tenant): after a failure, the rest of that tenant's
    messages in the batch are returned unprocessed, so their order holds; other tenants go on."""
    from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor

    return _requests(raw_event, SqsFifoPartialProcessor(skip_group_on_error=True), context)


def _requests(raw_event: dict[str, Any], processor: Any = None, context: Any = None) -> dict[str, Any]:
    from .events import EventProcessor

    events = EventProcessor(get_services(), lambda_deadline(context))

    def handle(record: Any) -> None:
        events.request_message(record.body, record.message_id, record.attributes.message_deduplication_id, _trace_id(record))

    return _partial_batch(raw_event, "requests", handle, processor)


def _logged(handle: Any, queue: str) -> Any:
    """The record fails alone and is redelivered (then dead-lettered): say which and why, not what it held."""
    from pydantic import ValidationError

    from .errors import CrossoverError

    def wrapper(record: Any) -> None:
        try:
            handle(record)
        except ValidationError as exc:
            # Its message quotes the offending input, which may be a prompt: log where and what kind only.
            logger.error(f"{queue}.record_failed", extra={"message_id": record.message_id, "error": "ValidationError",
                                                          "problems": [{"loc": list(e["loc"]), "type": e["type"]} for e in exc.errors()[:10]]})
            raise
        except CrossoverError as exc:  # ours: the message names the problem, never the content
            logger.error(f"{queue}.record_failed", extra={"message_id": record.message_id, "error": exc.code, "reason": exc.message})
            raise
        except Exception:
            logger.exception(f"{queue}.record_failed", extra={"message_id": record.message_id})
            raise

    return wrapper


# Consumer (chalicelib/timing.CONSUMERS, the function's name) -> the setting naming its queue.
QUEUES: dict[str, Callable[[Settings], str]] = {
    "job_steps": lambda settings: settings.jobs.steps_queue,
    "requests": lambda settings: settings.events.requests_queue,
    "requests_fifo": lambda settings: settings.events.requests_fifo_queue,
    "object_events": lambda settings: settings.events.object_events_queue,
    "meter_spill": lambda settings: settings.meter.spill_queue,
}


def queue_name(consumer: str) -> str:
    return QUEUES[consumer](get_settings())


def sqs_handlers() -> dict[str, Any]:
    """Queue name -> handler, for the local event pump (in AWS, the event source mappings)."""
    handlers = {"job_steps": job_steps, "requests": requests, "requests_fifo": requests_fifo, "object_events": object_events,
                "meter_spill": meter_spill}
    return {queue_name(consumer): handle for consumer, handle in handlers.items()}
