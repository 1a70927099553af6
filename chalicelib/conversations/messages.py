"""Public message shape (chalicelib.api_schemas.MessageBody) <-> Converse messages. Pure functions.

Converse wants user and assistant messages to alternate, tool results inside a user message right
after the assistant's toolUse; `merge_roles` folds adjacent messages of one role into one.
"""
from __future__ import annotations

import json
from typing import Any


def tool_result_block(tool_use_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    part = {"json": content} if isinstance(content, dict) else {"text": content if isinstance(content, str) else json.dumps(content)}
    return {"toolResult": {"toolUseId": tool_use_id, "content": [part], "status": "error" if is_error else "success"}}


def to_converse(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Public messages (dicts of MessageBody) -> Converse messages, adjacent roles merged."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "user":
            converted.append({"role": "user", "content": [{"text": message["content"]}]})
        elif role == "assistant":
            content: list[dict[str, Any]] = [{"text": message["content"]}] if message.get("content") else []
            content += [{"toolUse": {"toolUseId": call["id"], "name": call["name"], "input": call.get("input") or {}}}
                        for call in message.get("tool_calls") or []]
            converted.append({"role": "assistant", "content": content})
        else:
            converted.append({"role": "user", "content": [tool_result_block(message["tool_use_id"], message["content"],
                                                                            bool(message.get("is_error")))]})
    return merge_roles(converted)


def to_public(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Converse messages -> public messages (tool results first, as Converse orders them)."""
    public: list[dict[str, Any]] = []
    for message in messages:
        blocks = message["content"]
        text = "".join(block["text"] for block in blocks if "text" in block)
        if message["role"] == "assistant":
            calls = [{"id": b["toolUse"]["toolUseId"], "name": b["toolUse"]["name"], "input": b["toolUse"].get("input")}
                     for b in blocks if "toolUse" in b]
            public.append({"role": "assistant", "content": text or None, "tool_calls": calls})
            continue
        for block in blocks:
            if "toolResult" in block:
                result = block["toolResult"]
                parts = result.get("content") or [{"text": ""}]
                content = parts[0]["json"] if len(parts) == 1 and "json" in parts[0] else "".join(
                    part.get("text", json.dumps(part.get("json"))) for part in parts)
                public.append({"role": "tool", "tool_use_id": result["toolUseId"], "content": content,
                               "is_error": result.get("status") == "error"})
        if text:
            public.append({"role": "user", "content": text})
    return public


def merge_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold adjacent messages of the same role into one (tool results before text in a user message)."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            content = merged[-1]["content"] + message["content"]
            if message["role"] == "user":
                content = [b for b in content if "toolResult" in b] + [b for b in content if "toolResult" not in b]
            merged[-1] = {"role": message["role"], "content": content}
        else:
            merged.append({"role": message["role"], "content": list(message["content"])})
    return merged


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    """Every text a user (or a tool result from the caller) put into Converse messages: what screening reads."""
    texts = []
    for message in messages:
        if message["role"] != "user":
            continue
        for block in message["content"]:
            if "text" in block:
                texts.append(block["text"])
            for part in block.get("toolResult", {}).get("content", []):
                texts.append(part["text"] if "text" in part else json.dumps(part.get("json")))
    return texts
