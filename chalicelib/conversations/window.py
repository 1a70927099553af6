"""The token window: which part of a conversation's history is sent to the model. Pure functions.

Truncation rule (README, "Conversations"):
- history is cut into *exchanges*: an exchange starts at a user message that carries no tool result
  and runs until the next one, so every toolUse and its toolResult are in the same exchange;
- the newest exchange is always sent; older exchanges are dropped oldest first, whole, until the
  rest fits the window (`CONVERSATION_WINDOW_TOKENS`);
- the system prompt is always sent and counts against the window.

Tokens are estimated, not counted (no tokenizer for every model): 3 bytes of JSON per token, which
over-estimates for English, so the window errs on the side of dropping.
"""
from __future__ import annotations

import json
from typing import Any

BYTES_PER_TOKEN = 3


def estimate_tokens(value: Any) -> int:
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text.encode()) // BYTES_PER_TOKEN + 1


def split_exchanges(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    exchanges: list[list[dict[str, Any]]] = []
    for message in messages:
        starts = message["role"] == "user" and not any("toolResult" in block for block in message["content"])
        if starts or not exchanges:
            exchanges.append([])
        exchanges[-1].append(message)
    return exchanges


def fit_window(messages: list[dict[str, Any]], system: str | None, window_tokens: int) -> tuple[list[dict[str, Any]], int]:
    """The messages to send and how many older messages were dropped."""
    exchanges = split_exchanges(messages)
    if not exchanges:
        return [], 0
    budget = window_tokens - estimate_tokens(system)
    kept = [exchanges[-1]]
    used = sum(estimate_tokens(m["content"]) for m in exchanges[-1])
    for exchange in reversed(exchanges[:-1]):
        cost = sum(estimate_tokens(m["content"]) for m in exchange)
        if used + cost > budget:
            break
        kept.insert(0, exchange)
        used += cost
    sent = [message for exchange in kept for message in exchange]
    return sent, len(messages) - len(sent)
