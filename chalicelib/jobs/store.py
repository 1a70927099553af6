"""The jobs table: one item per job, the source of truth for GET /v1/jobs/{id}.

Status changes go through `transition` only, checked against chalicelib/jobs/lifecycle.py's table;
`update` sets other fields and never the status. Both refuse loudly (`StaleJobState`) when the stored
job is not where the caller thought it was. `in_memory_job_store()` is the twin for unit tests (the
table facade's InMemoryTable, whose semantics tests/unit/test_table_contract.py keeps equal to DynamoDB's).
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from ..dynamo import plain
from ..table import ConditionFailed, InMemoryTable, Table, attr, open_table
from .lifecycle import ACTIVE, JobStatus, StaleJobState, as_states, check_transition
from .models import JOB_FIELDS, Job

_KEYS = ("job_id",)
States = JobStatus | str | Iterable[JobStatus | str]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class JobStore:
    def __init__(self, table: str | Table, dynamodb: Any | None = None) -> None:
        self._table = open_table(table, _KEYS, dynamodb)

    def create(self, job: Job) -> bool:
        """Create the job; False if that job id exists already (an idempotent resubmission)."""
        try:
            self._table.put_new(job.model_dump(mode="json", exclude_none=True))
        except ConditionFailed:
            return False
        return True

    def get(self, job_id: str) -> Job | None:
        item = self._table.get({"job_id": job_id})
        return Job.model_validate(plain(item)) if item else None

    def transition(self, job_id: str, from_: States, to: JobStatus | str, **fields: Any) -> None:
        """Move the job from one of `from_` to `to`, setting `fields` (Job's field names) in the same write.

        IllegalTransition (before any write) if the table forbids it; StaleJobState if the stored
        status is not one of `from_` (or the job does not exist)."""
        starts = check_transition(job_id, as_states(from_), JobStatus(to))
        self._write(job_id, {**fields, "status": JobStatus(to).value}, starts, None)

    def update(self, job_id: str, fields: dict[str, Any], when: States = ACTIVE, expect: dict[str, Any] | None = None) -> None:
        """Set fields other than the status while the job is in one of `when` (by default: not final) and,
        with `expect`, only while those fields hold those values (absent counts as 0); StaleJobState otherwise."""
        if "status" in fields:
            raise ValueError("status changes go through JobStore.transition")
        self._write(job_id, fields, as_states(when), expect)

    def _write(self, job_id: str, fields: dict[str, Any], states: frozenset[JobStatus], expect: dict[str, Any] | None) -> None:
        unknown = set(fields) - JOB_FIELDS
        if unknown:
            raise ValueError(f"not fields of a job: {sorted(unknown)}")
        condition = attr("job_id").exists() & attr("status").is_in(sorted(status.value for status in states))
        for name, value in (expect or {}).items():
            condition &= (attr(name).eq(value) | attr(name).not_exists()) if value == 0 else attr(name).eq(value)
        try:
            self._table.update_if({"job_id": job_id}, set={**fields, "updated_at": now_iso()}, condition=condition)
        except ConditionFailed:
            wanted = "/".join(sorted(status.value for status in states)) + (f" with {sorted(expect)} as expected" if expect else "")
            raise StaleJobState(job_id, wanted) from None


def in_memory_job_store() -> JobStore:
    """The twin: the same JobStore over an in-memory table (unit tests; milliseconds, no AWS)."""
    return JobStore(InMemoryTable("jobs", _KEYS))
