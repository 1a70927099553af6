"""Long jobs as the API sees them: submit, status, cancel; and `job_service`, which wires the job
store, the workflow (Step Functions) and Batch for the handlers.

The workflow's steps live in chalicelib/jobs/steps.py, a job's state transitions in
chalicelib/jobs/lifecycle.py, the task-token protocol shared with the worker in chalicelib/jobs/protocol.py.
Errors raised here are CrossoverErrors (NotFound, ValidationFailed, ...); chalicelib/errors.py maps
them to HTTP answers at the edge.
"""
from __future__ import annotations

import hashlib
import uuid
from typing import Any

from .. import storage
from ..auth import Tenant
from ..errors import NotFound
from ..observability import logger, metrics
from ..services import Services
from .context import JobContext
from .batch import AwsBatch
from .inputs import prompts_from_uri, read_prompts
from .lifecycle import JobStatus, StaleJobState, is_terminal
from .models import Job, JobAccepted, JobRequest, JobView, StepMessage
from .steps import JobSteps
from .store import JobStore, now_iso
from .workflow import StepFunctionsWorkflow

__all__ = ["JobService", "job_id_for", "job_service", "read_prompts"]


def job_id_for(tenant: str, idempotency_key: str | None) -> str:
    """Stable for an idempotency key (a resubmission maps to the same job and execution), random otherwise."""
    if idempotency_key:
        return "job-" + hashlib.sha256(f"{tenant}#{idempotency_key}".encode()).hexdigest()[:24]
    return "job-" + uuid.uuid4().hex[:24]


class JobService(JobContext):
    @property
    def steps(self) -> JobSteps:
        return JobSteps(self.services, self.store, self.workflow, self.batch)

    def submit(self, tenant: Tenant, request: JobRequest, trace_id: str, idempotency_key: str | None = None,
               source: str = "api") -> dict[str, Any]:
        settings = self.settings
        prompts = request.input.prompts if request.input else prompts_from_uri(tenant.tenant, request.input_uri or "", settings.storage.data_bucket,
                                                                               settings.jobs.max_input_bytes)
        for index, prompt in enumerate(prompts):
            self.services.screening.require_allowed(prompt, tenant.tenant, trace_id, f"jobs.item[{index}]")
        if request.system:
            self.services.screening.require_allowed(request.system, tenant.tenant, trace_id, "jobs.system", role="system")
        job_id = job_id_for(tenant.tenant, idempotency_key)
        existing = self.store.get(job_id)
        if existing:
            if existing.status == JobStatus.QUEUED and not existing.execution_arn:
                # An earlier attempt stored the job, then failed to start its workflow (Step Functions
                # unavailable): start it now. The execution is named after the job, so this is idempotent.
                self._start_execution(existing)
            return JobAccepted(job_id=job_id, status=existing.status).model_dump()
        input_key = storage.tenant_key("inputs", tenant.tenant, job_id, "input.jsonl")
        storage.put_text(settings.storage.data_bucket, input_key, storage.jsonl([{"prompt": p} for p in prompts]), settings.storage.kms_key_id, tenant.tenant)
        route = self.services.router.route_job(tenant.tenant, trace_id)  # bedrock mode: straight to the Bedrock path
        created = now_iso()
        job = Job(job_id=job_id, tenant=tenant.tenant, status=JobStatus.QUEUED, kind=request.kind, items=len(prompts),
                  model=request.model or settings.models.default_model, system=request.system or "", max_tokens=request.max_tokens,
                  fallback=request.fallback, route=route.backend, input_key=input_key, trace_id=trace_id, source=source,
                  created_at=created, updated_at=created)
        if not self.store.create(job):  # a concurrent duplicate won the race
            winner = self.store.get(job_id)
            return JobAccepted(job_id=job_id, status=winner.status if winner else JobStatus.QUEUED).model_dump()
        self._start_execution(job)
        logger.info("job.submitted", extra={"trace_id": trace_id, "tenant": tenant.tenant, "job_id": job_id, "items": len(prompts),
                                            "kind": request.kind, "source": source})
        metrics.add_metric(name="JobsSubmitted", unit="Count", value=1)
        return JobAccepted(job_id=job_id, status=JobStatus.QUEUED).model_dump()

    def _start_execution(self, job: Job) -> None:
        arn = self.workflow.start(job.job_id, {"job_id": job.job_id, "trace_id": job.trace_id, "fallback": job.fallback,
                                               "route": job.route, "resumes": {"count": 0}}, job.trace_id)
        # A fact about the job whatever its state (a cancel may have raced this start): recorded in any state.
        self.store.update(job.job_id, {"execution_arn": arn}, when=frozenset(JobStatus))

    def execution_arn(self, job_id: str) -> str:
        return self.workflow.execution_arn(job_id)

    def _owned(self, tenant: Tenant, job_id: str) -> Job:
        job = self.store.get(job_id) if job_id.startswith("job-") and len(job_id) <= 64 else None
        if not job or job.tenant != tenant.tenant:
            raise NotFound("No such job.", {"job_id": job_id})  # another tenant's job looks exactly like a missing one
        return job

    def view(self, tenant: Tenant, job_id: str) -> dict[str, Any]:
        return self._view(self._owned(tenant, job_id))

    def _view(self, job: Job) -> dict[str, Any]:
        result_url = None
        # A job failed for its failed items still has a result: every item, with its output or error.
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED) and job.result_key:
            result_url = storage.presigned_get(self.settings.storage.data_bucket, job.result_key, self.settings.storage.presign_ttl_s)
        view = JobView(
            job_id=job.job_id, status=job.status, kind=job.kind, route=job.route, backend=job.backend, fallback_reason=job.fallback_reason,
            created_at=job.created_at, updated_at=job.updated_at, items=job.items, usage=job.usage, cost_usd=job.cost_usd,
            gpu_seconds=job.gpu_seconds, failed_items=job.failed_items, result_url=result_url, error=job.error, trace_id=job.trace_id,
        )
        # Fields not set yet are left out, but fallback_reason is always there: null says the job did not fall back.
        return {**view.model_dump(exclude_none=True), "fallback_reason": view.fallback_reason}

    def cancel(self, tenant: Tenant, job_id: str) -> dict[str, Any]:
        job = self._owned(tenant, job_id)
        while not is_terminal(job.status):
            try:
                self.store.transition(job_id, job.status, JobStatus.CANCELLED, error={"code": "cancelled", "message": "Cancelled by the tenant."})
                break
            except StaleJobState:
                job = self._owned(tenant, job_id)  # it moved on (QUEUED -> RUNNING, or it finished): look again
        else:
            return self._view(job)  # final already (maybe it finished while we tried): nothing left to stop
        self.workflow.stop(job.execution_arn or self.execution_arn(job_id), "Job.Cancelled", "Cancelled by the tenant.")
        if job.batch_job_id:
            self.batch.terminate(job.batch_job_id, "Cancelled by the tenant.")
        logger.info("job.cancelled", extra={"trace_id": job.trace_id, "tenant": tenant.tenant, "job_id": job_id})
        return self.view(tenant, job_id)

    # The workflow's entry points (handlers.job_steps / handlers.batch_job_failed).
    def run_step(self, message: StepMessage) -> None:
        self.steps.run_step(message)

    def on_batch_failure(self, detail: dict[str, Any]) -> str:
        return self.steps.on_batch_failure(detail)


def job_service(services: Services) -> JobService:
    settings = services.settings
    return JobService(services, JobStore(settings.jobs.table),
                      StepFunctionsWorkflow(settings.jobs.state_machine_arn, settings.jobs.state_machine_name, settings.jobs.steps_queue),
                      AwsBatch(settings.jobs.batch_job_queue, settings.jobs.batch_job_definition))
