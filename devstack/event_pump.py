"""Local stand-in for Lambda's SQS event source mapping (chalice local runs no event sources).

Polls queues on the local AWS endpoint and hands batches to the same handler functions Lambda
would call, in Lambda's SQS event shape; honours partial batch failures (only the failed records
stay on the queue, to be redelivered and, past maxReceiveCount, moved to the DLQ by SQS's redrive).
Development only.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import boto3

SqsHandler = Callable[[dict[str, Any]], dict[str, Any] | None]


def lambda_sqs_event(messages: list[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    return {"Records": [{
        "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
        "attributes": m.get("Attributes", {}), "messageAttributes": {
            name: {"stringValue": value.get("StringValue"), "dataType": value.get("DataType", "String")}
            for name, value in m.get("MessageAttributes", {}).items()},
        "md5OfBody": m.get("MD5OfBody", ""), "eventSource": "aws:sqs", "eventSourceARN": queue_arn, "awsRegion": queue_arn.split(":")[3],
    } for m in messages]}


class EventPump:
    def __init__(self, handlers: dict[str, SqsHandler], batch_size: int = 10) -> None:
        self._sqs = boto3.client("sqs")
        self._handlers = handlers
        self._batch_size = batch_size
        self._queues: dict[str, tuple[str, str]] = {}

    def _queue(self, name: str) -> tuple[str, str]:
        if name not in self._queues:
            url = self._sqs.get_queue_url(QueueName=name)["QueueUrl"]
            arn = self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            self._queues[name] = (url, arn)
        return self._queues[name]

    def poll_once(self, wait_s: int = 0) -> int:
        """One receive per queue; returns how many messages were handed to handlers."""
        handled = 0
        for name, handler in self._handlers.items():
            url, arn = self._queue(name)
            messages = self._sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=self._batch_size, WaitTimeSeconds=wait_s,
                                                 AttributeNames=["All"], MessageAttributeNames=["All"]).get("Messages", [])
            if not messages:
                continue
            response = handler(lambda_sqs_event(messages, arn)) or {}
            failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
            for message in messages:
                if message["MessageId"] not in failed:
                    self._sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                else:
                    # Lambda leaves a failed record invisible until its visibility timeout; locally retry soon.
                    self._sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=1)
            handled += len(messages)
        return handled

    def run(self, stop: threading.Event, idle_s: float = 0.05) -> None:
        # Short polls across all queues (a long poll per queue would add up: 4 queues x 1 s per round).
        while not stop.is_set():
            try:
                if not self.poll_once(0):
                    stop.wait(idle_s)
            except Exception as exc:  # keep pumping; the handler logged its own failure
                print(f"event-pump: {exc.__class__.__name__}: {exc}", flush=True)
                stop.wait(1)
