"""What a GPU job cost: instance-seconds of every Batch attempt x that instance's price.

Every attempt is paid for, the ones that died too (spot reclaim, crash, model server down), from
container start to stop, model load included. Each attempt becomes one ledger entry whose request
id names the Batch job and the attempt, so metering it again (a retried step, a replayed event)
writes nothing twice. Spot attempts are priced at the catalog's spot price, on-demand ones at the
on-demand price; an attempt whose capacity cannot be established is priced on-demand (never
under-reported), and one whose instance type is unknown to the catalog is unpriced, never $0.

`attempts_from_batch` and `attempt_cost` are pure; `BatchAttempts` reads Batch, ECS and EC2 at the edge.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable, Protocol

from ..observability import logger
from ..core import Usage
from .catalog import PriceCatalog
from .ledger import LedgerEntry
from .pricing import Capacity, price_gpu_seconds


@dataclass(frozen=True)
class GpuAttempt:
    index: int  # Batch's attempt order, 0-based
    seconds: Decimal  # container start to stop (model load included)
    instance_type: str | None
    capacity: Capacity | None  # None: unknown, priced on-demand
    usage: Usage = field(default_factory=Usage)
    reason: str = ""


@dataclass(frozen=True)
class FinalAttempt:
    """The attempt that succeeded, as the worker reports it (its container may still be running)."""

    seconds: Decimal
    instance_type: str
    usage: Usage


InstanceOf = Callable[[str], tuple[str | None, Capacity | None]]  # container instance ARN -> (type, capacity)


def attempt_cost(attempt: GpuAttempt, catalog: PriceCatalog) -> Decimal | None:
    """The attempt at its instance's catalog price (`pricing.price_gpu_seconds`); None when unpriced."""
    return price_gpu_seconds(attempt.seconds, catalog.gpu_instances.get(attempt.instance_type or ""), attempt.capacity)


def _seconds(started_ms: Any, stopped_ms: Any) -> Decimal:
    return max(Decimal(0), (Decimal(int(stopped_ms)) - Decimal(int(started_ms))) / 1000)


def attempts_from_batch(description: dict[str, Any], instance_of: InstanceOf) -> list[GpuAttempt]:
    """The finished attempts of a Batch job (describe_jobs item, or a "Batch Job State Change" event detail)."""
    attempts = []
    for index, raw in enumerate(description.get("attempts") or []):
        if not raw.get("startedAt") or not raw.get("stoppedAt"):
            continue  # never started (no instance-time), or still running
        arn = (raw.get("container") or {}).get("containerInstanceArn") or ""
        instance_type, capacity = instance_of(arn) if arn else (None, None)
        attempts.append(GpuAttempt(index, _seconds(raw["startedAt"], raw["stoppedAt"]), instance_type, capacity,
                                   reason=str(raw.get("statusReason") or "")[:200]))
    return attempts


def with_final(attempts: list[GpuAttempt], description: dict[str, Any], final: FinalAttempt, instance_of: InstanceOf) -> list[GpuAttempt]:
    """Attach the worker's report to the attempt that succeeded: the last finished one when Batch already
    shows the job done, else the running one (timed by the worker, from its start)."""
    total = len(description.get("attempts") or [])
    if description.get("status") == "SUCCEEDED" and attempts and attempts[-1].index == total - 1:
        last = attempts[-1]
        return attempts[:-1] + [replace(last, usage=final.usage, instance_type=last.instance_type or final.instance_type)]
    arn = (description.get("container") or {}).get("containerInstanceArn") or ""
    instance_type, capacity = instance_of(arn) if arn else (None, None)
    running = GpuAttempt(total, final.seconds, instance_type or final.instance_type, capacity, final.usage)
    return attempts + [running]


class AttemptSource(Protocol):
    def describe(self, batch_job_id: str) -> dict[str, Any] | None: ...
    def instance_of(self, container_instance_arn: str) -> tuple[str | None, Capacity | None]: ...


class BatchAttempts:
    """Batch attempts with each one's instance type (ECS container instance) and capacity (EC2 lifecycle)."""

    def __init__(self, clients: Callable[[str], Any]) -> None:
        self._client = clients
        self._instances: dict[str, tuple[str | None, Capacity | None]] = {}

    def describe(self, batch_job_id: str) -> dict[str, Any] | None:
        jobs = self._client("batch").describe_jobs(jobs=[batch_job_id]).get("jobs") or []
        return jobs[0] if jobs else None

    def instance_of(self, container_instance_arn: str) -> tuple[str | None, Capacity | None]:
        if container_instance_arn in self._instances:
            return self._instances[container_instance_arn]
        # arn:aws:ecs:<region>:<account>:container-instance/<cluster>/<id>
        resource = container_instance_arn.split(":", 5)[-1]
        parts = resource.split("/")
        cluster = parts[1] if len(parts) == 3 else "default"
        found = self._client("ecs").describe_container_instances(cluster=cluster, containerInstances=[container_instance_arn])
        instances = found.get("containerInstances") or []
        if not instances:
            return None, None
        ci = instances[0]
        instance_type = next((a.get("value") for a in ci.get("attributes", []) if a.get("name") == "ecs.instance-type"), None)
        capacity: Capacity | None = None
        if ci.get("ec2InstanceId"):
            reservations = self._client("ec2").describe_instances(InstanceIds=[ci["ec2InstanceId"]]).get("Reservations") or []
            for instance in (i for r in reservations for i in r.get("Instances", [])):
                capacity = "spot" if instance.get("InstanceLifecycle") == "spot" else "on_demand"
                instance_type = instance_type or instance.get("InstanceType")
        self._instances[container_instance_arn] = (instance_type, capacity)
        return instance_type, capacity


def gpu_entries(job: dict[str, Any], batch_job_id: str, attempts: list[GpuAttempt], catalog: PriceCatalog, model: str,
                trace_id: str, now: datetime | None = None) -> list[LedgerEntry]:
    """One ledger entry per attempt; the request id (job, Batch job, attempt) makes recording idempotent."""
    entries = []
    for attempt in attempts:
        instance = catalog.gpu_instances.get(attempt.instance_type or "")
        entries.append(LedgerEntry(
            request_id=f"{job['job_id']}#gpu#{batch_job_id}#{attempt.index}", tenant=job["tenant"], model=model,
            backend="self_hosted", kind="job", usage=attempt.usage, cost_usd=attempt_cost(attempt, catalog),
            catalog_version=catalog.version, trace_id=trace_id or job.get("trace_id", ""),
            gpu_seconds=attempt.seconds * (instance.gpus if instance else 1), capacity=attempt.capacity,
            instance_seconds=attempt.seconds, created_at=now or datetime.now(timezone.utc)))
    return entries


def meter_gpu_attempts(record: Callable[[LedgerEntry], Any], catalog: PriceCatalog, source: AttemptSource, job: dict[str, Any],
                       batch_job_id: str, model: str, trace_id: str, final: FinalAttempt | None = None,
                       description: dict[str, Any] | None = None) -> Decimal | None:
    """Record every attempt of `batch_job_id` once; the total cost (None when any attempt is unpriced).

    `description`: a describe_jobs item or Batch event detail already at hand (else Batch is asked).
    Without Batch's view (the local stack, an API error) the worker's own report prices the final attempt.
    """
    try:
        description = description or source.describe(batch_job_id) or {}
        attempts = attempts_from_batch(description, source.instance_of)
        if final is not None:
            attempts = with_final(attempts, description, final, source.instance_of)
    except Exception as exc:  # metering must not fail the job: fall back to what the worker measured
        logger.warning("meter.gpu_attempts_unavailable", extra={"job_id": job.get("job_id"), "error": exc.__class__.__name__})
        attempts = [GpuAttempt(0, final.seconds, final.instance_type, None, final.usage)] if final else []
    entries = gpu_entries(job, batch_job_id, attempts, catalog, model, trace_id)
    for entry in entries:
        record(entry)
    costs = [entry.cost_usd for entry in entries]
    return None if any(cost is None for cost in costs) else sum(costs, Decimal(0))
