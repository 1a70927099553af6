"""The jobs table: one item per job, the source of truth for GET /v1/jobs/{id}.

Status changes go through `transition` only, checked against chalicelib/jobs/lifecycle.py's table;
`update` sets other fields and never the status. Both refuse loudly (`StaleJobState`) when the stored
job is not where the caller thought it was.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from .. import aws
from ..dynamo import from_item, to_item, to_value
from .lifecycle import ACTIVE, JobStatus, StaleJobState, as_states, check_transition


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class JobStore:
    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self._table = table_name
        self._dynamodb = dynamodb

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def create(self, item: dict[str, Any]) -> bool:
        """Create the job; False if that job id exists already (an idempotent resubmission)."""
        from botocore.exceptions import ClientError

        try:
            self._client().put_item(TableName=self._table, Item=to_item({**item, "status": str(JobStatus(item["status"]))}),
                                    ConditionExpression="attribute_not_exists(job_id)")
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get(self, job_id: str) -> dict[str, Any] | None:
        item = self._client().get_item(TableName=self._table, Key={"job_id": {"S": job_id}}, ConsistentRead=True).get("Item")
        return from_item(item) if item else None

    def transition(self, job_id: str, from_: JobStatus | str | Iterable[JobStatus | str], to: JobStatus | str, **fields: Any) -> None:
        """Move the job from one of `from_` to `to`, setting `fields` in the same write.

        IllegalTransition (before any write) if the table forbids it; StaleJobState if the stored
        status is not one of `from_` (or the job does not exist)."""
        starts = check_transition(job_id, as_states(from_), JobStatus(to))
        self._write(job_id, {**fields, "status": str(JobStatus(to))}, starts, None)

    def update(self, job_id: str, fields: dict[str, Any], when: JobStatus | str | Iterable[JobStatus | str] = ACTIVE,
               expect: dict[str, Any] | None = None) -> None:
        """Set fields other than the status while the job is in one of `when` (by default: not final) and,
        with `expect`, only while those fields hold those values (absent counts as 0); StaleJobState otherwise."""
        if "status" in fields:
            raise ValueError("status changes go through JobStore.transition")
        self._write(job_id, fields, as_states(when), expect)

    def _write(self, job_id: str, fields: dict[str, Any], states: frozenset[JobStatus], expect: dict[str, Any] | None) -> None:
        from botocore.exceptions import ClientError

        fields = {**fields, "updated_at": now_iso()}
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":v{i}": to_value(value) for i, value in enumerate(fields.values())}
        ordered = sorted(states)
        request: dict[str, Any] = {
            "TableName": self._table, "Key": {"job_id": {"S": job_id}},
            "UpdateExpression": "SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(fields))),
            "ExpressionAttributeNames": {**names, "#status": "status"},
            "ExpressionAttributeValues": {**values, **{f":s{i}": {"S": str(status)} for i, status in enumerate(ordered)}},
            "ConditionExpression": "attribute_exists(job_id) AND #status IN (" + ", ".join(f":s{i}" for i in range(len(ordered))) + ")",
        }
        for i, (name, value) in enumerate((expect or {}).items()):
            request["ConditionExpression"] += f" AND (#e{i} = :e{i}" + (f" OR attribute_not_exists(#e{i}))" if value == 0 else ")")
            request["ExpressionAttributeNames"][f"#e{i}"] = name
            request["ExpressionAttributeValues"][f":e{i}"] = to_value(value)
        try:
            self._client().update_item(**request)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                wanted = "/".join(str(status) for status in ordered) + (f" with {sorted(expect)}" if expect else "")
                raise StaleJobState(job_id, wanted) from None
            raise
