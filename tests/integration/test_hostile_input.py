"""Hostile SQS message bodies and S3 objects (moto): a poison one fails alone, with a recorded error,
and goes to the DLQ; no exception escapes a handler, whatever the bytes."""
from __future__ import annotations

import itertools

import boto3
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from tests.hostile_json import hostile_bytes, hostile_texts
from tests.integration.support import event_outcome, sqs_event

EVENTS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_ids = itertools.count()
bodies = st.one_of(hostile_texts, hostile_bytes.map(lambda data: data.decode("utf-8", errors="replace")))


@EVENTS
@given(st.lists(bodies, min_size=1, max_size=4))
def test_poison_request_messages_fail_alone_with_a_recorded_error(services, texts):  # noqa: F811
    from chalicelib import handlers

    messages = [(f"req-{next(_ids)}", text) for text in texts]
    response = handlers.requests(sqs_event(messages))  # an escaping exception fails the test
    failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
    assert failed == {message_id for message_id, _ in messages}
    for message_id, _ in messages:
        outcome = event_outcome(services, f"sqs-{message_id}")
        assert outcome["status"] == "failed" and outcome["error"], outcome


@EVENTS
@given(st.lists(bodies, min_size=1, max_size=4))
def test_poison_s3_notifications_fail_alone_with_a_recorded_error(services, texts):  # noqa: F811
    from chalicelib import handlers

    messages = [(f"s3n-{next(_ids)}", text) for text in texts]
    response = handlers.object_events(sqs_event(messages))
    failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
    for message_id, _ in messages:
        outcome = event_outcome(services, f"sqs-{message_id}")
        if message_id in failed:
            assert outcome["status"] == "failed" and outcome["reason"] == "invalid_notification" and outcome["error"]
        else:  # only a JSON object without Records (like s3:TestEvent) is acknowledged, doing nothing
            assert outcome is None


@EVENTS
@given(st.lists(bodies, min_size=1, max_size=3))
def test_poison_step_and_spill_messages_fail_alone(services, texts):  # noqa: F811
    from chalicelib import handlers

    messages = [(f"int-{next(_ids)}", text) for text in texts]
    for handler in (handlers.job_steps, handlers.meter_spill):
        response = handler(sqs_event(messages))
        assert {failure["itemIdentifier"] for failure in response["batchItemFailures"]} == {message_id for message_id, _ in messages}


def is_valid_invoke(data):
    from chalicelib import safe_json
    from chalicelib.api_schemas import InvokeRequest

    try:
        InvokeRequest.model_validate(safe_json.loads_object(data))
    except Exception:
        return False
    return True


@EVENTS
@given(hostile_bytes, st.sampled_from(["invoke", "jobs"]))
@example(b'{"prompt": "hi", "max_tokens": 1' + b"0" * 4290 + b"}", "jobs")  # under the digit limit: valid, a job
@example(b'{"prompt": "hi", "max_tokens": 1' + b"0" * 5000 + b"}", "jobs")  # over it: rejected
def test_hostile_s3_objects_are_rejected_with_a_reason_never_raised(services, data, folder):  # noqa: F811
    from chalicelib.events import EventProcessor

    assume(folder == "jobs" or not is_valid_invoke(data))  # a real question would go to Bedrock: not this test's concern
    key = f"incoming/dev/{folder}/fuzz-{next(_ids)}.json"
    bucket = services.settings.storage.data_bucket
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=data)
    status = EventProcessor(services).object_created(bucket, key, None, "etag", "Root=1-00000000-000000000000000000000000")
    [outcome] = boto3.client("dynamodb").scan(TableName=services.settings.events.table, FilterExpression="#s = :s",
                                              ExpressionAttributeNames={"#s": "source"},
                                              ExpressionAttributeValues={":s": {"S": f"s3://{bucket}/{key}"}})["Items"]
    assert outcome["status"]["S"] == status
    if status == "accepted":  # hostile-looking but valid JSONL with prompts (e.g. a 4,291-digit number beside one): a job
        assert folder == "jobs" and outcome["job_id"]["S"]
    else:
        assert status == "rejected" and outcome["reason"]["S"] and outcome["error"]["S"]


def test_a_poison_request_message_reaches_the_dlq_with_its_recorded_error(services):  # noqa: F811
    """The end of the road for a poison body: redelivered, dead-lettered, listed with why."""
    import json
    import time

    from chalicelib import handlers
    from chalicelib.dlq import list_dead_letters
    from devstack.event_pump import EventPump

    sqs = boto3.client("sqs")
    url = sqs.get_queue_url(QueueName=services.settings.events.requests_queue)["QueueUrl"]
    policy = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"])
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": json.dumps({**policy, "maxReceiveCount": "1"})})
    sqs.send_message(QueueUrl=url, MessageBody='{"type": "invoke", "tenant": "dev", "request": {"max_tokens": 1' + "0" * 5000 + "}}")
    pump = EventPump({services.settings.events.requests_queue: handlers.requests})
    deadline, dead = time.monotonic() + 15, []
    while time.monotonic() < deadline and not dead:
        pump.poll_once()
        time.sleep(1.1)
        dead = list_dead_letters(services.settings.events.requests_queue, services.settings.events.table)
    assert len(dead) == 1 and dead[0]["reason"] == "invalid_message" and "too many digits" in dead[0]["error"]
