"""Helpers shared by the integration tests (fixtures live in conftest.py): job and event plumbing, fake model servers."""
from __future__ import annotations

import json
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3

from tests.conftest import DEV_KEY, post_json, record_sent


def job_record(job_id: str) -> dict[str, Any] | None:
    """The stored job as plain data (the typed chalicelib.jobs.models.Job, as JSON)."""
    from chalicelib.jobs.store import JobStore
    from chalicelib.services import get_services

    job = JobStore(get_services().settings.jobs.table).get(job_id)
    return job.model_dump(mode="json") if job else None


def batch_jobs_for(job_id: str) -> list[str]:
    from chalicelib.services import get_services

    batch, queue = boto3.client("batch"), get_services().settings.jobs.batch_job_queue
    ids = set()
    for status in ("SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"):
        ids.update(j["jobId"] for j in batch.list_jobs(jobQueue=queue, jobStatus=status)["jobSummaryList"] if j["jobName"] == f"crossover-{job_id}")
    return sorted(ids)


def drive(pump, condition, timeout_s: float = 20.0, between=None):
    """Pump the job-steps queue until `condition()` holds (moto's executor runs in its own thread)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pump.poll_once()
        if between:
            between()
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def execution_status(job_id: str) -> str:
    from chalicelib.jobs.service import job_service
    from chalicelib.services import get_services

    arn = job_service(get_services()).execution_arn(job_id)
    return boto3.client("stepfunctions").describe_execution(executionArn=arn)["status"]


def result_rows(record):
    from chalicelib.services import get_services

    body = boto3.client("s3").get_object(Bucket=get_services().settings.storage.data_bucket, Key=record["result_key"])["Body"].read()
    return [json.loads(line) for line in body.decode().splitlines()]


def submit(client, prompts, key=DEV_KEY, **extra):
    response = post_json(client, "/v1/jobs", {"input": {"prompts": prompts}, **extra}, key=key)
    assert response.status_code == 202, response.body
    return response.json_body["job_id"]


def worker_for(job_id: str, model_url: str, **overrides):
    """The real worker, in a thread (in-process moto cannot be reached from a subprocess)."""
    from worker.worker import Config, Worker

    record = job_record(job_id)
    job = boto3.client("batch").describe_jobs(jobs=[record["batch_job_id"]])["jobs"][0]
    env = {e["name"]: e["value"] for e in job["container"]["environment"]}
    env.update({"MODEL_ENDPOINT": model_url, "MODEL_NAME": "local.smollm2-135m-instruct", "INSTANCE_TYPE": "ml.g7e.2xlarge",
                "GPU_COUNT": "1", "CONCURRENCY": "2", "HEARTBEAT_INTERVAL_S": "0.5", **overrides})
    return Worker(Config.from_env(env))


def queue_url(name):
    return boto3.client("sqs").get_queue_url(QueueName=name)["QueueUrl"]


def sqs_event(messages, queue_arn="arn:aws:sqs:us-east-1:123456789012:q", fifo_group=None):
    from devstack.event_pump import lambda_sqs_event

    return lambda_sqs_event([{
        "MessageId": message_id, "ReceiptHandle": f"rh-{message_id}", "Body": body,
        "Attributes": {"ApproximateReceiveCount": "1", **({"MessageGroupId": fifo_group(message_id, body), "MessageDeduplicationId": message_id} if fifo_group else {})},
    } for message_id, body in messages], queue_arn)


def request(tenant, prompt, reply_to=None, kind="invoke"):
    body = {"type": kind, "tenant": tenant, "request": {"prompt": prompt} if kind == "invoke" else {"input": {"prompts": [prompt]}}}
    if reply_to:
        body["reply_to"] = reply_to
    record_sent(body)
    return json.dumps(body)


def event_outcome(services, event_id):
    from chalicelib.events import EventOutcomes

    return EventOutcomes(services.settings.events.table).get(event_id)


def capture(calls: list[dict[str, Any]]) -> Any:
    import copy

    # A copy: the loop keeps appending to the message list it sent.
    return lambda params, **_: calls.append(copy.deepcopy(params))


def totals(services, day):
    rows = list(services.ledger.daily_aggregates([day]))
    return {key: sum(Decimal(row[key]) for row in rows) for key in ("calls", "input_tokens", "output_tokens", "cost_usd", "unpriced_calls")}


class FakeOpenAI:
    def __init__(self):
        self.fail = False
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                if outer.fail:
                    self.send_response(503)
                    self.end_headers()
                    return
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": "from the GPU"}, "finish_reason": "stop"}],
                                      "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"


class FlakyModel:
    """An OpenAI-compatible server answering each prompt's first `failures[prompt]` requests with `status`."""

    def __init__(self, failures: dict[str, int], status: int = 429):
        self.seen: dict[str, int] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                prompt = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["messages"][-1]["content"]
                outer.seen[prompt] = outer.seen.get(prompt, 0) + 1
                if outer.seen[prompt] <= failures.get(prompt, 0):
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                payload = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                                      "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


class AtomicCalls:
    """A DynamoDB client whose individual calls are atomic, as in DynamoDB itself.

    moto's in-process backend is not thread-safe (concurrent transactions can corrupt its state),
    so each API call holds one lock. Threads still interleave between calls, which is where a
    check-then-act bug in our code would show.
    """

    def __init__(self, client):
        self._client = client
        self._lock = threading.Lock()

    def __getattr__(self, name):
        method = getattr(self._client, name)
        if not callable(method) or name in ("get_paginator", "meta"):
            return method

        def call(*args, **kwargs):
            with self._lock:
                return method(*args, **kwargs)

        return call
