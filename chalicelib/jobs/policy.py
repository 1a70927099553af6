"""Small decisions of the long-job path, as pure functions over plain data."""
from __future__ import annotations

from typing import Literal

# Batch statuses before the container runs: scheduling, instance launch, image pull. Nobody but
# job_steps heartbeats the task token in these; they count against the capacity timeout instead.
QUEUED_STATUSES = frozenset({"SUBMITTED", "PENDING", "RUNNABLE", "STARTING"})


def watch_action(batch_status: str | None, queued_for_s: float, capacity_timeout_s: int) -> Literal["heartbeat", "give_up", "stop"]:
    """What the capacity watch does with a Batch job: keep its task alive while it waits for a GPU,
    give up when it waited too long (the workflow falls back), or stop watching once it runs (the
    worker heartbeats then) or is gone (the Batch FAILED event or the heartbeat timeout takes over)."""
    if batch_status not in QUEUED_STATUSES:
        return "stop"
    return "give_up" if queued_for_s >= capacity_timeout_s else "heartbeat"


def job_outcome(items: int, failed: int, max_failed_fraction: float) -> Literal["SUCCEEDED", "FAILED"]:
    """A job with failed items fails when they are more than `max_failed_fraction` of its items
    (JOB_MAX_FAILED_FRACTION, default 0: any failed item fails the job; its result stays readable)."""
    if failed <= 0:
        return "SUCCEEDED"
    return "FAILED" if failed > max_failed_fraction * max(items, 1) else "SUCCEEDED"
