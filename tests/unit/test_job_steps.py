"""The workflow's steps on the in-memory twins (job store, workflow, Batch): no AWS, milliseconds.

Most of these are the races a real deployment meets: a tenant's cancel landing while job_steps submits
the GPU job or records the worker's answer, SQS redelivering a step, Batch failing a finished job.
"""
from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from chalicelib.config import get_settings
from chalicelib.jobs import protocol
from chalicelib.jobs.batch import InMemoryBatch
from chalicelib.jobs.lifecycle import JobStatus
from chalicelib.jobs.models import Job, StepMessage
from chalicelib.jobs.steps import JobSteps
from chalicelib.jobs.store import JobStore, in_memory_job_store
from chalicelib.jobs.workflow import InMemoryWorkflow
from chalicelib.meter.catalog import load_catalog

SETTINGS = get_settings()
CATALOG = load_catalog(SETTINGS.meter.price_catalog_path)


class World(SimpleNamespace):
    store: JobStore
    workflow: InMemoryWorkflow
    batch: InMemoryBatch
    metered: list[Any]
    steps: JobSteps


@pytest.fixture
def world() -> World:
    metered: list[Any] = []
    services = SimpleNamespace(settings=SETTINGS, meter=SimpleNamespace(record=metered.append), catalog=CATALOG)
    store, workflow, batch = in_memory_job_store(), InMemoryWorkflow(), InMemoryBatch()
    return World(store=store, workflow=workflow, batch=batch, metered=metered, steps=JobSteps(services, store, workflow, batch))  # type: ignore[arg-type]


def put_job(world: World, status: JobStatus = JobStatus.QUEUED, **fields: Any) -> Job:
    job = Job(job_id="job-1", tenant="acme", status=status, kind="batch_prompts", items=2, model="m", max_tokens=64,
              input_key="inputs/acme/job-1/input.jsonl", trace_id="t-1", created_at="2026-01-01T00:00:00.000+00:00",
              updated_at="2026-01-01T00:00:00.000+00:00", **fields)
    world.store.create(job)
    return job


def step(action: str, token: str = "tok-1", **fields: Any) -> StepMessage:
    return StepMessage(action=action, job_id="job-1", trace_id="t-1", task_token=token, **fields)  # type: ignore[arg-type]


def report(**fields: Any) -> dict[str, Any]:
    return {"result_uri": "s3://bucket/results/acme/job-1/output.jsonl", "items": 2, "input_tokens": 10, "output_tokens": 20,
            "wall_seconds": 30.0, "gpu_seconds": 30.0, "instance_type": "g6e.xlarge", "model": "qwen3-32b", **fields}


def test_submit_hands_the_worker_its_job_through_the_protocol_and_starts_watching(world: World) -> None:
    put_job(world)
    world.steps.run_step(step("submit_batch"))
    job = world.store.get("job-1")
    assert job is not None and job.status is JobStatus.RUNNING and job.attempts == 1 and job.task_token == "tok-1"
    handed = protocol.from_env(world.batch.jobs[job.batch_job_id]["environment"])  # type: ignore[index]
    assert (handed.job_id, handed.tenant, handed.task_token, handed.max_tokens) == ("job-1", "acme", "tok-1", 64)
    (watch, delay), = world.workflow.steps
    assert watch["action"] == "watch_batch" and watch["watch"] == 0 and delay > 0
    assert world.workflow.heartbeats == ["tok-1"] and "tok-1" not in world.workflow.answers  # the worker answers this token


def test_a_cancel_landing_during_submission_stops_the_new_batch_job(world: World) -> None:
    put_job(world)
    submit = world.batch.submit

    def submit_then_cancel(*args: Any) -> str:  # the tenant's DELETE lands while Batch accepts the job
        batch_job_id = submit(*args)
        world.store.transition("job-1", JobStatus.QUEUED, JobStatus.CANCELLED)
        return batch_job_id

    world.batch.submit = submit_then_cancel  # type: ignore[method-assign]
    world.steps.run_step(step("submit_batch"))
    assert world.batch.terminated == {"batch-1": "Cancelled by the tenant."}  # no GPU spend for a cancelled job
    assert world.store.get("job-1").status is JobStatus.CANCELLED  # type: ignore[union-attr]
    assert world.workflow.answers["tok-1"][0] == "failure" and world.workflow.answers["tok-1"][1][0] == protocol.JOB_CANCELLED
    assert not world.workflow.steps  # and no capacity watch for it


def test_a_worker_answer_racing_a_cancel_is_metered_and_answered_not_crashed(world: World) -> None:
    put_job(world, JobStatus.RUNNING, batch_job_id="b-1", task_token="tok-1")

    def meter_then_cancel(entry: Any) -> None:  # the cancel lands between reading the job and recording the result
        world.metered.append(entry)
        if world.store.get("job-1").status is JobStatus.RUNNING:  # type: ignore[union-attr]
            world.store.transition("job-1", JobStatus.RUNNING, JobStatus.CANCELLED)

    world.steps.services.meter = SimpleNamespace(record=meter_then_cancel)
    world.steps.run_step(step("record_result", token="tok-rr", result=report()))
    job = world.store.get("job-1")
    assert job is not None and job.status is JobStatus.CANCELLED and job.result_key is None
    assert [entry.kind for entry in world.metered] == ["job"]  # the GPU time was spent: it is counted, once
    assert world.workflow.answers["tok-rr"] == ("failure", (protocol.JOB_CANCELLED, "job job-1 changed during record_result"))


def test_a_redelivered_result_of_a_finished_job_answers_its_outcome_again(world: World) -> None:
    put_job(world, JobStatus.SUCCEEDED, backend="self_hosted", result_key="k")
    world.steps.run_step(step("record_result", token="tok-again", result=report()))
    assert world.workflow.answers["tok-again"] == ("success", {"status": "SUCCEEDED", "backend": "self_hosted"})
    assert not world.metered


def test_a_result_records_the_job_and_answers_succeeded(world: World) -> None:
    put_job(world, JobStatus.RUNNING, batch_job_id="b-1", task_token="tok-1")
    world.steps.run_step(step("record_result", token="tok-rr", result=report()))
    job = world.store.get("job-1")
    assert job is not None and job.status is JobStatus.SUCCEEDED and job.result_key == "results/acme/job-1/output.jsonl"
    assert job.usage == {"input_tokens": 10, "output_tokens": 20} and job.failed_items == {"count": 0, "indexes": []}
    assert world.workflow.answers["tok-rr"] == ("success", {"status": "SUCCEEDED", "backend": "self_hosted"})


def test_a_malformed_worker_report_fails_the_step_without_touching_the_job(world: World) -> None:
    put_job(world, JobStatus.RUNNING, batch_job_id="b-1", task_token="tok-1")
    world.steps.run_step(step("record_result", token="tok-rr", result={"items": "many"}))
    assert world.workflow.answers["tok-rr"][1][0] == protocol.WORKER_BAD_REPORT
    assert world.store.get("job-1").status is JobStatus.RUNNING  # type: ignore[union-attr]


def test_mark_failed_keeps_a_cancelled_job_cancelled_and_ends_the_workflow(world: World) -> None:
    put_job(world, JobStatus.CANCELLED, batch_job_id="b-1")
    world.steps.run_step(step("mark_failed", token="tok-mf", error={"Error": "States.Timeout", "Cause": "late"}))
    assert world.store.get("job-1").status is JobStatus.CANCELLED  # type: ignore[union-attr]
    assert world.workflow.answers["tok-mf"] == ("success", {"status": "FAILED"})
    assert "b-1" in world.batch.terminated


def test_mark_failed_records_the_error_on_an_active_job(world: World) -> None:
    put_job(world)
    world.steps.run_step(step("mark_failed", token="tok-mf", error={"Error": "Batch.JobFailed", "Cause": "exit 1"}))
    job = world.store.get("job-1")
    assert job is not None and job.status is JobStatus.FAILED and job.error == {"code": "Batch.JobFailed", "message": "exit 1"}


def test_the_capacity_watch_gives_up_after_the_capacity_timeout(world: World) -> None:
    put_job(world)
    world.steps.run_step(step("submit_batch"))
    job = world.store.get("job-1")
    world.batch.jobs[job.batch_job_id]["status"] = "RUNNABLE"  # type: ignore[index, union-attr]
    world.store.update("job-1", {"batch_submitted_at": time.time() - SETTINGS.jobs.capacity_timeout_s - 1})
    world.steps.run_step(StepMessage.model_validate(world.workflow.steps[0][0]))
    assert world.workflow.answers["tok-1"][1][0] == protocol.BATCH_NO_CAPACITY
    assert job.batch_job_id in world.batch.terminated  # type: ignore[union-attr]


def test_a_redelivered_watch_is_dropped(world: World) -> None:
    put_job(world)
    world.steps.run_step(step("submit_batch"))
    watch = StepMessage.model_validate(world.workflow.steps[0][0])
    world.batch.jobs["batch-1"]["status"] = "RUNNABLE"
    world.steps.run_step(watch)
    world.steps.run_step(watch)  # SQS delivered it twice: one chain of watches, not two
    assert [body["watch"] for body, _ in world.workflow.steps] == [0, 1]
    assert world.store.get("job-1").watch == 1  # type: ignore[union-attr]


def test_a_batch_failure_of_a_finished_job_is_metered_but_answers_nobody(world: World) -> None:
    put_job(world, JobStatus.CANCELLED, batch_job_id="b-1", task_token="tok-1")
    outcome = world.steps.on_batch_failure({"jobName": "crossover-job-1", "jobId": "b-1", "statusReason": "Host EC2 terminated",
                                            "attempts": []})
    assert outcome == "ignored" and not world.workflow.answers
    assert world.store.get("job-1").batch_failure_reason is None  # type: ignore[union-attr]


def test_a_batch_failure_fails_the_waiting_step_at_once(world: World) -> None:
    put_job(world, JobStatus.RUNNING, batch_job_id="b-1", task_token="tok-1")
    outcome = world.steps.on_batch_failure({"jobName": "crossover-job-1", "jobId": "b-1", "statusReason": "Host EC2 (instance i-1) terminated."})
    assert outcome == "failed" and world.workflow.answers["tok-1"][1][0] == protocol.BATCH_HOST_TERMINATED


def test_a_step_for_a_missing_job_fails_its_token(world: World) -> None:
    world.steps.run_step(step("plan_fallback", error={"Error": "States.Timeout"}))
    assert world.workflow.answers["tok-1"][1][0] == protocol.JOB_MISSING


def test_a_dead_token_is_not_an_error(world: World) -> None:
    put_job(world)
    world.workflow.stale.add("tok-1")
    world.steps.run_step(step("submit_batch"))  # redelivered after the workflow gave up: no GPU job
    assert not world.batch.jobs and world.store.get("job-1").status is JobStatus.QUEUED  # type: ignore[union-attr]


def test_a_job_routed_to_bedrock_is_planned_there_without_counting_a_fallback(world: World) -> None:
    put_job(world, route="bedrock")
    world.steps.run_step(step("plan_fallback", error={"Error": protocol.ROUTED_TO_BEDROCK, "Cause": "routing mode"}))
    kind, output = world.workflow.answers["tok-1"]
    assert kind == "success" and output["reason"] == protocol.ROUTED_TO_BEDROCK
    assert [(c["start"], c["end"]) for c in output["chunks"]] == [(0, 2)]
    job = world.store.get("job-1")
    assert job is not None and job.backend == "bedrock" and job.fallback_reason == protocol.ROUTED_TO_BEDROCK
    assert not world.batch.terminated
