"""The jobs table: one item per job, the source of truth for GET /v1/jobs/{id}."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .. import aws
from ..dynamo import from_item, to_item, to_value
from .models import TERMINAL


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
            self._client().put_item(TableName=self._table, Item=to_item(item),
                                    ConditionExpression="attribute_not_exists(job_id)")
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def get(self, job_id: str) -> dict[str, Any] | None:
        item = self._client().get_item(TableName=self._table, Key={"job_id": {"S": job_id}}, ConsistentRead=True).get("Item")
        return from_item(item) if item else None

    def update(self, job_id: str, fields: dict[str, Any], only_if_active: bool = True, expect: dict[str, Any] | None = None) -> bool:
        """Set fields; with only_if_active, a job already SUCCEEDED/FAILED/CANCELLED is left alone (False);
        with `expect`, only if those fields hold those values now (absent counts as 0), else False."""
        from botocore.exceptions import ClientError

        fields = {**fields, "updated_at": now_iso()}
        names = {f"#f{i}": name for i, name in enumerate(fields)}
        values = {f":v{i}": to_value(value) for i, value in enumerate(fields.values())}
        request: dict[str, Any] = {
            "TableName": self._table, "Key": {"job_id": {"S": job_id}},
            "UpdateExpression": "SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(fields))),
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
            "ConditionExpression": "attribute_exists(job_id)",
        }
        if only_if_active:
            request["ConditionExpression"] += " AND NOT #status IN (" + ", ".join(f":t{i}" for i in range(len(TERMINAL))) + ")"
            request["ExpressionAttributeNames"]["#status"] = "status"
            request["ExpressionAttributeValues"].update({f":t{i}": {"S": status} for i, status in enumerate(TERMINAL)})
        for i, (name, value) in enumerate((expect or {}).items()):
            request["ConditionExpression"] += f" AND (#e{i} = :e{i}" + (f" OR attribute_not_exists(#e{i}))" if value == 0 else ")")
            request["ExpressionAttributeNames"][f"#e{i}"] = name
            request["ExpressionAttributeValues"][f":e{i}"] = to_value(value)
        try:
            self._client().update_item(**request)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True
