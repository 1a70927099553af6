"""What GET and DELETE /v1/conversations/{id} answer, from the store."""
from __future__ import annotations

import re
from typing import Any

from ..api_schemas import CONVERSATION_ID_PATTERN, ConversationDeleted, ConversationView
from ..errors import NotFound
from .messages import to_public
from .store import ConversationStore


def _missing(conversation_id: str) -> NotFound:
    # One answer for "never existed", "expired", "erased" and "another tenant's": nothing to probe.
    return NotFound("No such conversation.", {"conversation_id": conversation_id[:64]})


def conversation_view(store: ConversationStore, tenant: str, conversation_id: str) -> dict[str, Any]:
    conversation = store.get(tenant, conversation_id) if re.match(CONVERSATION_ID_PATTERN, conversation_id) else None
    if conversation is None:
        raise _missing(conversation_id)
    turns = store.turns(tenant, conversation_id)
    cost = conversation.total_cost()
    pending = (conversation.pending or {}).get("tool_uses", [])
    return ConversationView(
        conversation_id=conversation_id, created_at=conversation.created_at, updated_at=conversation.updated_at,
        expires_at=conversation.expires_at, system=conversation.system,
        turns=[{"seq": t.seq, "messages": to_public(t.messages), "usage": t.usage.model_dump(),  # type: ignore[misc]
                "cost_usd": float(t.cost_usd) if t.cost_usd is not None else None, "stop_reason": t.stop_reason,
                "model": t.model, "request_id": t.request_id, "created_at": t.created_at} for t in turns],
        usage=conversation.usage.model_dump(),  # type: ignore[arg-type]
        cost_usd=float(cost) if cost is not None else None,
        pending_tool_calls=[{"id": u["toolUseId"], "name": u["name"], "input": u.get("input")} for u in pending],  # type: ignore[misc]
    ).model_dump()


def erase_conversation(store: ConversationStore, tenant: str, conversation_id: str) -> dict[str, Any]:
    if not (re.match(CONVERSATION_ID_PATTERN, conversation_id) and store.delete(tenant, conversation_id)):
        raise _missing(conversation_id)
    return ConversationDeleted(conversation_id=conversation_id, deleted=True).model_dump()
