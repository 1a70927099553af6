"""The workflow's steps: what job_steps does for each action of statemachines/long_job.asl.json,
and for Batch's FAILED events.

Each step gets the job record and the step message, does its work through the injected store,
workflow and Batch facades, and answers the task token. The steps' status changes go through
JobStore.transition (chalicelib/jobs/lifecycle.py holds the table); when one is refused because the
job changed meanwhile (StaleJobState: a cancel racing a worker's answer, most often), `run_step`
tells the workflow instead of failing the message: that race is expected, not a fault.
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import Any, Callable

from pydantic import ValidationError

from .. import storage
from ..meter.gpu_cost import FinalAttempt, meter_gpu_attempts
from ..core import Usage
from ..observability import logger, metrics
from . import protocol
from .context import JobContext
from .fallback import FallbackRunner, chunk_size, plan_chunks, plan_item_chunks
from .lifecycle import JobStatus, StaleJobState, is_terminal
from .models import Job, StepMessage, WorkerReport, parse_s3_uri
from .policy import job_outcome, watch_action
from .store import JobStore
from .timing import runtime_gpu_timeouts

NEVER_STARTED = ("SUBMITTED", "PENDING", "RUNNABLE")  # a timed-out Batch job in these had no GPU capacity


def meter_job(job: Job) -> dict[str, Any]:
    """The job fields the GPU meter reads (chalicelib/meter/gpu_cost.py)."""
    return {"job_id": job.job_id, "tenant": job.tenant, "trace_id": job.trace_id}


class JobSteps(JobContext):
    # ---------- dispatch ----------

    def run_step(self, message: StepMessage) -> None:
        """Do one workflow step and answer its task token. Raising leaves the message for a retry."""
        job = self.store.get(message.job_id)
        if job is None:
            self._fail(message.task_token, protocol.JOB_MISSING, f"job {message.job_id} does not exist")
            return
        if job.status == JobStatus.CANCELLED and message.action != "mark_failed":
            self._fail(message.task_token, protocol.JOB_CANCELLED, "cancelled by the tenant")
            return
        if is_terminal(job.status) and message.action not in ("mark_failed", "watch_batch"):
            # A redelivered step of a finished job (its answer was lost after the record was written): answer
            # the recorded outcome again; the job itself cannot change any more.
            logger.info("job.step_after_final", extra={"trace_id": message.trace_id, "job_id": job.job_id,
                                                       "action": message.action, "status": str(job.status)})
            self._answer_outcome(message.task_token, job)
            return
        try:
            (STEPS.get(message.action) or OWN_STEPS[message.action])(self, message, job)
        except StaleJobState as exc:
            # The job changed under this step (a cancel, most often, racing a worker's answer): the step's
            # write was refused, so nothing of it was recorded. Tell the workflow; it has usually been stopped
            # already, and then the answer finds a stale token, which is harmless.
            logger.info("job.step_superseded", extra={"trace_id": message.trace_id, "job_id": job.job_id,
                                                      "action": message.action, "expected": exc.expected})
            now = self.store.get(job.job_id)
            cancelled = now is not None and now.status == JobStatus.CANCELLED
            self._fail(message.task_token, protocol.JOB_CANCELLED if cancelled else protocol.JOB_SUPERSEDED,
                       f"job {job.job_id} changed during {message.action}")

    def _fail(self, token: str, error: str, cause: str) -> None:
        self.workflow.fail(token, error, cause)

    def _answer_outcome(self, token: str, job: Job) -> None:
        if job.status == JobStatus.SUCCEEDED:
            self.workflow.succeed(token, {"status": "SUCCEEDED", "backend": job.backend})
        else:
            error = job.error or {}
            self._fail(token, error.get("code", "Job.Failed"), error.get("message", "the job failed"))

    def _terminate(self, batch_job_id: str | None, reason: str) -> None:
        if batch_job_id:
            self.batch.terminate(batch_job_id, reason)

    # ---------- GPU path ----------

    def submit_batch(self, message: StepMessage, job: Job) -> None:
        if job.task_token == message.task_token and job.submitted_attempt == message.attempt and job.batch_job_id:
            return  # this attempt was submitted already (SQS redelivered the message)
        if not self.workflow.heartbeat(message.task_token):
            return  # the workflow gave up on this task (redelivered late): no GPU job for a dead token
        settings = self.settings
        environment = protocol.to_env(protocol.WorkerJob(
            job_id=job.job_id, tenant=job.tenant, task_token=message.task_token, trace_id=message.trace_id,
            bucket=settings.storage.data_bucket, input_key=job.input_key,
            result_key=storage.tenant_key("results", job.tenant, job.job_id, "output.jsonl"),
            checkpoint_key=storage.tenant_key("results", job.tenant, job.job_id, "checkpoint.jsonl"),
            max_tokens=job.max_tokens, system_prompt=job.system, kms_key_id=settings.storage.kms_key_id))
        batch_job_id = self.batch.submit(f"crossover-{job.job_id}", environment, {"crossover:tenant": job.tenant, "crossover:job": job.job_id})
        try:
            self.store.transition(job.job_id, job.status, JobStatus.RUNNING, backend="self_hosted", batch_job_id=batch_job_id,
                                  task_token=message.task_token, submitted_attempt=message.attempt, attempts=job.attempts + 1,
                                  batch_submitted_at=time.time(), watch=0)
        except StaleJobState:
            # Cancelled while we submitted: the cancel could not see this Batch job, so stop it here (no GPU spend).
            self._terminate(batch_job_id, "Cancelled by the tenant.")
            raise
        logger.info("job.batch_submitted", extra={"trace_id": message.trace_id, "job_id": job.job_id, "batch_job_id": batch_job_id})
        self._schedule_watch(message, batch_job_id, 0)

    # The capacity phase: job_steps keeps the task alive until the worker runs (then the worker heartbeats).

    def _schedule_watch(self, message: StepMessage, batch_job_id: str, watch: int) -> None:
        """The next look at the queued Batch job, as a delayed message to this same queue."""
        body = StepMessage(action="watch_batch", job_id=message.job_id, trace_id=message.trace_id, task_token=message.task_token,
                           attempt=message.attempt, batch_job_id=batch_job_id, watch=watch)
        self.workflow.send_step(body.model_dump_json(exclude_none=True), runtime_gpu_timeouts(self.settings).watch_interval_s)

    def watch_batch(self, message: StepMessage, job: Job) -> None:
        if (is_terminal(job.status) or job.batch_job_id != message.batch_job_id or job.task_token != message.task_token
                or job.watch != message.watch):
            return  # a newer attempt, a finished job, or a duplicate of this watch (SQS delivers at least once)
        timeouts = runtime_gpu_timeouts(self.settings)
        status = self.batch.status(message.batch_job_id or "")
        waited = time.time() - (job.batch_submitted_at or time.time())
        action = watch_action(status, waited, timeouts.capacity_timeout_s)
        if action == "stop":
            return
        if action == "give_up":
            self._terminate(job.batch_job_id, f"No GPU capacity in {timeouts.capacity_timeout_s} s.")
            logger.warning("job.no_capacity", extra={"trace_id": message.trace_id, "job_id": job.job_id, "batch_status": status,
                                                     "waited_s": round(waited)})
            self._fail(message.task_token, protocol.BATCH_NO_CAPACITY,
                       f"still {status} after {waited:.0f} s (capacity timeout {timeouts.capacity_timeout_s} s)")
            return
        try:
            self.store.update(job.job_id, {"watch": message.watch + 1}, expect={"watch": message.watch})
        except StaleJobState:
            return  # another delivery of this watch got here first, or the job finished: that one carries on
        if self.workflow.heartbeat(message.task_token):
            self._schedule_watch(message, message.batch_job_id or "", message.watch + 1)

    def record_result(self, message: StepMessage, job: Job) -> None:
        try:
            report = WorkerReport.model_validate(message.result or {})
        except ValidationError as exc:
            # A malformed report will not improve on retry: fail the step (the workflow falls back or fails).
            self._fail(message.task_token, protocol.WORKER_BAD_REPORT, f"{exc.error_count()} invalid field(s) in the worker's report")
            return
        usage = Usage(input_tokens=report.input_tokens, output_tokens=report.output_tokens)
        # Every Batch attempt is metered (the ones that died too), each at its own instance's spot/on-demand price.
        cost = meter_gpu_attempts(self.services.meter.record, self.services.catalog, self.batch, meter_job(job),
                                  job.batch_job_id or "local", report.model, message.trace_id,
                                  FinalAttempt(Decimal(str(report.wall_seconds)), report.instance_type, usage))
        _, result_key = parse_s3_uri(report.result_uri)
        failed = report.failed_items
        tokens = {"input_tokens": report.input_tokens, "output_tokens": report.output_tokens}
        loaded = {"model_load": report.model_load} if report.model_load else {}
        if failed.count and job.fallback and failed.count == len(failed.indexes):
            # Fall back per item: only the failed ones go to Bedrock, merged into this result (MergeFallback).
            self.store.update(job.job_id, {"backend": "self_hosted", "gpu_result_key": result_key, "gpu_seconds": report.gpu_seconds,
                                           "gpu_usage": tokens, "gpu_cost_usd": str(cost) if cost is not None else None, **loaded})
            self.workflow.succeed(message.task_token, {"status": "RETRY_ITEMS", "retry_items": failed.indexes})
            return
        self._finish(job, message, {"backend": "self_hosted", "result_key": result_key, "usage": tokens,
                                    "cost_usd": float(cost) if cost is not None else None, "gpu_seconds": report.gpu_seconds, **loaded},
                     failed.model_dump())

    def _finish(self, job: Job, message: StepMessage, fields: dict[str, Any], failed: dict[str, Any]) -> None:
        """SUCCEEDED, or FAILED (Job.ItemsFailed) when too many items failed; the result stays readable either way."""
        status = JobStatus(job_outcome(job.items, int(failed["count"]), self.settings.jobs.max_failed_fraction))
        fields = {**fields, "failed_items": failed}
        if status == JobStatus.FAILED:
            fields["error"] = {"code": protocol.JOB_ITEMS_FAILED, "message": f"{failed['count']} of {job.items} items failed "
                                                                             f"(JOB_MAX_FAILED_FRACTION {self.settings.jobs.max_failed_fraction})"}
        self.store.transition(job.job_id, job.status, status, **fields)
        if status == JobStatus.FAILED:
            metrics.add_metric(name="JobsFailed", unit="Count", value=1)
            self._fail(message.task_token, protocol.JOB_ITEMS_FAILED, fields["error"]["message"])
            return
        self.workflow.succeed(message.task_token, {"status": "SUCCEEDED", "backend": fields["backend"]})
        metrics.add_metric(name="JobsSucceeded", unit="Count", value=1)

    # ---------- Bedrock fallback ----------

    def plan_fallback(self, message: StepMessage, job: Job) -> None:
        size = chunk_size(self.settings)
        if message.items is not None:  # per item: only the GPU run's failed items
            chunks = plan_item_chunks(message.items, size)
            self.store.update(job.job_id, {"fallback_reason": protocol.WORKER_ITEMS_FAILED, "fallback_items": len(message.items)})
            logger.warning("job.item_fallback", extra={"trace_id": message.trace_id, "job_id": job.job_id, "items": len(message.items)})
            metrics.add_metric(name="JobItemFallbacks", unit="Count", value=len(message.items))
            self.workflow.succeed(message.task_token, {"chunks": chunks, "reason": protocol.WORKER_ITEMS_FAILED})
            return
        self._terminate(job.batch_job_id, "Falling back to Bedrock.")  # no GPU spend after this point
        reason = str((message.error or {}).get("Error", "unknown"))
        if job.batch_job_id and reason in ("States.Timeout", "States.HeartbeatTimeout") and self.batch.status(job.batch_job_id) in NEVER_STARTED:
            reason = protocol.BATCH_NO_CAPACITY  # never started: no GPU capacity in time
        chunks = plan_chunks(job.items, size)
        self.store.update(job.job_id, {"backend": "bedrock", "fallback_reason": reason})
        if reason == protocol.ROUTED_TO_BEDROCK:  # the router's choice, not a GPU failure: not counted as a fallback
            logger.info("job.routed_to_bedrock", extra={"trace_id": message.trace_id, "job_id": job.job_id, "chunks": len(chunks)})
        else:
            logger.warning("job.fallback", extra={"trace_id": message.trace_id, "job_id": job.job_id, "reason": reason, "chunks": len(chunks)})
            metrics.add_metric(name="JobFallbacks", unit="Count", value=1)
        self.workflow.succeed(message.task_token, {"chunks": chunks, "reason": reason})

    def fallback_chunk(self, message: StepMessage, job: Job) -> None:
        """Run a chunk's items on Bedrock (chalicelib/jobs/fallback.py); Model.Throttled lets the workflow retry the rest."""
        outcome = FallbackRunner(self.services).run_chunk(job, message.chunk or {}, message.trace_id)
        if outcome is None:
            # The workflow retries the chunk with backoff; the items finished so far stay done and metered.
            self._fail(message.task_token, protocol.MODEL_THROTTLED, "Bedrock throttled the fallback")
            return
        self.workflow.succeed(message.task_token, outcome)

    def merge_fallback(self, message: StepMessage, job: Job) -> None:
        fields, failed = FallbackRunner(self.services).merge(job, message.chunks or [])
        self._finish(job, message, fields, failed)

    def mark_failed(self, message: StepMessage, job: Job) -> None:
        error = message.error or {}
        code = str(error.get("Error", "Job.Failed"))
        cause = str(error.get("Cause") or job.batch_failure_reason or "no cause given")
        self._terminate(job.batch_job_id, f"Job failed: {code}")
        try:
            if is_terminal(job.status):
                raise StaleJobState(job.job_id, "active")
            self.store.transition(job.job_id, job.status, JobStatus.FAILED, error={"code": code, "message": cause[:2000]})
        except StaleJobState:
            # Cancelled (the workflow's stop raced its own failure path) or already failed: the record keeps that.
            logger.info("job.failed_after_final", extra={"trace_id": message.trace_id, "job_id": job.job_id})
        else:
            logger.warning("job.failed", extra={"trace_id": message.trace_id, "job_id": job.job_id, "code": code})
            metrics.add_metric(name="JobsFailed", unit="Count", value=1)
        self.workflow.succeed(message.task_token, {"status": "FAILED"})

    # ---------- Batch job state change (EventBridge) ----------

    def on_batch_failure(self, detail: dict[str, Any]) -> str:
        """A Batch job FAILED: fail the waiting workflow step now rather than at its timeout."""
        name = str(detail.get("jobName", ""))
        if not name.startswith("crossover-job-"):
            return "ignored"
        job = self.store.get(name[len("crossover-"):])
        if job and detail.get("jobId"):  # its attempts cost GPU time whether or not the workflow still waits on it
            meter_gpu_attempts(self.services.meter.record, self.services.catalog, self.batch, meter_job(job), str(detail["jobId"]),
                               self.settings.models.self_hosted_model, job.trace_id, description=detail)
        if not job or job.batch_job_id != detail.get("jobId") or not job.task_token:
            return "ignored"  # an older attempt, or not ours
        reason = str(detail.get("statusReason") or "Batch job failed")
        try:
            # Kept on the record too: the failure step then has the reason even if the cause is lost on the way.
            self.store.update(job.job_id, {"batch_failure_reason": reason[:2000]})
        except StaleJobState:
            return "ignored"  # the job is final already (cancelled, or its fallback finished): nobody waits on it
        # The instance went away (a spot reclaim, a host failure): the workflow resumes from the worker's
        # checkpoint once (CanResume), as for Worker.Interrupted; Batch itself never retries (one attempt).
        code = protocol.BATCH_HOST_TERMINATED if reason.startswith("Host EC2") else protocol.BATCH_JOB_FAILED
        self._fail(job.task_token, code, reason)
        logger.warning("job.batch_failed", extra={"trace_id": job.trace_id, "job_id": job.job_id, "reason": reason[:200]})
        return "failed"


Step = Callable[[JobSteps, StepMessage, Job], None]

# The workflow's steps, keyed by the action names in statemachines/long_job.asl.json (a test keeps them equal).
STEPS: dict[str, Step] = {
    "submit_batch": JobSteps.submit_batch,
    "record_result": JobSteps.record_result,
    "plan_fallback": JobSteps.plan_fallback,
    "fallback_chunk": JobSteps.fallback_chunk,
    "merge_fallback": JobSteps.merge_fallback,
    "mark_failed": JobSteps.mark_failed,
}
# Messages job_steps sends itself on the same queue (not in the state machine): the capacity watch.
OWN_STEPS: dict[str, Step] = {"watch_batch": JobSteps.watch_batch}
