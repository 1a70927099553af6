"""Stored conversations: read one, erase one (continuing one is POST /v1/invoke)."""
from __future__ import annotations

from .. import api
from ..operation import AUTHENTICATED, IDEMPOTENCY_KEY, Operation, blueprint, path_parameter

CONVERSATION_ID = path_parameter("conversation_id")
OPERATIONS = (
    Operation("getConversation", "GET", "/v1/conversations/{conversation_id}", api.get_conversation, 200, "ConversationView",
              "The stored turns, with usage and cost per turn and in total", (*AUTHENTICATED, 404), parameters=(CONVERSATION_ID,)),
    Operation("deleteConversation", "DELETE", "/v1/conversations/{conversation_id}", api.delete_conversation, 200,
              "ConversationDeleted", "Erased, with every turn and tool result", (*AUTHENTICATED, 404, 409, 422),
              parameters=(CONVERSATION_ID, IDEMPOTENCY_KEY)),
)
routes = blueprint(__name__, OPERATIONS)
