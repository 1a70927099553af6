"""Recommendation decisions with their inputs (the audit trail behind every switch)."""
from __future__ import annotations

import json
from typing import Any

from .. import aws
from .recommendation import Assessment, DecisionState


class DecisionStore:
    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self._table = table_name
        self._dynamodb = dynamodb

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def latest(self, scope: str = "global") -> DecisionState:
        items = self._client().query(TableName=self._table, KeyConditionExpression="#s = :scope",
                                     ExpressionAttributeNames={"#s": "scope"}, ExpressionAttributeValues={":scope": {"S": scope}},
                                     ScanIndexForward=False, Limit=1)["Items"]
        if not items:
            return DecisionState()
        state = json.loads(items[0]["state"]["S"])
        return DecisionState(state["current"], state.get("pending"), int(state.get("pending_days", 0)), tuple(state.get("history", ())))

    def save(self, scope: str, day: str, state: DecisionState, assessment: Assessment, inputs: dict[str, Any]) -> None:
        """One item per scope and day; rerunning the same day overwrites it (idempotent)."""
        self._client().put_item(TableName=self._table, Item={
            "scope": {"S": scope}, "day": {"S": day},
            "state": {"S": json.dumps(state.to_dict())},
            "assessment": {"S": json.dumps({"decision": assessment.decision, "reasons": list(assessment.reasons), "numbers": assessment.numbers})},
            "inputs": {"S": json.dumps(inputs, default=str)},
        })
