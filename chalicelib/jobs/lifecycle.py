"""A job's states and which may follow which: the one place that says so.

    QUEUED ──> RUNNING ──> SUCCEEDED | FAILED | CANCELLED
       │          └──> RUNNING            (a resumed attempt after a spot interruption)
       └──> SUCCEEDED | FAILED | CANCELLED (the Bedrock fallback when the GPU job never started,
                                            a failure before submission, a cancel while queued)

SUCCEEDED, FAILED and CANCELLED are final. `JobStore.transition` refuses any other change before
it writes (`IllegalTransition`: a bug in our code), and refuses a change whose starting state is no
longer the stored one (`StaleJobState`: another actor got there first, e.g. a cancel racing a worker's
answer); each caller decides what that race means (chalicelib/jobs/service.py says per step).
"""
from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class JobStatus(str, Enum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    def __str__(self) -> str:  # logs and f-strings show "RUNNING", not "JobStatus.RUNNING"
        return self.value


_FINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})

TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.QUEUED: frozenset({JobStatus.RUNNING, *_FINAL}),
    JobStatus.RUNNING: frozenset({JobStatus.RUNNING, *_FINAL}),
    JobStatus.SUCCEEDED: frozenset(),
    JobStatus.FAILED: frozenset(),
    JobStatus.CANCELLED: frozenset(),
}

TERMINAL: frozenset[JobStatus] = frozenset(status for status, after in TRANSITIONS.items() if not after)
ACTIVE: frozenset[JobStatus] = frozenset(JobStatus) - TERMINAL


class IllegalTransition(ValueError):
    """The transition table forbids this change: a bug in the caller, refused before any write."""

    def __init__(self, job_id: str, from_: JobStatus, to: JobStatus) -> None:
        super().__init__(f"job {job_id}: {from_} -> {to} is not a legal transition")
        self.job_id, self.from_, self.to = job_id, from_, to


class StaleJobState(Exception):
    """The stored job is not (or no longer) in the state the change starts from, or a field the change
    expects has moved on: someone else changed it first. Callers decide what that race means."""

    def __init__(self, job_id: str, expected: str) -> None:
        super().__init__(f"job {job_id}: not {expected} any more (or missing)")
        self.job_id, self.expected = job_id, expected


def is_terminal(status: str | JobStatus) -> bool:
    return JobStatus(status) in TERMINAL


def check_transition(job_id: str, from_: Iterable[JobStatus], to: JobStatus) -> frozenset[JobStatus]:
    """The starting states as a set, each checked against the table (IllegalTransition otherwise)."""
    starts = frozenset(JobStatus(status) for status in from_)
    if not starts:
        raise ValueError("a transition needs at least one starting state")
    for start in sorted(starts):
        if JobStatus(to) not in TRANSITIONS[start]:
            raise IllegalTransition(job_id, start, JobStatus(to))
    return starts


def as_states(states: JobStatus | str | Iterable[JobStatus | str]) -> frozenset[JobStatus]:
    """One state or several, as a set (callers pass `job.status` or `ACTIVE`)."""
    if isinstance(states, (str, JobStatus)):
        return frozenset({JobStatus(states)})
    return frozenset(JobStatus(state) for state in states)
