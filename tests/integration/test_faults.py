"""Fault injection with the real flows: AWS answers with the errors it sends under stress, botocore's
retry logic runs on them, and the app must lose nothing and count nothing twice."""
from __future__ import annotations

import json
from decimal import Decimal

import boto3
import pytest

from tests.conftest import converse_text, ledger_items, post_json
from devstack.faults import THROTTLED, fault
from tests.integration.support import sqs_event, totals


@pytest.fixture
def few_retries(monkeypatch):
    """The SDK's own setting, so botocore gives up after 3 attempts (DynamoDB's default is 10, ~25 s of backoff).
    Listed first in each test, so the app's clients are built after it."""
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")


def app_client(service):
    from chalicelib import aws

    return aws.client(service)


def spilled_messages():
    from chalicelib.services import get_services

    sqs = boto3.client("sqs")
    url = sqs.get_queue_url(QueueName=get_services().settings.meter.spill_queue)["QueueUrl"]
    return sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])


def today_totals():
    from datetime import datetime, timezone

    from chalicelib.services import get_services

    return totals(get_services(), datetime.now(timezone.utc).date().isoformat())


def printed_counts(capsys):
    """The CLI's summary line (the app's JSON logs share stdout)."""
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith('{"written"')]
    return json.loads(line)


def test_ledger_throttling_is_retried_by_the_sdk_and_written_once(few_retries, client, bedrock):
    bedrock.add_response("converse", converse_text("answered", 12, 3))
    with fault(app_client("dynamodb"), "TransactWriteItems", *THROTTLED, times=2) as throttle:
        response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert response.status_code == 200
    assert throttle.attempts == 3  # two throttled, the third written
    assert len(ledger_items()) == 1 and today_totals()["calls"] == 1
    assert spilled_messages() == []


def test_ledger_refusing_every_attempt_spills_the_entry_and_the_replay_writes_it_once(few_retries, client, bedrock, captured_logs):
    from chalicelib import handlers

    bedrock.add_response("converse", converse_text("answered", 12, 3))
    with fault(app_client("dynamodb"), "TransactWriteItems", *THROTTLED) as throttle:
        response = post_json(client, "/v1/invoke", {"prompt": "hello"})
        assert response.status_code == 200 and response.json_body["output"] == "answered"  # the paid answer is not lost
        assert throttle.attempts == 3 and ledger_items() == []
        [message] = spilled_messages()
        # While DynamoDB still refuses, the replay fails alone and the message stays queued.
        event = sqs_event([(message["MessageId"], message["Body"])])
        assert handlers.meter_spill(event) == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
    logs = [json.loads(line) for line in captured_logs.getvalue().splitlines() if line.startswith("{")]
    spilled = [line for line in logs if line["message"] == "meter.spilled"]
    assert spilled and spilled[0]["request_id"] == response.json_body["request_id"]

    assert handlers.meter_spill(event) == {"batchItemFailures": []}  # DynamoDB is back
    assert handlers.meter_spill(event) == {"batchItemFailures": []}  # redelivered: not counted again
    [row] = ledger_items()
    assert row["request_id"]["S"] == response.json_body["request_id"] and row["input_tokens"]["N"] == "12"
    day = today_totals()
    assert day["calls"] == 1 and day["input_tokens"] == 12 and day["cost_usd"] == Decimal(str(response.json_body["cost_usd"]))


def test_ledger_and_spill_queue_both_down_log_the_entry_and_the_cli_replays_it(few_retries, client, bedrock, captured_logs, tmp_path, capsys):
    from chalicelib.cli import main

    bedrock.add_response("converse", converse_text("answered", 7, 2))
    with fault(app_client("dynamodb"), "TransactWriteItems", *THROTTLED), fault(app_client("sqs"), "SendMessage", 500, "InternalError") as sqs_down:
        response = post_json(client, "/v1/invoke", {"prompt": "hello"})
    assert response.status_code == 200 and sqs_down.attempts == 3
    assert ledger_items() == [] and spilled_messages() == []
    export = tmp_path / "export.jsonl"
    export.write_text(captured_logs.getvalue())
    assert main(["meter", "replay", "--log", str(export)]) == 0
    assert printed_counts(capsys) == {"written": 1, "duplicate": 0}
    assert main(["meter", "replay", "--log", str(export)]) == 0  # replaying twice is harmless
    assert printed_counts(capsys) == {"written": 0, "duplicate": 1}
    assert today_totals()["calls"] == 1 and ledger_items()[0]["input_tokens"]["N"] == "7"


def test_job_input_write_failure_is_a_503_and_a_retry_with_the_key_creates_one_job(few_retries, client):
    from chalicelib.services import get_services

    body = {"input": {"prompts": ["one", "two"]}}
    with fault(app_client("s3"), "PutObject", 503, "SlowDown") as slow:
        refused = post_json(client, "/v1/jobs", body, **{"Idempotency-Key": "upload-1"})
    assert slow.attempts == 3
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "2"
    assert refused.json_body["error"]["code"] == "service_unavailable" and set(refused.json_body["error"]) == {"code", "message", "details"}
    jobs_table = get_services().settings.jobs.table
    assert boto3.client("dynamodb").scan(TableName=jobs_table)["Items"] == []  # nothing half-made

    accepted = post_json(client, "/v1/jobs", body, **{"Idempotency-Key": "upload-1"})
    assert accepted.status_code == 202, accepted.body
    assert len(boto3.client("dynamodb").scan(TableName=jobs_table)["Items"]) == 1


def test_workflow_start_failure_is_finished_by_the_retry(few_retries, client):
    from chalicelib.services import get_services

    body = {"input": {"prompts": ["one"]}}
    with fault(app_client("stepfunctions"), "StartExecution", 500, "ServiceUnavailable"):
        refused = post_json(client, "/v1/jobs", body, **{"Idempotency-Key": "start-1"})
    assert refused.status_code == 503
    accepted = post_json(client, "/v1/jobs", body, **{"Idempotency-Key": "start-1"})
    assert accepted.status_code == 202, accepted.body
    sfn = boto3.client("stepfunctions")
    machine = get_services().settings.jobs.state_machine_arn or sfn.list_state_machines()["stateMachines"][0]["stateMachineArn"]
    executions = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [execution["name"] for execution in executions] == [accepted.json_body["job_id"]]


def test_job_status_during_a_dynamodb_outage_is_a_503_not_a_500(few_retries, client):
    submitted = post_json(client, "/v1/jobs", {"input": {"prompts": ["one"]}})
    with fault(app_client("dynamodb"), "GetItem", *THROTTLED):
        status = client.http.get(f"/v1/jobs/{submitted.json_body['job_id']}", headers={"X-Api-Key": "dev-key"})
    assert status.status_code == 503 and json.loads(status.body)["error"]["code"] == "service_unavailable"


def test_worker_result_write_failure_resumes_from_its_checkpoint(monkeypatch, jobs_client, pump):  # noqa: F811
    """S3 refuses the worker's result (three attempts), the checkpoint gets through: the worker reports
    Worker.Transient at once, the workflow runs the job again and the new worker recomputes nothing."""
    from tests.integration.support import FakeOpenAI, drive, job_record, result_rows, submit, worker_for

    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "3")
    model = FakeOpenAI()
    job_id = submit(jobs_client, ["one", "two", "three"])
    drive(pump, lambda: (job_record(job_id) or {}).get("batch_job_id"))
    first_batch_job = job_record(job_id)["batch_job_id"]
    worker = worker_for(job_id, model.url)
    with fault(worker.s3, "PutObject", 503, "SlowDown", times=3) as slow:
        assert worker.run() == 1
    assert slow.attempts == 4 and len(model.requests) == 3  # the result's 3 attempts, then the checkpoint
    drive(pump, lambda: job_record(job_id)["batch_job_id"] != first_batch_job, timeout_s=15)
    assert worker_for(job_id, model.url).run() == 0
    assert len(model.requests) == 3  # resumed from the checkpoint: nothing computed twice
    drive(pump, lambda: job_record(job_id)["status"] == "SUCCEEDED")
    assert [row["index"] for row in result_rows(job_record(job_id))] == [0, 1, 2]
    model.server.shutdown()
