"""Long jobs: submission (API), status and cancel, the workflow's steps, and Batch failures.

The Step Functions workflow (statemachines/long_job.asl.json) hands each step that needs our code
to the job-steps queue with a task token; `run_step` does the work and answers the token.
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable

from pydantic import ValidationError

from .. import aws, safe_json, storage
from ..agent.loop import AgentLimits, run_agent, user_text
from ..auth import Tenant
from ..errors import CrossoverError, NotFound, Throttled, ValidationFailed
from ..meter.gpu_cost import BatchAttempts, FinalAttempt, meter_gpu_attempts
from ..meter.ledger import LedgerEntry
from ..core import Usage
from ..meter.pricing import price_usage
from ..observability import logger, metrics
from ..services import Services
from . import protocol
from .lifecycle import JobStatus, StaleJobState, is_terminal
from .models import JobAccepted, JobRequest, JobView, StepMessage, WorkerReport, parse_s3_uri
from .policy import job_outcome, watch_action
from .store import JobStore, now_iso
from .timing import fallback_chunk_size, runtime_gpu_timeouts

INPUT_AREAS = ("inputs", "incoming")  # where a tenant may point input_uri (its own prefix only)


def job_id_for(tenant: str, idempotency_key: str | None) -> str:
    """Stable for an idempotency key (a resubmission maps to the same job and execution), random otherwise."""
    if idempotency_key:
        return "job-" + hashlib.sha256(f"{tenant}#{idempotency_key}".encode()).hexdigest()[:24]
    return "job-" + uuid.uuid4().hex[:24]


def read_prompts(text: str) -> list[str]:
    prompts = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = safe_json.loads(line, f"input line {number}")
        except ValidationFailed as exc:
            raise ValidationFailed(f"{exc.message[:-1]}; each line must be a JSON object with a 'prompt'.", {"line": number}) from exc
        if not isinstance(record, dict) or "prompt" not in record:
            raise ValidationFailed(f"input line {number} is not a JSON object with a 'prompt'.", {"line": number})
        prompt = record["prompt"]
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValidationFailed(f"input line {number}: 'prompt' must be a non-empty string.", {"line": number})
        prompts.append(prompt)
    if not prompts:
        raise ValidationFailed("The input has no prompts.", None)
    return prompts


@dataclass
class JobService:
    services: Services
    store: JobStore

    @property
    def settings(self) -> Any:
        return self.services.settings

    # ---------- API ----------

    def submit(self, tenant: Tenant, request: JobRequest, trace_id: str, idempotency_key: str | None = None,
               source: str = "api") -> dict[str, Any]:
        settings = self.settings
        prompts = request.input.prompts if request.input else self._prompts_from_uri(tenant.tenant, request.input_uri or "")
        for index, prompt in enumerate(prompts):
            self.services.screening.require_allowed(prompt, tenant.tenant, trace_id, f"jobs.item[{index}]")
        if request.system:
            self.services.screening.require_allowed(request.system, tenant.tenant, trace_id, "jobs.system")
        job_id = job_id_for(tenant.tenant, idempotency_key)
        existing = self.store.get(job_id)
        if existing:
            if existing["status"] == JobStatus.QUEUED and not existing.get("execution_arn"):
                # An earlier attempt stored the job, then failed to start its workflow (Step Functions
                # unavailable): start it now. The execution is named after the job, so this is idempotent.
                self._start_execution(job_id, existing["trace_id"], bool(existing.get("fallback", True)))
            return JobAccepted(job_id=job_id, status=existing["status"]).model_dump()
        input_key = storage.tenant_key("inputs", tenant.tenant, job_id, "input.jsonl")
        storage.put_text(settings.data_bucket, input_key, storage.jsonl([{"prompt": p} for p in prompts]), settings.kms_key_id, tenant.tenant)
        created = now_iso()
        record = {
            "job_id": job_id, "tenant": tenant.tenant, "status": JobStatus.QUEUED, "kind": request.kind, "items": len(prompts),
            "model": request.model or settings.default_model, "system": request.system or "", "max_tokens": request.max_tokens,
            "fallback": request.fallback, "input_key": input_key, "trace_id": trace_id, "source": source,
            "created_at": created, "updated_at": created,
        }
        if not self.store.create(record):  # a concurrent duplicate won the race
            return JobAccepted(job_id=job_id, status=self.store.get(job_id)["status"]).model_dump()  # type: ignore[index]
        self._start_execution(job_id, trace_id, request.fallback)
        logger.info("job.submitted", extra={"trace_id": trace_id, "tenant": tenant.tenant, "job_id": job_id, "items": len(prompts),
                                            "kind": request.kind, "source": source})
        metrics.add_metric(name="JobsSubmitted", unit="Count", value=1)
        return JobAccepted(job_id=job_id, status=JobStatus.QUEUED).model_dump()

    def _prompts_from_uri(self, tenant: str, uri: str) -> list[str]:
        bucket, key = parse_s3_uri(uri)
        parts = key.split("/")
        if bucket != self.settings.data_bucket or len(parts) < 3 or parts[0] not in INPUT_AREAS or parts[1] != tenant or ".." in parts:
            # Same answer whether the object exists or belongs to someone else: nothing leaks.
            raise NotFound("No such input object for this tenant.", {"input_uri": uri})
        try:
            text = storage.get_text(bucket, key, self.settings.max_job_input_bytes)
        except ValueError as exc:
            raise ValidationFailed(str(exc), {"input_uri": uri}) from exc
        except Exception as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404", "NoSuchBucket"):
                raise NotFound("No such input object for this tenant.", {"input_uri": uri}) from exc
            raise
        return read_prompts(text)

    def _start_execution(self, job_id: str, trace_id: str, fallback: bool) -> None:
        sfn = aws.client("stepfunctions")
        try:
            sfn.start_execution(stateMachineArn=self.state_machine_arn(), name=job_id,
                                input=json.dumps({"job_id": job_id, "trace_id": trace_id, "fallback": fallback, "resumes": {"count": 0}}),
                                traceHeader=trace_id[:256])
        except sfn.exceptions.ExecutionAlreadyExists:
            pass  # same name, same job: the idempotent resubmission case
        # A fact about the job whatever its state (a cancel may have raced this start): recorded in any state.
        self.store.update(job_id, {"execution_arn": self.execution_arn(job_id)}, when=frozenset(JobStatus))

    def state_machine_arn(self) -> str:
        if self.settings.state_machine_arn:
            return self.settings.state_machine_arn
        account = aws.client("sts").get_caller_identity()["Account"]
        region = aws.client("stepfunctions").meta.region_name
        return f"arn:aws:states:{region}:{account}:stateMachine:{self.settings.state_machine_name}"

    def execution_arn(self, job_id: str) -> str:
        return self.state_machine_arn().replace(":stateMachine:", ":execution:") + f":{job_id}"

    def _owned(self, tenant: Tenant, job_id: str) -> dict[str, Any]:
        job = self.store.get(job_id) if job_id.startswith("job-") and len(job_id) <= 64 else None
        if not job or job["tenant"] != tenant.tenant:
            raise NotFound("No such job.", {"job_id": job_id})  # another tenant's job looks exactly like a missing one
        return job

    def view(self, tenant: Tenant, job_id: str) -> dict[str, Any]:
        job = self._owned(tenant, job_id)
        result_url = None
        # A job failed for its failed items still has a result: every item, with its output or error.
        if job["status"] in (JobStatus.SUCCEEDED, JobStatus.FAILED) and job.get("result_key"):
            result_url = storage.presigned_get(self.settings.data_bucket, job["result_key"], self.settings.presign_ttl_s)
        return JobView(
            job_id=job_id, status=job["status"], kind=job["kind"], backend=job.get("backend"),
            created_at=job["created_at"], updated_at=job["updated_at"], items=job["items"], usage=job.get("usage"),
            cost_usd=job.get("cost_usd"), gpu_seconds=job.get("gpu_seconds"), failed_items=job.get("failed_items"), result_url=result_url,
            error=job.get("error"), trace_id=job["trace_id"],
        ).model_dump(exclude_none=True)

    def cancel(self, tenant: Tenant, job_id: str) -> dict[str, Any]:
        job = self._owned(tenant, job_id)
        while not is_terminal(job["status"]):
            try:
                self.store.transition(job_id, job["status"], JobStatus.CANCELLED,
                                      error={"code": "cancelled", "message": "Cancelled by the tenant."})
                break
            except StaleJobState:
                job = self._owned(tenant, job_id)  # it moved on (QUEUED -> RUNNING, or it finished): look again
        else:
            return self.view(tenant, job_id)  # finished first (maybe while we tried): nothing left to stop
        sfn = aws.client("stepfunctions")
        try:
            sfn.stop_execution(executionArn=job.get("execution_arn") or self.execution_arn(job_id), error="Job.Cancelled",
                               cause="Cancelled by the tenant.")
        except sfn.exceptions.ExecutionDoesNotExist:
            pass
        self._terminate_batch(job, "Cancelled by the tenant.")
        logger.info("job.cancelled", extra={"trace_id": job["trace_id"], "tenant": tenant.tenant, "job_id": job_id})
        return self.view(tenant, job_id)

    def _terminate_batch(self, job: dict[str, Any], reason: str) -> None:
        if job.get("batch_job_id"):
            aws.client("batch").terminate_job(jobId=job["batch_job_id"], reason=reason[:256])

    # ---------- workflow steps ----------

    def run_step(self, message: StepMessage) -> None:
        """Do one workflow step and answer its task token. Raising leaves the message for a retry."""
        job = self.store.get(message.job_id)
        if job is None:
            self._answer(message.task_token, error=(protocol.JOB_MISSING, f"job {message.job_id} does not exist"))
            return
        if job["status"] == JobStatus.CANCELLED and message.action != "mark_failed":
            self._answer(message.task_token, error=(protocol.JOB_CANCELLED, "cancelled by the tenant"))
            return
        if is_terminal(job["status"]) and message.action not in ("mark_failed", "watch_batch"):
            # A redelivered step of a finished job (its answer was lost after the record was written): answer
            # the recorded outcome again; the job itself cannot change any more.
            logger.info("job.step_after_final", extra={"trace_id": message.trace_id, "job_id": message.job_id,
                                                       "action": message.action, "status": job["status"]})
            self._answer_outcome(message.task_token, job)
            return
        try:
            (STEPS.get(message.action) or OWN_STEPS[message.action])(self, message, job)
        except StaleJobState as exc:
            # The job changed under this step (a cancel, most often, racing a worker's answer): the step's
            # write was refused, so nothing of it was recorded. Tell the workflow; it has usually been stopped
            # already, and then the answer finds a stale token, which is harmless.
            logger.info("job.step_superseded", extra={"trace_id": message.trace_id, "job_id": message.job_id,
                                                      "action": message.action, "expected": exc.expected})
            self._answer(message.task_token, error=(protocol.JOB_CANCELLED if self._cancelled(message.job_id) else protocol.JOB_SUPERSEDED,
                                                    f"job {message.job_id} changed during {message.action}"))

    def _answer_outcome(self, token: str, job: dict[str, Any]) -> None:
        if job["status"] == JobStatus.SUCCEEDED:
            self._answer(token, {"status": "SUCCEEDED", "backend": job.get("backend")})
        else:
            error = job.get("error") or {}
            self._answer(token, error=(str(error.get("code", "Job.Failed")), str(error.get("message", "the job failed"))))

    def _cancelled(self, job_id: str) -> bool:
        job = self.store.get(job_id)
        return job is not None and job["status"] == JobStatus.CANCELLED

    def _answer(self, token: str, output: dict[str, Any] | None = None, error: tuple[str, str] | None = None) -> None:
        sfn = aws.client("stepfunctions")
        try:
            if error is None:
                sfn.send_task_success(taskToken=token, output=json.dumps(output or {}, default=str))
            else:
                sfn.send_task_failure(taskToken=token, **protocol.failure(*error))
        except Exception as exc:
            code = protocol.stale_token_code(exc)
            if code is None:
                raise
            # The workflow moved on (timeout, cancel, or this answer was sent already): harmless.
            logger.info("job.stale_task_token", extra={"code": code})

    def _step_submit_batch(self, message: StepMessage, job: dict[str, Any]) -> None:
        if job.get("task_token") == message.task_token and job.get("submitted_attempt") == message.attempt and job.get("batch_job_id"):
            return  # this attempt was submitted already (SQS redelivered the message)
        if not self._heartbeat(message.task_token):
            return  # the workflow gave up on this task (redelivered late): no GPU job for a dead token
        settings = self.settings
        environment = protocol.to_env(protocol.WorkerJob(
            job_id=job["job_id"], tenant=job["tenant"], task_token=message.task_token, trace_id=message.trace_id,
            bucket=settings.data_bucket, input_key=job["input_key"],
            result_key=storage.tenant_key("results", job["tenant"], job["job_id"], "output.jsonl"),
            checkpoint_key=storage.tenant_key("results", job["tenant"], job["job_id"], "checkpoint.jsonl"),
            max_tokens=int(job["max_tokens"]), system_prompt=job.get("system") or "", kms_key_id=settings.kms_key_id))
        response = aws.client("batch").submit_job(
            jobName=f"crossover-{job['job_id']}", jobQueue=settings.batch_job_queue, jobDefinition=settings.batch_job_definition,
            containerOverrides={"environment": [{"name": k, "value": v} for k, v in environment.items()]},
            tags={"crossover:tenant": job["tenant"], "crossover:job": job["job_id"]},
        )
        try:
            self.store.transition(job["job_id"], job["status"], JobStatus.RUNNING, backend="self_hosted", batch_job_id=response["jobId"],
                                  task_token=message.task_token, submitted_attempt=message.attempt,
                                  attempts=int(job.get("attempts", 0)) + 1, batch_submitted_at=time.time(), watch=0)
        except StaleJobState:
            # Cancelled while we submitted: the cancel could not see this Batch job, so stop it here (no GPU spend).
            self._terminate_batch({"batch_job_id": response["jobId"]}, "Cancelled by the tenant.")
            raise
        logger.info("job.batch_submitted", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "batch_job_id": response["jobId"]})
        self._schedule_watch(message, response["jobId"], 0)

    # ---------- capacity phase: job_steps keeps the task alive until the worker runs ----------

    def _heartbeat(self, token: str) -> bool:
        """SendTaskHeartbeat; False when the workflow no longer waits on this token."""
        sfn = aws.client("stepfunctions")
        try:
            sfn.send_task_heartbeat(taskToken=token)
            return True
        except Exception as exc:
            if protocol.stale_token_code(exc) is not None:
                return False
            raise

    def _schedule_watch(self, message: StepMessage, batch_job_id: str, watch: int) -> None:
        """The next look at the queued Batch job, as a delayed message to this same queue."""
        sqs = aws.client("sqs")
        url = sqs.get_queue_url(QueueName=self.settings.job_steps_queue)["QueueUrl"]
        body = StepMessage(action="watch_batch", job_id=message.job_id, trace_id=message.trace_id, task_token=message.task_token,
                           attempt=message.attempt, batch_job_id=batch_job_id, watch=watch)
        sqs.send_message(QueueUrl=url, MessageBody=body.model_dump_json(exclude_none=True),
                         DelaySeconds=runtime_gpu_timeouts(self.settings).watch_interval_s)

    def batch_status(self, batch_job_id: str) -> str | None:
        jobs = aws.client("batch").describe_jobs(jobs=[batch_job_id])["jobs"]
        return jobs[0]["status"] if jobs else None

    def _step_watch_batch(self, message: StepMessage, job: dict[str, Any]) -> None:
        if (is_terminal(job["status"]) or job.get("batch_job_id") != message.batch_job_id or job.get("task_token") != message.task_token
                or int(job.get("watch", 0)) != message.watch):
            return  # a newer attempt, a finished job, or a duplicate of this watch (SQS delivers at least once)
        timeouts = runtime_gpu_timeouts(self.settings)
        status = self.batch_status(message.batch_job_id or "")
        waited = time.time() - float(job.get("batch_submitted_at", time.time()))
        action = watch_action(status, waited, timeouts.capacity_timeout_s)
        if action == "stop":
            return
        if action == "give_up":
            self._terminate_batch(job, f"No GPU capacity in {timeouts.capacity_timeout_s} s.")
            logger.warning("job.no_capacity", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "batch_status": status,
                                                     "waited_s": round(waited)})
            self._answer(message.task_token, error=(protocol.BATCH_NO_CAPACITY, f"still {status} after {waited:.0f} s "
                                                                        f"(capacity timeout {timeouts.capacity_timeout_s} s)"))
            return
        try:
            self.store.update(job["job_id"], {"watch": message.watch + 1}, expect={"watch": message.watch})
        except StaleJobState:
            return  # another delivery of this watch got here first, or the job finished: that one carries on
        if self._heartbeat(message.task_token):
            self._schedule_watch(message, message.batch_job_id or "", message.watch + 1)

    def _step_record_result(self, message: StepMessage, job: dict[str, Any]) -> None:
        try:
            report = WorkerReport.model_validate(message.result or {})
        except ValidationError as exc:
            # A malformed report will not improve on retry: fail the step (the workflow falls back or fails).
            self._answer(message.task_token, error=(protocol.WORKER_BAD_REPORT, f"{exc.error_count()} invalid field(s) in the worker's report"))
            return
        usage = Usage(input_tokens=report.input_tokens, output_tokens=report.output_tokens)
        # Every Batch attempt is metered (the ones that died too), each at its own instance's spot/on-demand price.
        cost = meter_gpu_attempts(self.services.meter.record, self.services.catalog, BatchAttempts(aws.client), job,
                                  job.get("batch_job_id") or "local", report.model, message.trace_id,
                                  FinalAttempt(Decimal(str(report.wall_seconds)), report.instance_type, usage))
        _, result_key = parse_s3_uri(report.result_uri)
        failed = report.failed_items
        if failed.count and job.get("fallback", True) and failed.count == len(failed.indexes):
            # Fall back per item: only the failed ones go to Bedrock, merged into this result (MergeFallback).
            self.store.update(job["job_id"], {
                "backend": "self_hosted", "gpu_result_key": result_key, "gpu_seconds": report.gpu_seconds,
                "gpu_usage": {"input_tokens": report.input_tokens, "output_tokens": report.output_tokens},
                "gpu_cost_usd": str(cost) if cost is not None else None,
                **({"model_load": report.model_load} if report.model_load else {})})
            self._answer(message.task_token, {"status": "RETRY_ITEMS", "retry_items": failed.indexes})
            return
        self._finish(job, message, {
            "backend": "self_hosted", "result_key": result_key,
            "usage": {"input_tokens": report.input_tokens, "output_tokens": report.output_tokens},
            "cost_usd": float(cost) if cost is not None else None, "gpu_seconds": report.gpu_seconds,
            **({"model_load": report.model_load} if report.model_load else {}),
        }, report.failed_items.model_dump())

    def _finish(self, job: dict[str, Any], message: StepMessage, fields: dict[str, Any], failed: dict[str, Any]) -> None:
        """SUCCEEDED, or FAILED (Job.ItemsFailed) when too many items failed; the result stays readable either way."""
        status = job_outcome(int(job["items"]), int(failed["count"]), self.settings.job_max_failed_fraction)
        fields = {**fields, "failed_items": failed}
        if status == JobStatus.FAILED:
            fields["error"] = {"code": "Job.ItemsFailed", "message": f"{failed['count']} of {job['items']} items failed "
                                                                     f"(JOB_MAX_FAILED_FRACTION {self.settings.job_max_failed_fraction})"}
        self.store.transition(job["job_id"], job["status"], status, **fields)
        if status == JobStatus.FAILED:
            metrics.add_metric(name="JobsFailed", unit="Count", value=1)
            self._answer(message.task_token, error=(protocol.JOB_ITEMS_FAILED, fields["error"]["message"]))
            return
        self._answer(message.task_token, {"status": "SUCCEEDED", "backend": fields["backend"]})
        metrics.add_metric(name="JobsSucceeded", unit="Count", value=1)

    def _step_plan_fallback(self, message: StepMessage, job: dict[str, Any]) -> None:
        if message.items is not None:
            self._plan_item_fallback(message, job, message.items)
            return
        error = message.error or {}
        self._terminate_batch(job, "Falling back to Bedrock.")  # no GPU spend after this point
        reason = str(error.get("Error", "unknown"))
        if job.get("batch_job_id") and reason in ("States.Timeout", "States.HeartbeatTimeout"):
            status = aws.client("batch").describe_jobs(jobs=[job["batch_job_id"]])["jobs"]
            if status and status[0]["status"] in ("SUBMITTED", "PENDING", "RUNNABLE"):
                reason = protocol.BATCH_NO_CAPACITY  # never started: no GPU capacity in time
        size = self.chunk_size()
        chunks = [{"index": n, "start": start, "end": min(start + size, job["items"])} for n, start in enumerate(range(0, job["items"], size))]
        self.store.update(job["job_id"], {"backend": "bedrock", "fallback_reason": reason})
        logger.warning("job.fallback", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "reason": reason, "chunks": len(chunks)})
        metrics.add_metric(name="JobFallbacks", unit="Count", value=1)
        self._answer(message.task_token, {"chunks": chunks, "reason": reason})

    def _plan_item_fallback(self, message: StepMessage, job: dict[str, Any], items: list[int]) -> None:
        size = self.chunk_size()
        chunks = [{"index": n, "items": items[start:start + size]} for n, start in enumerate(range(0, len(items), size))]
        self.store.update(job["job_id"], {"fallback_reason": protocol.WORKER_ITEMS_FAILED, "fallback_items": len(items)})
        logger.warning("job.item_fallback", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "items": len(items)})
        metrics.add_metric(name="JobItemFallbacks", unit="Count", value=len(items))
        self._answer(message.task_token, {"chunks": chunks, "reason": protocol.WORKER_ITEMS_FAILED})

    def chunk_size(self) -> int:
        """Items per fallback chunk: what fits the job-steps function (timing.fallback_chunk_size);
        FALLBACK_CHUNK_SIZE may only make it smaller."""
        settings = self.settings
        fits = fallback_chunk_size(settings.job_steps_timeout_s, settings.bedrock_read_timeout_s, settings.bedrock_max_attempts,
                                   settings.fallback_parallel_calls)
        return min(fits, settings.fallback_chunk_size) if settings.fallback_chunk_size > 0 else fits

    def _step_fallback_chunk(self, message: StepMessage, job: dict[str, Any]) -> None:
        """Run a chunk's items on Bedrock, `FALLBACK_PARALLEL_CALLS` at a time. Each finished item is
        metered at once under its own id and checkpointed, so a chunk cut short (Lambda timeout,
        throttling) is metered for every call it made, and its retry runs only the items left."""
        chunk = message.chunk or {}
        index = int(chunk["index"])
        settings = self.settings
        prompts = read_prompts(storage.get_text(settings.data_bucket, job["input_key"], settings.max_job_input_bytes))
        wanted = [int(i) for i in chunk["items"]] if "items" in chunk else list(range(int(chunk["start"]), int(chunk["end"])))
        key = storage.tenant_key("results", job["tenant"], job["job_id"], f"fallback-chunk-{index:05d}.jsonl")
        done = {row["index"]: row for row in self._read_rows(key)}
        price = self.services.catalog.token_price(job["model"])
        throttled = self._run_fallback_items(message, job, key, price, {i: prompts[i] for i in wanted}, done)
        if throttled:
            # The workflow retries the chunk with backoff; the items finished so far stay done and metered.
            self._answer(message.task_token, error=(protocol.MODEL_THROTTLED, "Bedrock throttled the fallback"))
            return
        rows = [done[i] for i in sorted(done)]
        usage = sum((Usage.model_validate(row["usage"]) for row in rows if "usage" in row), Usage())
        cost = price_usage(usage, price)
        self._answer(message.task_token, {"index": index, "key": key, "input_tokens": usage.input_tokens,
                                          "output_tokens": usage.output_tokens, "cost_usd": str(cost) if cost is not None else None})

    def _read_rows(self, key: str) -> list[dict[str, Any]]:
        try:
            text = storage.get_text(self.settings.data_bucket, key, self.settings.max_job_input_bytes * 4)
        except Exception as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return []
            raise
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def _run_fallback_items(self, message: StepMessage, job: dict[str, Any], key: str, price: Any, prompts: dict[int, str],
                            done: dict[int, dict[str, Any]]) -> bool:
        """Fill `done` with a row per item (output or error); True if Bedrock throttled (the rest wait for the retry)."""
        import threading
        from concurrent.futures import ThreadPoolExecutor

        backend = self.services.backends["bedrock"]
        limits = AgentLimits(max_steps=1, max_cost_usd=Decimal(str(self.settings.max_request_cost_usd)),
                             max_tokens=min(int(job["max_tokens"]), self.settings.max_output_tokens), tool_timeout_s=1)
        lock, throttled = threading.Lock(), threading.Event()

        def run(item: int) -> None:
            if throttled.is_set():
                return
            try:
                result = run_agent(backend, job["model"], [user_text(prompts[item])], job.get("system") or None, [], None, limits,
                                   price=lambda u: price_usage(u, price))
            except Throttled:
                throttled.set()
                return
            except CrossoverError as exc:
                row: dict[str, Any] = {"index": item, "error": {"code": exc.code, "message": exc.message}}
            else:
                row = {"index": item, "output": result.output, "stop_reason": result.stop_reason, "usage": result.usage.model_dump()}
                # One ledger row per item, named after the item: a redelivered or retried chunk that meters
                # it again is deduplicated by the ledger, and the checkpoint below stops it calling again.
                self._meter(job, f"{job['job_id']}#fallback#{item}", job["model"], "bedrock", "fallback", result.usage,
                            price_usage(result.usage, price), message.trace_id)
            with lock:
                done[item] = row
                storage.put_text(self.settings.data_bucket, key, storage.jsonl([done[i] for i in sorted(done)]),
                                 self.settings.kms_key_id, job["tenant"])

        todo = [item for item in sorted(prompts) if item not in done]
        with ThreadPoolExecutor(max_workers=max(1, self.settings.fallback_parallel_calls), thread_name_prefix="fallback") as pool:
            list(pool.map(run, todo))
        return throttled.is_set()

    def _step_merge_fallback(self, message: StepMessage, job: dict[str, Any]) -> None:
        chunks = sorted(message.chunks or [], key=lambda c: int(c["index"]))
        rows = {row["index"]: row for chunk in chunks for row in self._read_rows(chunk["key"])}
        result_key = storage.tenant_key("results", job["tenant"], job["job_id"], "output.jsonl")
        costs = [Decimal(c["cost_usd"]) for c in chunks if c.get("cost_usd") is not None]
        usage = {"input_tokens": sum(int(c["input_tokens"]) for c in chunks), "output_tokens": sum(int(c["output_tokens"]) for c in chunks)}
        cost = sum(costs) if len(costs) == len(chunks) else None
        backend = "bedrock"
        if job.get("gpu_result_key"):  # a per-item fallback: the Bedrock rows replace the GPU run's failed ones
            rows = {**{row["index"]: row for row in self._read_rows(job["gpu_result_key"])}, **rows}
            usage = {name: usage[name] + int(job["gpu_usage"][name]) for name in usage}
            cost = cost + Decimal(job["gpu_cost_usd"]) if cost is not None and job.get("gpu_cost_usd") is not None else None
            backend = "self_hosted"
        ordered = [rows[i] for i in sorted(rows)]
        storage.put_text(self.settings.data_bucket, result_key, storage.jsonl(ordered), self.settings.kms_key_id, job["tenant"])
        failed = [row["index"] for row in ordered if "error" in row]
        self._finish(job, message, {"backend": backend, "result_key": result_key, "usage": usage,
                                    "cost_usd": float(cost) if cost is not None else None},
                     {"count": len(failed), "indexes": failed[:1000]})

    def _step_mark_failed(self, message: StepMessage, job: dict[str, Any]) -> None:
        error = message.error or {}
        code = str(error.get("Error", "Job.Failed"))
        cause = str(error.get("Cause") or job.get("batch_failure_reason") or "no cause given")
        self._terminate_batch(job, f"Job failed: {code}")
        if is_terminal(job["status"]):
            # Cancelled (the workflow's stop raced its own failure path) or already failed: the record keeps that.
            logger.info("job.failed_after_final", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "status": job["status"]})
        else:
            try:
                self.store.transition(job["job_id"], job["status"], JobStatus.FAILED, error={"code": code, "message": cause[:2000]})
            except StaleJobState:  # cancelled (or moved on) since we read it: the workflow still ends failed
                logger.info("job.failed_after_final", extra={"trace_id": message.trace_id, "job_id": job["job_id"]})
                self._answer(message.task_token, {"status": "FAILED"})
                return
            logger.warning("job.failed", extra={"trace_id": message.trace_id, "job_id": job["job_id"], "code": code})
            metrics.add_metric(name="JobsFailed", unit="Count", value=1)
        self._answer(message.task_token, {"status": "FAILED"})

    def _meter(self, job: dict[str, Any], record_id: str, model: str, backend: str, kind: str, usage: Usage,
               cost: Decimal | None, trace_id: str, gpu_seconds: Decimal | None = None) -> None:
        self.services.meter.record(LedgerEntry(
            request_id=record_id, tenant=job["tenant"], model=model, backend=backend, kind=kind, usage=usage, cost_usd=cost,
            catalog_version=self.services.catalog.version, trace_id=trace_id or job["trace_id"], gpu_seconds=gpu_seconds,
            created_at=datetime.now(timezone.utc),
        ))

    # ---------- Batch job state change (EventBridge) ----------

    def on_batch_failure(self, detail: dict[str, Any]) -> str:
        """A Batch job FAILED: fail the waiting workflow step now rather than at its timeout."""
        name = str(detail.get("jobName", ""))
        if not name.startswith("crossover-job-"):
            return "ignored"
        job = self.store.get(name[len("crossover-"):])
        if job and detail.get("jobId"):  # its attempts cost GPU time whether or not the workflow still waits on it
            meter_gpu_attempts(self.services.meter.record, self.services.catalog, BatchAttempts(aws.client), job, str(detail["jobId"]),
                               self.settings.self_hosted_model, job.get("trace_id", ""), description=detail)
        if not job or job.get("batch_job_id") != detail.get("jobId") or not job.get("task_token"):
            return "ignored"  # an older attempt, or not ours
        reason = str(detail.get("statusReason") or "Batch job failed")
        try:
            # Kept on the record too: the failure step then has the reason even if the cause is lost on the way.
            self.store.update(job["job_id"], {"batch_failure_reason": reason[:2000]})
        except StaleJobState:
            return "ignored"  # the job is final already (cancelled, or its fallback finished): nobody waits
        # The instance went away (a spot reclaim, a host failure): the workflow resumes from the worker's
        # checkpoint once (CanResume), as for Worker.Interrupted; Batch itself never retries (one attempt).
        code = protocol.BATCH_HOST_TERMINATED if reason.startswith("Host EC2") else protocol.BATCH_JOB_FAILED
        self._answer(job["task_token"], error=(code, reason))
        logger.warning("job.batch_failed", extra={"trace_id": job["trace_id"], "job_id": job["job_id"], "reason": reason[:200]})
        return "failed"


Step = Callable[[JobService, StepMessage, dict[str, Any]], None]

# The workflow's steps, keyed by the action names in statemachines/long_job.asl.json (a test keeps them equal).
STEPS: dict[str, Step] = {
    "submit_batch": JobService._step_submit_batch,
    "record_result": JobService._step_record_result,
    "plan_fallback": JobService._step_plan_fallback,
    "fallback_chunk": JobService._step_fallback_chunk,
    "merge_fallback": JobService._step_merge_fallback,
    "mark_failed": JobService._step_mark_failed,
}
# Messages job_steps sends itself on the same queue (not in the state machine): the capacity watch.
OWN_STEPS: dict[str, Step] = {"watch_batch": JobService._step_watch_batch}


def job_service(services: Services) -> JobService:
    return JobService(services, JobStore(services.settings.jobs_table))

