"""Dead-letter queue operations for ops: see what failed and why, and move messages back after a fix."""
from __future__ import annotations

import json
from typing import Any

from . import aws
from .config import Settings


def source_queues(settings: Settings) -> dict[str, str]:
    return {"requests": settings.events.requests_queue, "requests-fifo": settings.events.requests_fifo_queue,
            "object-events": settings.events.object_events_queue, "job-steps": settings.jobs.steps_queue,
            "meter-spill": settings.meter.spill_queue}


def _queue(name: str) -> tuple[str, str, str, str]:
    """(source url, source arn, dlq url, dlq arn) from the source queue's redrive policy."""
    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn", "RedrivePolicy"])["Attributes"]
    dlq_arn = json.loads(attributes["RedrivePolicy"])["deadLetterTargetArn"]
    dlq_url = sqs.get_queue_url(QueueName=dlq_arn.rsplit(":", 1)[1])["QueueUrl"]
    return url, attributes["QueueArn"], dlq_url, dlq_arn


def list_dead_letters(queue_name: str, events_table: str, limit: int = 100) -> list[dict[str, Any]]:
    """Peek at the DLQ (messages stay there) and join each with the error recorded when it failed."""
    from .events import EventOutcomes

    sqs = aws.client("sqs")
    _, _, dlq_url, _ = _queue(queue_name)
    outcomes = EventOutcomes(events_table)
    seen: dict[str, dict[str, Any]] = {}
    handles = []
    while len(seen) < limit:
        batch = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=30, AttributeNames=["All"]).get("Messages", [])
        if not batch:
            break
        for message in batch:
            handles.append(message["ReceiptHandle"])
            attributes = message.get("Attributes", {})
            event_id = "sqs-" + (attributes.get("MessageDeduplicationId") or message["MessageId"])
            recorded = outcomes.get(event_id) or {}
            seen[message["MessageId"]] = {
                "message_id": message["MessageId"], "receive_count": int(attributes.get("ApproximateReceiveCount", 0)),
                "sent_at": attributes.get("SentTimestamp"), "error": recorded.get("error") or "no error recorded (see the handler's logs)",
                "reason": recorded.get("reason"), "body_preview": message["Body"][:120],
            }
    for handle in handles:  # make them visible again: listing must not hide them
        sqs.change_message_visibility(QueueUrl=dlq_url, ReceiptHandle=handle, VisibilityTimeout=0)
    return list(seen.values())


def redrive(queue_name: str) -> dict[str, Any]:
    """Move the DLQ's messages back to their queue: SQS's own message-move task where the endpoint has it,
    else (older endpoints, moto) receive, resend with the same attributes, delete."""
    from botocore.exceptions import ClientError

    sqs = aws.client("sqs")
    url, arn, dlq_url, dlq_arn = _queue(queue_name)
    try:
        task = sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=arn)
        return {"method": "start_message_move_task", "task_handle": task["TaskHandle"]}
    except (NotImplementedError, ClientError) as exc:
        if isinstance(exc, ClientError) and aws.error_code(exc) not in ("InternalFailure", "UnsupportedOperation", "InvalidAction", "500", "NotImplemented"):
            raise
    moved = 0
    fifo = url.endswith(".fifo")
    while True:
        batch = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=60, AttributeNames=["All"],
                                    MessageAttributeNames=["All"]).get("Messages", [])
        if not batch:
            return {"method": "copy", "moved": moved}
        for message in batch:
            extra: dict[str, Any] = {}
            if message.get("MessageAttributes"):
                extra["MessageAttributes"] = message["MessageAttributes"]
            if fifo:
                extra["MessageGroupId"] = message["Attributes"]["MessageGroupId"]
                extra["MessageDeduplicationId"] = message["Attributes"].get("MessageDeduplicationId") or message["MessageId"]
            sqs.send_message(QueueUrl=url, MessageBody=message["Body"], **extra)
            sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
