"""Recommendation decisions with their inputs (the audit trail behind every switch)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..table import Table, open_table

if TYPE_CHECKING:  # the recommendation (and break-even) code loads when a decision is read, not with the store
    from .recommendation import Assessment, DecisionState


class DecisionStore:
    """`table_name`: the decisions table's name, or a Table (an InMemoryTable twin in unit tests)."""

    def __init__(self, table_name: "str | Table", dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, ("scope", "day"), dynamodb)

    def latest(self, scope: str = "global") -> DecisionState:
        from .recommendation import DecisionState

        items = self._table.query(scope, descending=True, limit=1)
        if not items:
            return DecisionState()
        state = json.loads(items[0]["state"])
        return DecisionState(state["current"], state.get("pending"), int(state.get("pending_days", 0)), tuple(state.get("history", ())))

    def save(self, scope: str, day: str, state: DecisionState, assessment: Assessment, inputs: dict[str, Any]) -> None:
        """One item per scope and day; rerunning the same day overwrites it (idempotent)."""
        self._table.put({
            "scope": scope, "day": day, "state": json.dumps(state.to_dict()),
            "assessment": json.dumps({"decision": assessment.decision, "reasons": list(assessment.reasons), "numbers": assessment.numbers}),
            "inputs": json.dumps(inputs, default=str),
        })
