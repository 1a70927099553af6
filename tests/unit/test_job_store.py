"""JobStore's contract, on the in-memory twin and on DynamoDB (moto, in process): status changes only
along the lifecycle table, and a change whose starting point moved on is refused loudly."""
from __future__ import annotations

from typing import Iterator

import pytest

from chalicelib.jobs.lifecycle import IllegalTransition, JobStatus, StaleJobState
from chalicelib.jobs.models import Job
from chalicelib.jobs.store import JobStore, in_memory_job_store


def new_job(job_id: str = "job-1", status: JobStatus = JobStatus.QUEUED) -> Job:
    return Job(job_id=job_id, tenant="acme", status=status, kind="batch_prompts", items=3, model="m", max_tokens=64,
               input_key="inputs/acme/job-1/input.jsonl", trace_id="t-1", created_at="2026-01-01T00:00:00.000+00:00",
               updated_at="2026-01-01T00:00:00.000+00:00")


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest) -> Iterator[JobStore]:
    if request.param == "memory":
        yield in_memory_job_store()
        return
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(TableName="jobs", KeySchema=[{"AttributeName": "job_id", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "job_id", "AttributeType": "S"}])
        yield JobStore("jobs", client)


def test_a_created_job_reads_back_typed(store: JobStore) -> None:
    assert store.create(new_job())
    job = store.get("job-1")
    assert job is not None and job.status is JobStatus.QUEUED and job.items == 3 and job.batch_job_id is None
    assert store.get("job-2") is None


def test_creating_the_same_job_twice_keeps_the_first(store: JobStore) -> None:
    assert store.create(new_job())
    assert not store.create(new_job().model_copy(update={"items": 9}))
    assert store.get("job-1").items == 3  # type: ignore[union-attr]


def test_a_transition_writes_the_status_and_its_fields_together(store: JobStore) -> None:
    store.create(new_job())
    store.transition("job-1", JobStatus.QUEUED, JobStatus.RUNNING, batch_job_id="b-1", attempts=1, batch_submitted_at=12.5)
    job = store.get("job-1")
    assert job is not None and (job.status, job.batch_job_id, job.attempts, job.batch_submitted_at) == (JobStatus.RUNNING, "b-1", 1, 12.5)
    assert job.updated_at > job.created_at


def test_an_illegal_transition_is_refused_before_anything_is_written(store: JobStore) -> None:
    store.create(new_job(status=JobStatus.SUCCEEDED))
    with pytest.raises(IllegalTransition):
        store.transition("job-1", JobStatus.SUCCEEDED, JobStatus.CANCELLED, error={"code": "cancelled", "message": "x"})
    assert store.get("job-1").error is None  # type: ignore[union-attr]


def test_a_transition_from_a_state_the_job_has_left_is_refused(store: JobStore) -> None:
    store.create(new_job())
    store.transition("job-1", JobStatus.QUEUED, JobStatus.CANCELLED)
    with pytest.raises(StaleJobState):  # a worker's answer read RUNNING/QUEUED before the cancel landed
        store.transition("job-1", JobStatus.QUEUED, JobStatus.SUCCEEDED, result_key="k")
    job = store.get("job-1")
    assert job is not None and job.status is JobStatus.CANCELLED and job.result_key is None


def test_a_transition_of_a_missing_job_is_refused_and_creates_nothing(store: JobStore) -> None:
    with pytest.raises(StaleJobState):
        store.transition("job-9", JobStatus.QUEUED, JobStatus.RUNNING)
    assert store.get("job-9") is None


def test_fields_of_a_final_job_are_left_alone_unless_asked(store: JobStore) -> None:
    store.create(new_job(status=JobStatus.CANCELLED))
    with pytest.raises(StaleJobState):
        store.update("job-1", {"batch_failure_reason": "late"})
    store.update("job-1", {"execution_arn": "arn:x"}, when=frozenset(JobStatus))
    job = store.get("job-1")
    assert job is not None and job.batch_failure_reason is None and job.execution_arn == "arn:x"


def test_an_expected_field_value_guards_an_update(store: JobStore) -> None:
    store.create(new_job(status=JobStatus.RUNNING))
    store.update("job-1", {"watch": 1}, expect={"watch": 0})  # absent counts as 0
    with pytest.raises(StaleJobState):  # a redelivered watch 0
        store.update("job-1", {"watch": 1}, expect={"watch": 0})
    assert store.get("job-1").watch == 1  # type: ignore[union-attr]


def test_the_status_and_unknown_fields_cannot_be_set_on_the_side(store: JobStore) -> None:
    store.create(new_job())
    with pytest.raises(ValueError):
        store.update("job-1", {"status": "SUCCEEDED"})
    with pytest.raises(ValueError):
        store.transition("job-1", JobStatus.QUEUED, JobStatus.RUNNING, batch_jobid="typo")
    assert store.get("job-1").status is JobStatus.QUEUED  # type: ignore[union-attr]
