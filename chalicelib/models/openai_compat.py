"""Converse <-> OpenAI chat-completions translation, for self-hosted OpenAI-compatible servers (vLLM,
llama.cpp). Used by the self-hosted backend in production and by the local Bedrock bridge."""
from __future__ import annotations

import json
from typing import Any

_FINISH_TO_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "content_filtered"}
# Our stop reasons (Converse's and the loop's own) as OpenAI finish_reason; a limit that cut the answer is "length".
STOP_TO_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                  "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
                  "step_limit": "length", "budget_exceeded": "length"}


def to_openai_messages(system: list[dict[str, Any]] | None, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Converse messages (content blocks) -> OpenAI chat messages."""
    converted: list[dict[str, Any]] = []
    system_text = "\n".join(block["text"] for block in system or [] if "text" in block)
    if system_text:
        converted.append({"role": "system", "content": system_text})
    for message in messages:
        texts = [block["text"] for block in message["content"] if "text" in block]
        tool_uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        tool_results = [block["toolResult"] for block in message["content"] if "toolResult" in block]
        if message["role"] == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
            if tool_uses:
                entry["tool_calls"] = [
                    {"id": use["toolUseId"], "type": "function", "function": {"name": use["name"], "arguments": json.dumps(use.get("input", {}))}}
                    for use in tool_uses
                ]
            converted.append(entry)
            continue
        for result in tool_results:
            parts = [json.dumps(part["json"]) if "json" in part else part.get("text", "") for part in result.get("content", [])]
            converted.append({"role": "tool", "tool_call_id": result["toolUseId"], "content": "\n".join(parts)})
        if texts:
            converted.append({"role": "user", "content": "\n".join(texts)})
    return converted


def to_openai_request(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A Converse request body -> an OpenAI chat-completions request."""
    inference = body.get("inferenceConfig", {})
    request: dict[str, Any] = {"model": model, "messages": to_openai_messages(body.get("system"), body["messages"])}
    if "maxTokens" in inference:
        request["max_tokens"] = inference["maxTokens"]
    if "temperature" in inference:
        request["temperature"] = inference["temperature"]
    if "topP" in inference:
        request["top_p"] = inference["topP"]
    if inference.get("stopSequences"):
        request["stop"] = inference["stopSequences"]
    tools = (body.get("toolConfig") or {}).get("tools") or []
    if tools:
        request["tools"] = [
            {"type": "function", "function": {"name": t["toolSpec"]["name"], "description": t["toolSpec"].get("description", ""),
                                              "parameters": t["toolSpec"]["inputSchema"]["json"]}}
            for t in tools if "toolSpec" in t
        ]
        choice = to_openai_tool_choice((body.get("toolConfig") or {}).get("toolChoice"))
        if choice is not None:
            request["tool_choice"] = choice
    return request


def to_openai_tool_choice(choice: dict[str, Any] | None) -> Any:
    """Converse toolChoice ({"auto":{}}, {"any":{}}, {"tool":{"name"}}) -> OpenAI tool_choice."""
    if not choice:
        return None
    if "tool" in choice:
        return {"type": "function", "function": {"name": choice["tool"]["name"]}}
    return "required" if "any" in choice else "auto"


def from_openai_tool_choice(choice: Any) -> dict[str, Any] | None:
    """OpenAI tool_choice -> Converse toolChoice; None for "none" or absent (Converse has no "none":
    callers leave the tools out instead)."""
    if isinstance(choice, dict):
        return {"tool": {"name": choice["function"]["name"]}}
    return {"any": {}} if choice == "required" else {"auto": {}} if choice == "auto" else None


def to_converse_response(completion: dict[str, Any], latency_ms: int) -> dict[str, Any]:
    """An OpenAI chat completion -> a Converse response body."""
    choice = completion["choices"][0]
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"text": message["content"]})
    for call in message.get("tool_calls") or []:
        try:
            arguments = json.loads(call["function"].get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = {}
        content.append({"toolUse": {"toolUseId": call["id"], "name": call["function"]["name"], "input": arguments}})
    if not content:
        content.append({"text": ""})
    usage = completion.get("usage") or {}
    stop = "tool_use" if message.get("tool_calls") else _FINISH_TO_STOP.get(choice.get("finish_reason") or "stop", "end_turn")
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": usage.get("prompt_tokens", 0), "outputTokens": usage.get("completion_tokens", 0),
                  "totalTokens": usage.get("total_tokens", 0)},
        "metrics": {"latencyMs": latency_ms},
    }
