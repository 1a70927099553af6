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
import threading
import uuid
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Protocol

from .. import aws
from ..errors import CrossoverError
from ..core import Usage


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

    def total_cost(self) -> Decimal | None:
        return None if self.unpriced_turns else self.cost_usd

    def after(self, turn: Turn, updated_at: str, expires_at: int, pending: dict[str, Any] | None,
              system: str | None, tools: list[Any] | None) -> "Conversation":
        return replace(self, turns=turn.seq, usage=self.usage + turn.usage, cost_usd=self.cost_usd + (turn.cost_usd or Decimal(0)),
                       unpriced_turns=self.unpriced_turns + (turn.cost_usd is None), updated_at=updated_at, expires_at=expires_at,
                       pending=pending, system=system, tools=tools)


def new_conversation_id() -> str:
    return f"conv-{uuid.uuid4().hex}"


class ConversationStore(Protocol):
    def create(self, conversation: Conversation) -> None: ...

    def get(self, tenant: str, conversation_id: str) -> Conversation | None: ...

    def turns(self, tenant: str, conversation_id: str) -> list[Turn]: ...

    def append(self, before: Conversation, after: Conversation, turn: Turn) -> None:
        """Store `turn` and the conversation's new state, unless another turn was stored since `before`."""
        ...

    def delete(self, tenant: str, conversation_id: str) -> bool: ...


class InMemoryConversationStore:
    def __init__(self) -> None:
        self._conversations: dict[tuple[str, str], Conversation] = {}
        self._turns: dict[tuple[str, str], list[Turn]] = {}
        self._lock = threading.Lock()

    def create(self, conversation: Conversation) -> None:
        with self._lock:
            self._conversations[(conversation.tenant, conversation.conversation_id)] = conversation
            self._turns[(conversation.tenant, conversation.conversation_id)] = []

    def get(self, tenant: str, conversation_id: str) -> Conversation | None:
        return self._conversations.get((tenant, conversation_id))

    def turns(self, tenant: str, conversation_id: str) -> list[Turn]:
        return list(self._turns.get((tenant, conversation_id), []))

    def append(self, before: Conversation, after: Conversation, turn: Turn) -> None:
        key = (before.tenant, before.conversation_id)
        with self._lock:
            current = self._conversations.get(key)
            if current is None or current.turns != before.turns:
                raise ConversationConflict("The conversation changed while this turn ran; retry on the latest state.",
                                           {"conversation_id": before.conversation_id})
            self._conversations[key] = after
            self._turns[key].append(turn)

    def delete(self, tenant: str, conversation_id: str) -> bool:
        with self._lock:
            self._turns.pop((tenant, conversation_id), None)
            return self._conversations.pop((tenant, conversation_id), None) is not None


def _meta_key(tenant: str, conversation_id: str) -> dict[str, Any]:
    return {"tenant": {"S": tenant}, "sk": {"S": f"conv#{conversation_id}"}}


def _turn_sk(conversation_id: str, seq: int) -> str:
    return f"conv#{conversation_id}#turn#{seq:06d}"


def _num(value: Decimal | int) -> dict[str, str]:
    return {"N": format(value, "f") if isinstance(value, Decimal) else str(value)}


class DynamoConversationStore:
    """Messages and tool declarations are stored as JSON strings: exact round trips, no float/Decimal games."""

    def __init__(self, table_name: str, dynamodb: Any | None = None) -> None:
        self._table = table_name
        self._dynamodb = dynamodb

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def _meta_item(self, c: Conversation) -> dict[str, Any]:
        item = {
            **_meta_key(c.tenant, c.conversation_id), "conversation_id": {"S": c.conversation_id},
            "created_at": {"S": c.created_at}, "updated_at": {"S": c.updated_at}, "expires_at": _num(c.expires_at),
            "turns": _num(c.turns), "input_tokens": _num(c.usage.input_tokens), "output_tokens": _num(c.usage.output_tokens),
            "cache_read_tokens": _num(c.usage.cache_read_tokens), "cache_write_tokens": _num(c.usage.cache_write_tokens),
            "cost_usd": _num(c.cost_usd), "unpriced_turns": _num(c.unpriced_turns),
            "tools": {"S": json.dumps(c.tools)}, "pending": {"S": json.dumps(c.pending)},
        }
        if c.system is not None:
            item["system"] = {"S": c.system}
        return item

    def create(self, conversation: Conversation) -> None:
        self._client().put_item(TableName=self._table, Item=self._meta_item(conversation),
                                ConditionExpression="attribute_not_exists(sk)")

    def get(self, tenant: str, conversation_id: str) -> Conversation | None:
        item = self._client().get_item(TableName=self._table, Key=_meta_key(tenant, conversation_id), ConsistentRead=True).get("Item")
        if not item:
            return None
        return Conversation(
            tenant=tenant, conversation_id=conversation_id, created_at=item["created_at"]["S"], updated_at=item["updated_at"]["S"],
            expires_at=int(item["expires_at"]["N"]), system=item.get("system", {}).get("S"), tools=json.loads(item["tools"]["S"]),
            turns=int(item["turns"]["N"]),
            usage=Usage(input_tokens=int(item["input_tokens"]["N"]), output_tokens=int(item["output_tokens"]["N"]),
                        cache_read_tokens=int(item["cache_read_tokens"]["N"]), cache_write_tokens=int(item["cache_write_tokens"]["N"])),
            cost_usd=Decimal(item["cost_usd"]["N"]), unpriced_turns=int(item["unpriced_turns"]["N"]),
            pending=json.loads(item["pending"]["S"]),
        )

    def _query(self, tenant: str, prefix: str, projection: str | None = None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {"TableName": self._table, "ConsistentRead": True,
                                   "KeyConditionExpression": "tenant = :tenant AND begins_with(sk, :prefix)",
                                   "ExpressionAttributeValues": {":tenant": {"S": tenant}, ":prefix": {"S": prefix}}}
        if projection:
            request.update(ProjectionExpression=projection)
        while True:
            page = self._client().query(**request)
            items += page["Items"]
            if "LastEvaluatedKey" not in page:
                return items
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def turns(self, tenant: str, conversation_id: str) -> list[Turn]:
        return [Turn(seq=int(item["seq"]["N"]), messages=json.loads(item["messages"]["S"]),
                     usage=Usage.model_validate_json(item["usage"]["S"]),
                     cost_usd=Decimal(item["cost_usd"]["N"]) if "cost_usd" in item else None,
                     stop_reason=item["stop_reason"]["S"], model=item["model"]["S"], request_id=item["request_id"]["S"],
                     created_at=item["created_at"]["S"])
                for item in self._query(tenant, f"conv#{conversation_id}#turn#")]

    def append(self, before: Conversation, after: Conversation, turn: Turn) -> None:
        from botocore.exceptions import ClientError

        turn_item = {"tenant": {"S": before.tenant}, "sk": {"S": _turn_sk(before.conversation_id, turn.seq)},
                     "seq": _num(turn.seq), "messages": {"S": json.dumps(turn.messages)}, "usage": {"S": turn.usage.model_dump_json()},
                     "stop_reason": {"S": turn.stop_reason}, "model": {"S": turn.model}, "request_id": {"S": turn.request_id},
                     "created_at": {"S": turn.created_at}, "expires_at": _num(after.expires_at)}
        if turn.cost_usd is not None:
            turn_item["cost_usd"] = _num(turn.cost_usd)
        try:
            self._client().transact_write_items(TransactItems=[
                {"Put": {"TableName": self._table, "Item": turn_item, "ConditionExpression": "attribute_not_exists(sk)"}},
                {"Put": {"TableName": self._table, "Item": self._meta_item(after),
                         "ConditionExpression": "turns = :before", "ExpressionAttributeValues": {":before": _num(before.turns)}}},
            ])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            raise ConversationConflict("The conversation changed (or was deleted) while this turn ran; retry on the latest state.",
                                       {"conversation_id": before.conversation_id}) from exc

    def delete(self, tenant: str, conversation_id: str) -> bool:
        """Erase the conversation and every turn (with the tool results inside them)."""
        keys = [{"tenant": item["tenant"], "sk": item["sk"]}
                for item in self._query(tenant, f"conv#{conversation_id}", projection="tenant, sk")
                if item["sk"]["S"] == f"conv#{conversation_id}" or item["sk"]["S"].startswith(f"conv#{conversation_id}#")]
        for start in range(0, len(keys), 25):
            requests = {self._table: [{"DeleteRequest": {"Key": key}} for key in keys[start:start + 25]]}
            for _ in range(8):  # unprocessed items come back under throttling: send them again
                requests = self._client().batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
                if not requests:
                    break
            else:
                raise ConversationConflict("Could not erase every turn; retry the delete.", {"conversation_id": conversation_id})
        return bool(keys)
