"""Work that arrives without an HTTP request: queued requests (standard and FIFO) and S3 uploads."""
from __future__ import annotations

from typing import Any

from chalice import Blueprint

from .. import handlers
from ..idempotency import use_lambda_context
from ..timing import CONSUMERS  # batch sizes (and the rest of each event source) are decided there

routes = Blueprint(__name__)


@routes.on_sqs_message(queue=handlers.queue_name("requests"), batch_size=CONSUMERS["requests"].batch_size, name="requests")
def requests(event: Any) -> Any:
    use_lambda_context(event.context)
    return handlers.requests(event.to_dict(), event.context)


@routes.on_sqs_message(queue=handlers.queue_name("requests_fifo"), batch_size=CONSUMERS["requests_fifo"].batch_size, name="requests_fifo")
def requests_fifo(event: Any) -> Any:
    use_lambda_context(event.context)
    return handlers.requests_fifo(event.to_dict(), event.context)


# S3 ObjectCreated -> object-events queue -> here (the bucket notification is in deploy/resources.json).
# Chalice's on_s3_event cannot be packaged as CloudFormation; through SQS we also get retries and a DLQ.
@routes.on_sqs_message(queue=handlers.queue_name("object_events"), batch_size=CONSUMERS["object_events"].batch_size, name="object_events")
def object_events(event: Any) -> Any:
    use_lambda_context(event.context)
    return handlers.object_events(event.to_dict(), event.context)
