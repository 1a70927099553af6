"""Model backends behind one interface (`ModelBackend`); provider quirks stay inside each adapter."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core import Usage


@dataclass
class ModelTurn:
    """One model response in Converse terms."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage
    latency_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return "".join(block.get("text", "") for block in self.content if "text" in block)

    def tool_uses(self) -> list[dict[str, Any]]:
        return [block["toolUse"] for block in self.content if "toolUse" in block]


class ModelBackend(Protocol):
    name: str

    def converse(
        self,
        model_id: str,
        messages: list[dict[str, Any]],
        system: str | None,
        tool_config: dict[str, Any] | None,
        max_tokens: int,
        timeout_s: float | None = None,  # the caller's time left: the call may not wait longer
        inference: dict[str, Any] | None = None,
    ) -> ModelTurn:
        """One model call. `inference` adds Converse inferenceConfig fields (temperature, topP, stopSequences)."""
        ...
