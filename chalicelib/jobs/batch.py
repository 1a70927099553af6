"""AWS Batch as the long-job path uses it: submit the worker, look at its status and attempts,
terminate it. `AwsBatch` does it with boto3 (its attempts view is the meter's `BatchAttempts`, which
also finds each attempt's instance type and spot/on-demand); `InMemoryBatch` is its twin for unit tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import aws
from ..meter.gpu_cost import BatchAttempts
from ..meter.pricing import Capacity


class BatchJobs(Protocol):
    def submit(self, name: str, environment: dict[str, str], tags: dict[str, str]) -> str:
        """Submit the worker with this environment; the Batch job id."""
        ...

    def status(self, batch_job_id: str) -> str | None:
        """SUBMITTED..RUNNING, SUCCEEDED or FAILED; None when Batch no longer knows the job."""
        ...

    def terminate(self, batch_job_id: str, reason: str) -> None: ...

    # What the GPU meter reads (chalicelib/meter/gpu_cost.AttemptSource).
    def describe(self, batch_job_id: str) -> dict[str, Any] | None: ...

    def instance_of(self, container_instance_arn: str) -> tuple[str | None, Capacity | None]: ...


class AwsBatch(BatchAttempts):
    def __init__(self, job_queue: str, job_definition: str) -> None:
        super().__init__(aws.client)
        self._queue = job_queue
        self._definition = job_definition

    def submit(self, name: str, environment: dict[str, str], tags: dict[str, str]) -> str:
        response = aws.client("batch").submit_job(
            jobName=name, jobQueue=self._queue, jobDefinition=self._definition,
            containerOverrides={"environment": [{"name": k, "value": v} for k, v in environment.items()]}, tags=tags)
        return str(response["jobId"])

    def status(self, batch_job_id: str) -> str | None:
        described = self.describe(batch_job_id)
        return str(described["status"]) if described else None

    def terminate(self, batch_job_id: str, reason: str) -> None:
        aws.client("batch").terminate_job(jobId=batch_job_id, reason=reason[:256])


@dataclass
class InMemoryBatch:
    """The twin: submitted jobs keep the status a test gives them (SUBMITTED at first)."""

    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    terminated: dict[str, str] = field(default_factory=dict)

    def submit(self, name: str, environment: dict[str, str], tags: dict[str, str]) -> str:
        batch_job_id = f"batch-{len(self.jobs) + 1}"
        self.jobs[batch_job_id] = {"jobId": batch_job_id, "jobName": name, "status": "SUBMITTED", "environment": dict(environment),
                                   "tags": dict(tags), "attempts": []}
        return batch_job_id

    def status(self, batch_job_id: str) -> str | None:
        return self.jobs[batch_job_id]["status"] if batch_job_id in self.jobs else None

    def terminate(self, batch_job_id: str, reason: str) -> None:
        self.terminated[batch_job_id] = reason[:256]
        if batch_job_id in self.jobs and self.jobs[batch_job_id]["status"] not in ("SUCCEEDED", "FAILED"):
            self.jobs[batch_job_id]["status"] = "FAILED"

    def describe(self, batch_job_id: str) -> dict[str, Any] | None:
        return self.jobs.get(batch_job_id)

    def instance_of(self, container_instance_arn: str) -> tuple[str | None, Capacity | None]:
        return None, None
