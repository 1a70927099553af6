"""Conversation history per tenant, behind `ConversationStore`: DynamoDB in AWS, a dict in tests.

DynamoDB layout (one table, SSE-KMS, TTL on `expires_at`): partition key `tenant`, sort key `sk`:
- `conv#<id>`             the conversation: system prompt, declared tools, totals, pending client calls
- `conv#<id>#turn#<seq>`  one request's turn: the Converse messages it added, usage, cost

The tenant is the partition key, so another tenant's conversation id simply is not found (404).
Each write refreshes the conversation's `expires_at`; turns keep theirs from when they were written.
Appending a turn is one transaction conditioned on the turn count, so two concurrent requests
on one conversation cannot interleave their turns (the loser gets a 409).
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from ..errors import CrossoverError
from ..core import Usage
from ..table import ConditionFailed, IncompleteBatch, InMemoryTable, Put, Table, TransactionConflict, attr, open_table, transact


class ConversationConflict(CrossoverError):
    status, code = 409, "conversation_conflict"


@dataclass(frozen=True)
class Turn:
    seq: int
    messages: list[dict[str, Any]]  # Converse messages this turn added (its user message first)
    usage: Usage
    cost_usd: Decimal | None
    stop_reason: str
    model: str
    request_id: str
    created_at: str


@dataclass(frozen=True)
class Conversation:
    tenant: str
    conversation_id: str
    created_at: str
    updated_at: str
    expires_at: int
    system: str | None = None
    tools: list[Any] | None = None  # the request's `tools` as declared (names and client tool bodies)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: Decimal = Decimal(0)
    unpriced_turns: int = 0
    # Client tool calls waiting for results: {"tool_uses": [...], "settled": [...], "steps": n, "cost_usd": "..."}.
    pending: dict[str, Any] | None = None
    # The screening stamp (ScreeningService.stamp) the stored history was screened under; None: before stamps existed.
    screened_as: str | None = None

    def total_cost(self) -> Decimal | None:
        return None if self.unpriced_turns else self.cost_usd

    def after(self, turn: Turn, updated_at: str, expires_at: int, pending: dict[str, Any] | None,
              system: str | None, tools: list[Any] | None, screened_as: str | None = None) -> "Conversation":
        return replace(self, turns=turn.seq, usage=self.usage + turn.usage, cost_usd=self.cost_usd + (turn.cost_usd or Decimal(0)),
                       unpriced_turns=self.unpriced_turns + (turn.cost_usd is None), updated_at=updated_at, expires_at=expires_at,
                       pending=pending, system=system, tools=tools, screened_as=screened_as)


def new_conversation_id() -> str:
    return f"conv-{uuid.uuid4().hex}"


KEYS = ("tenant", "sk")


def _meta_key(tenant: str, conversation_id: str) -> dict[str, str]:
    return {"tenant": tenant, "sk": f"conv#{conversation_id}"}


def _turn_sk(conversation_id: str, seq: int) -> str:
    return f"conv#{conversation_id}#turn#{seq:06d}"


def _meta_item(c: Conversation) -> dict[str, Any]:
    return {
        **_meta_key(c.tenant, c.conversation_id), "conversation_id": c.conversation_id,
        "created_at": c.created_at, "updated_at": c.updated_at, "expires_at": c.expires_at,
        "turns": c.turns, "input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens,
        "cache_read_tokens": c.usage.cache_read_tokens, "cache_write_tokens": c.usage.cache_write_tokens,
        "cost_usd": c.cost_usd, "unpriced_turns": c.unpriced_turns,
        "tools": json.dumps(c.tools), "pending": json.dumps(c.pending), "system": c.system,  # None: left out
        "screened_as": c.screened_as,  # None: left out
    }


def _conversation(item: dict[str, Any]) -> Conversation:
    return Conversation(
        tenant=item["tenant"], conversation_id=item["conversation_id"], created_at=item["created_at"], updated_at=item["updated_at"],
        expires_at=int(item["expires_at"]), system=item.get("system"), tools=json.loads(item["tools"]), turns=int(item["turns"]),
        usage=Usage(input_tokens=int(item["input_tokens"]), output_tokens=int(item["output_tokens"]),
                    cache_read_tokens=int(item["cache_read_tokens"]), cache_write_tokens=int(item["cache_write_tokens"])),
        cost_usd=item["cost_usd"], unpriced_turns=int(item["unpriced_turns"]), pending=json.loads(item["pending"]),
        screened_as=item.get("screened_as"),
    )


def _turn_item(tenant: str, conversation_id: str, turn: Turn, expires_at: int) -> dict[str, Any]:
    return {"tenant": tenant, "sk": _turn_sk(conversation_id, turn.seq), "seq": turn.seq, "messages": json.dumps(turn.messages),
            "usage": turn.usage.model_dump_json(), "stop_reason": turn.stop_reason, "model": turn.model,
            "request_id": turn.request_id, "created_at": turn.created_at, "expires_at": expires_at,
            "cost_usd": turn.cost_usd}  # None (unpriced): left out


def _turn(item: dict[str, Any]) -> Turn:
    return Turn(seq=int(item["seq"]), messages=json.loads(item["messages"]), usage=Usage.model_validate_json(item["usage"]),
                cost_usd=item.get("cost_usd"), stop_reason=item["stop_reason"], model=item["model"],
                request_id=item["request_id"], created_at=item["created_at"])


class ConversationStore:
    """Conversations on their table: DynamoDB by name, or a Table (InMemoryConversationStore's twin).

    Messages and tool declarations are stored as JSON strings: exact round trips, no float/Decimal games."""

    def __init__(self, table_name: "str | Table", dynamodb: Any | None = None) -> None:
        self._table = open_table(table_name, KEYS, dynamodb)

    def create(self, conversation: Conversation) -> None:
        self._table.put_new(_meta_item(conversation))

    def get(self, tenant: str, conversation_id: str) -> Conversation | None:
        item = self._table.get(_meta_key(tenant, conversation_id))
        return _conversation(item) if item else None

    def turns(self, tenant: str, conversation_id: str) -> list[Turn]:
        return [_turn(item) for item in self._table.query(tenant, prefix=f"conv#{conversation_id}#turn#", consistent=True)]

    def append(self, before: Conversation, after: Conversation, turn: Turn) -> None:
        """Store `turn` and the conversation's new state, unless another turn was stored since `before`."""
        try:
            transact([Put(self._table, _turn_item(before.tenant, before.conversation_id, turn, after.expires_at), attr("sk").not_exists()),
                      Put(self._table, _meta_item(after), attr("turns").eq(before.turns))])
        except (ConditionFailed, TransactionConflict) as exc:
            raise ConversationConflict("The conversation changed (or was deleted) while this turn ran; retry on the latest state.",
                                       {"conversation_id": before.conversation_id}) from exc

    def delete(self, tenant: str, conversation_id: str) -> bool:
        """Erase the conversation and every turn (with the tool results inside them)."""
        meta = f"conv#{conversation_id}"
        keys = [{"tenant": item["tenant"], "sk": item["sk"]}
                for item in self._table.query(tenant, prefix=meta, consistent=True, attributes=KEYS)
                if item["sk"] == meta or item["sk"].startswith(meta + "#")]
        try:
            self._table.delete_many(keys)
        except IncompleteBatch as exc:
            raise ConversationConflict("Could not erase every turn; retry the delete.", {"conversation_id": conversation_id}) from exc
        return bool(keys)


# The name services.py builds the store by (it is the one implementation, on DynamoDB by table name).
DynamoConversationStore = ConversationStore


class InMemoryConversationStore(ConversationStore):
    """The same store on the table's in-memory twin (unit tests)."""

    def __init__(self) -> None:
        super().__init__(InMemoryTable("conversations", KEYS))
