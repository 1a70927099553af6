"""Event triggers: S3 uploads and SQS messages start invocations and jobs, exactly once, visibly.

- S3: an object under `incoming/<tenant>/jobs/...` (JSONL of {"prompt"}) becomes a job; under
  `incoming/<tenant>/invoke/...` (one InvokeRequest JSON) an invocation. Object metadata
  `crossover-kind: job|invoke` overrides the folder. Idempotent on bucket + key + version (or ETag).
- SQS: each message body is a `RequestMessage` (an invoke or job request for a tenant).
Every outcome (accepted, done, rejected with a reason, failed with an error) is written to the
events table; results and status objects land under `results/<tenant>/events/`.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from . import aws, safe_json, storage
from .basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)
from .dynamo import plain
from .api_schemas import MAX_OBJECT_BYTES, InvokeRequest
from .auth import Tenant
from .errors import CrossoverError, ModelTimeout, ModelUnavailable, PromptRejected, Throttled, ValidationFailed
from .idempotency import run_once, stable_request_id
from .jobs.models import JobInput, JobRequest
from .observability import logger, metrics
from .services import Services
from .table import Table, open_table
from .timing import Deadline

Kind = Literal["job", "invoke"]
TRANSIENT = (Throttled, ModelUnavailable, ModelTimeout)  # retry these; everything else is an outcome
OUTCOME_TTL = timedelta(days=30)


class RequestMessage(BaseModel):
    """An SQS request. Producers are trusted by the queue's IAM policy to name the tenant."""

    model_config = ConfigDict(extra="forbid")

    type: Kind
    tenant: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    request: dict[str, Any]
    reply_to: str | None = Field(default=None, description="SQS queue URL for the reply; default: an S3 object")


class S3Bucket(BaseModel):
    name: str = Field(min_length=1)


class S3Object(BaseModel):
    key: str = Field(min_length=1)
    versionId: str | None = None
    eTag: str | None = None


class S3Entity(BaseModel):
    bucket: S3Bucket
    object: S3Object


class S3Record(BaseModel):
    s3: S3Entity


class S3Notification(BaseModel):
    """The part of an S3 event notification we read (other fields ignored); s3:TestEvent has no Records."""

    Records: list[S3Record] = Field(default_factory=list)


class EventOutcomes:
    """`table`: the events table's name, or a Table (an InMemoryTable twin in unit tests)."""

    def __init__(self, table: "str | Table") -> None:
        self._table = open_table(table, ("event_id",))

    def record(self, event_id: str, **fields: Any) -> None:
        self._table.put({"event_id": event_id, "at": datetime.now(timezone.utc).isoformat(),
                         "expires_at": int((datetime.now(timezone.utc) + OUTCOME_TTL).timestamp()), **fields})

    def get(self, event_id: str) -> dict[str, Any] | None:
        item = self._table.get({"event_id": event_id}, consistent=False)
        return plain(item) if item else None


def event_tenant(name: str) -> Tenant:
    return Tenant(tenant=name, roles=("invoke",), key_hash="event")


def parse_incoming_key(key: str, prefix: str) -> tuple[str, str | None] | None:
    """`incoming/<tenant>/<jobs|invoke>/...` -> (tenant, kind or None); None when the key is not ours."""
    if not key.startswith(prefix):
        return None
    parts = key[len(prefix):].split("/")
    if len(parts) < 2 or not parts[0] or ".." in parts:
        return None
    kind = {"jobs": "job", "job": "job", "invoke": "invoke"}.get(parts[1]) if len(parts) > 2 else None
    return parts[0], kind


class EventProcessor:
    def __init__(self, services: Services, deadline: Deadline | None = None) -> None:
        from .jobs.service import job_service

        self.services = services
        self.deadline = deadline  # the invocation's (chalicelib/timing.py): an invoke stops there, metered
        self.outcomes = EventOutcomes(services.settings.events.table)
        self.jobs = job_service(services)

    # ---------- S3 ----------

    def object_created(self, bucket: str, key: str, version: str | None, etag: str | None, trace_id: str) -> str:
        settings = self.services.settings
        identity = f"{bucket}/{key}#{version or etag or ''}"
        event_id = "s3-" + hashlib.sha256(identity.encode()).hexdigest()[:24]
        source = f"s3://{bucket}/{key}"
        parsed = parse_incoming_key(key, settings.storage.incoming_prefix)
        if parsed is None:
            return self._reject(event_id, source, None, "bad_key", f"key must look like {settings.storage.incoming_prefix}<tenant>/<jobs|invoke>/<name>")
        tenant_name, kind = parsed
        if not self.services.tenants.exists(tenant_name):
            return self._reject(event_id, source, None, "unknown_tenant", f"tenant {tenant_name!r} does not exist")
        s3 = aws.client("s3")
        try:
            head = s3.head_object(Bucket=bucket, Key=key, **({"VersionId": version} if version else {}))
            kind = head.get("Metadata", {}).get("crossover-kind") or kind
            if kind not in ("job", "invoke"):
                return self._reject(event_id, source, tenant_name, "unknown_kind", "put the object under jobs/ or invoke/, or set metadata crossover-kind")
            text = storage.get_text(bucket, key, MAX_OBJECT_BYTES)
        except (ValueError, UnicodeDecodeError) as exc:
            return self._reject(event_id, source, tenant_name, "unreadable_object", str(exc)[:300])
        except Exception as exc:
            code = aws.error_code(exc)
            if code in ("NoSuchKey", "404", "403", "AccessDenied", "NoSuchVersion"):
                return self._reject(event_id, source, tenant_name, "unreadable_object", f"S3 said {code}")
            raise
        tenant = event_tenant(tenant_name)
        return self._run(event_id, source, tenant, kind, text, trace_id, scope=f"s3#{tenant_name}")

    def s3_notification(self, body: str, message_id: str, trace_id: str) -> list[str]:
        """An S3 notification delivered through SQS; raises for a poison body (recorded, then dead-lettered)."""
        from urllib.parse import unquote_plus

        try:
            notification = S3Notification.model_validate(safe_json.loads_object(body, "Notification"))
        except (ValidationFailed, ValidationError) as exc:
            error = exc.message if isinstance(exc, ValidationFailed) else f"{exc.error_count()} validation error(s) in the S3 notification"
            self.outcomes.record("sqs-" + message_id, source="s3-notification", status="failed", reason="invalid_notification", error=error)
            raise
        return [self.object_created(record.s3.bucket.name, unquote_plus(record.s3.object.key), record.s3.object.versionId,
                                    record.s3.object.eTag, trace_id) for record in notification.Records]

    # ---------- SQS ----------

    def request_message(self, body: str, message_id: str, dedup_id: str | None, trace_id: str) -> str:
        """Process one request; raises for poison messages (they fail alone, then go to the DLQ)."""
        event_id = "sqs-" + (dedup_id or message_id)
        try:
            message = RequestMessage.model_validate(safe_json.loads_object(body, "Message"))
        except ValidationFailed as exc:
            self.outcomes.record(event_id, source="sqs", status="failed", reason="invalid_message", error=exc.message)
            raise
        except ValidationError as exc:
            self.outcomes.record(event_id, source="sqs", status="failed", reason="invalid_message",
                                 error=f"{exc.error_count()} validation error(s): " + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]))
            raise
        if not self.services.tenants.exists(message.tenant):
            self.outcomes.record(event_id, source="sqs", tenant=message.tenant, status="failed", reason="unknown_tenant",
                                 error=f"tenant {message.tenant!r} does not exist")
            raise LookupError(f"unknown tenant {message.tenant!r}")
        text = json.dumps(message.request)
        return self._run(event_id, "sqs", event_tenant(message.tenant), message.type, text, trace_id,
                         scope=f"sqs#{message.tenant}", reply_to=message.reply_to)

    # ---------- shared ----------

    def _run(self, event_id: str, source: str, tenant: Tenant, kind: str, text: str, trace_id: str, scope: str,
             reply_to: str | None = None) -> str:
        settings = self.services.settings

        def work() -> dict[str, Any]:
            try:
                if kind == "job":
                    # An uploaded object is JSONL prompts; a queued message carries a JobRequest.
                    job = (JobRequest(input=JobInput(prompts=_job_prompts(text))) if source.startswith("s3://")
                           else JobRequest.model_validate_json(text))
                    self._screen_system(job.system, tenant, trace_id)
                    accepted = self.jobs.submit(tenant, job, trace_id, idempotency_key=event_id, source=source.split(":")[0])
                    return {"status": "accepted", "job_id": accepted["job_id"]}
                from .invoke import invoke
                from .registry.toolbox import with_tenant_tools

                request = InvokeRequest.model_validate(safe_json.loads_object(text, "Object"))
                self._screen_system(request.system, tenant, trace_id)
                services = with_tenant_tools(self.services, tenant, request.tools, trace_id)
                answer = invoke(services, tenant, request, trace_id, stable_request_id(scope, event_id), deadline=self.deadline)
                return {"status": "done", "answer": answer}
            except PromptRejected as exc:
                return {"status": "rejected", "reason": "prompt_rejected", "reasons": exc.details.get("reasons", [])}
            except TRANSIENT:
                raise  # retried by SQS, then dead-lettered
            except (ValidationError, ValueError) as exc:
                return {"status": "rejected", "reason": "invalid_request", "error": str(exc)[:500]}
            except CrossoverError as exc:
                return {"status": "rejected", "reason": exc.code, "error": exc.message}

        outcome = run_once(settings.idempotency.table, settings.idempotency.ttl_s, scope, event_id, {"source": source, "body": text}, work)
        status_doc = {"event_id": event_id, "source": source, "kind": kind, "trace_id": trace_id, **outcome}
        self.outcomes.record(event_id, source=source, tenant=tenant.tenant, status=outcome["status"], reason=outcome.get("reason"),
                             error=outcome.get("error"), job_id=outcome.get("job_id"))
        self._reply(tenant.tenant, event_id, status_doc, reply_to)
        logger.info("event.processed", extra={"trace_id": trace_id, "tenant": tenant.tenant, "event_id": event_id, "kind": kind,
                                              "status": outcome["status"], "reason": outcome.get("reason")})
        metrics.add_metric(name=f"Events{outcome['status'].capitalize()}", unit="Count", value=1)
        return outcome["status"]

    def _screen_system(self, system: str | None, tenant: Tenant, trace_id: str) -> None:
        """An event's system prompt is screened as a user prompt (the stricter gate), before invoke or submit
        screen it as a system prompt: its author proved bucket or queue write access, not the tenant's API key."""
        if system:
            self.services.screening.require_allowed(system, tenant.tenant, trace_id, "event.system")

    def _reply(self, tenant: str, event_id: str, document: dict[str, Any], reply_to: str | None) -> None:
        if reply_to:
            attributes = {"MessageGroupId": tenant, "MessageDeduplicationId": event_id} if reply_to.endswith(".fifo") else {}
            aws.client("sqs").send_message(QueueUrl=reply_to, MessageBody=json.dumps(document, default=str), **attributes)
            return
        key = storage.tenant_key("results", tenant, "events", f"{event_id}.json")
        storage.put_text(self.services.settings.storage.data_bucket, key, json.dumps(document, default=str), self.services.settings.storage.kms_key_id,
                         tenant, "application/json")

    def _reject(self, event_id: str, source: str, tenant: str | None, reason: str, detail: str) -> str:
        self.outcomes.record(event_id, source=source, tenant=tenant, status="rejected", reason=reason, error=detail)
        if tenant:
            self._reply(tenant, event_id, {"event_id": event_id, "source": source, "status": "rejected", "reason": reason, "error": detail}, None)
        logger.warning("event.rejected", extra={"event_id": event_id, "tenant": tenant, "reason": reason})
        metrics.add_metric(name="EventsRejected", unit="Count", value=1)
        return "rejected"


def _job_prompts(text: str) -> list[str]:
    from .jobs.service import read_prompts

    return read_prompts(text)
