"""OpenAI-compatible API: POST /v1/chat/completions and GET /v1/models.

Enough of OpenAI's chat-completions contract that the official `openai` SDK (and the frameworks built
on it) work unchanged with `base_url` = Crossover's `/v1` and the tenant's API key. Requests become an
`Exchange` on the same path as /v1/invoke (screening, budget reservation, routing, metering, trace
id); `tools` are client tools (function calling). Errors use OpenAI's shape on these routes.

`stream: true` is answered as `text/event-stream` chunks in OpenAI's format, ending with
`data: [DONE]`; Lambda behind API Gateway cannot stream, so the chunks arrive together.
"""
from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from .api_schemas import MODEL_ID_PATTERN, TOOL_NAME_PATTERN, combination_error
from .auth import Tenant
from .basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)
from .conversations.messages import to_converse
from .errors import ValidationFailed
from .invoke import Exchange, ExchangeOutcome, run_exchange, screen_messages
from .models.openai_compat import STOP_TO_FINISH, from_openai_tool_choice
from .observability import logger
from .services import Services
from .timing import Deadline


# The roles whose messages carry instructions for the model (OpenAI renamed "system" to "developer" for
# newer models; both arrive): they become the Converse system field.
SYSTEM_ROLES = ("system", "developer")


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class FunctionCall(BaseModel):
    name: str = Field(pattern=TOOL_NAME_PATTERN)
    arguments: str = Field(default="{}", max_length=100_000, description="JSON text")


class ChatToolCall(BaseModel):
    id: str = Field(min_length=1, max_length=128)
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")  # name, refusal, audio...: accepted, not used

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    tool_calls: list[ChatToolCall] | None = Field(default=None, max_length=64)
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=128)

    def text(self) -> str:
        if isinstance(self.content, list):
            if any(part.type != "text" for part in self.content):
                raise ValidationFailed("Only text content parts are supported.", {"field": "messages.content"})
            return "".join(part.text or "" for part in self.content)
        return self.content or ""


class FunctionDefinition(BaseModel):
    model_config = ConfigDict(extra="ignore")  # strict: accepted; every call is validated against the schema anyway

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(default="", max_length=4096)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ChatTool(BaseModel):
    type: Literal["function"]
    function: FunctionDefinition


class NamedFunction(BaseModel):
    name: str = Field(pattern=TOOL_NAME_PATTERN)


class NamedToolChoice(BaseModel):
    type: Literal["function"]
    function: NamedFunction


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """OpenAI's request body. Fields Crossover does not act on (seed, penalties, logprobs...) are ignored, as
    many OpenAI-compatible servers do; `n` other than 1 is refused."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"example": {
        "model": "claude-sonnet", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 64}})

    model: str = Field(pattern=MODEL_ID_PATTERN, description="A Bedrock model id or an alias from GET /v1/models")
    messages: list[ChatMessage] = Field(min_length=1, max_length=500)
    tools: list[ChatTool] | None = Field(default=None, max_length=64)
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=8192)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=8192)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    stop: str | list[str] | None = None
    user: str | None = Field(default=None, max_length=256)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, ge=1, le=1)
    parallel_tool_calls: bool | None = None

    @model_validator(mode="after")
    def _checks(self) -> "ChatCompletionRequest":
        stops = [self.stop] if isinstance(self.stop, str) else self.stop or []
        if len(stops) > 4 or any(not s or len(s) > 256 for s in stops):
            raise combination_error("stop", "stop takes up to 4 non-empty sequences of at most 256 characters")
        if self.messages[-1].role == "assistant":
            raise combination_error("messages", "the last message must be from the user or a tool")
        if not any(m.role in ("user", "tool") for m in self.messages):
            raise combination_error("messages", "send at least one user message")
        return self


class ChatFunctionOut(BaseModel):
    name: str
    arguments: str


class ChatToolCallOut(BaseModel):
    id: str
    type: Literal["function"]
    function: ChatFunctionOut


class AssistantMessageOut(BaseModel):
    role: Literal["assistant"]
    content: str | None
    refusal: None = None
    tool_calls: list[ChatToolCallOut] | None = None


class ChoiceOut(BaseModel):
    index: int
    message: AssistantMessageOut
    logprobs: None = None
    finish_reason: Literal["stop", "length", "tool_calls", "content_filter"]


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CrossoverMeta(BaseModel):
    request_id: str
    trace_id: str
    backend: Literal["bedrock", "self_hosted"]
    stop_reason: str
    steps: int
    cost_usd: float | None


class ChatCompletion(BaseModel):
    """OpenAI's chat.completion object, plus `crossover` (request id, trace id, backend, cost). With
    `stream: true` the same content comes as text/event-stream chat.completion.chunk events."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    system_fingerprint: None = None
    choices: list[ChoiceOut]
    usage: CompletionUsage
    crossover: CrossoverMeta


class ModelEntry(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelEntry]


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str


class OpenAIErrorBody(BaseModel):
    error: OpenAIErrorDetail


def to_exchange(request: ChatCompletionRequest) -> Exchange:
    """An OpenAI chat request as Converse messages and options (messages not screened yet)."""
    system = "\n\n".join(m.text() for m in request.messages if m.role in SYSTEM_ROLES) or None
    public: list[dict[str, Any]] = []
    for index, message in enumerate(request.messages):
        if message.role == "user":
            if not message.text().strip():
                raise ValidationFailed("A user message needs text content.", {"field": f"messages.{index}.content"})
            public.append({"role": "user", "content": message.text()})
        elif message.role == "assistant":
            calls = [{"id": call.id, "name": call.function.name, "input": _arguments(call.function.arguments, index)}
                     for call in message.tool_calls or []]
            if message.text() or calls:
                public.append({"role": "assistant", "content": message.text() or None, "tool_calls": calls})
        elif message.role == "tool":
            if not message.tool_call_id:
                raise ValidationFailed("A tool message needs tool_call_id.", {"field": f"messages.{index}.tool_call_id"})
            public.append({"role": "tool", "tool_use_id": message.tool_call_id, "content": message.text()})
    tools = [{"name": t.function.name, "description": t.function.description, "parameters": t.function.parameters}
             for t in request.tools or []]
    messages = to_converse(public)
    has_tool_blocks = any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])
    if request.tool_choice == "none" and not has_tool_blocks:
        tools = []  # Converse has no "none": the model is simply offered no tools
    inference: dict[str, Any] = {}
    if request.temperature is not None:
        inference["temperature"] = request.temperature
    if request.top_p is not None:
        inference["topP"] = request.top_p
    if request.stop:
        inference["stopSequences"] = [request.stop] if isinstance(request.stop, str) else request.stop
    choice = request.tool_choice.model_dump() if isinstance(request.tool_choice, NamedToolChoice) else request.tool_choice
    return Exchange(messages=messages, system=system, model=request.model,
                    max_tokens=request.max_completion_tokens or request.max_tokens, client_tools=tools,
                    tool_choice=from_openai_tool_choice(choice), inference=inference or None)


def later_system_texts(messages: list[ChatMessage]) -> list[str]:
    """The system/developer messages after the first user, assistant or tool message. Only the leading run is
    the developer's system prompt; client frameworks put retrieved context and tool notes in later ones, so
    those are screened as user text (they stay in the Converse system field all the same)."""
    first_turn = next((i for i, m in enumerate(messages) if m.role not in SYSTEM_ROLES), len(messages))
    return [m.text() for m in messages[first_turn:] if m.role in SYSTEM_ROLES]


def _arguments(text: str, index: int) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise ValidationFailed("tool_calls arguments must be JSON text.", {"field": f"messages.{index}.tool_calls"}) from exc


def chat_completion(services: Services, tenant: Tenant, request: ChatCompletionRequest, trace_id: str,
                    request_id: str | None = None, deadline: Deadline | None = None) -> dict[str, Any]:
    exchange = to_exchange(request)
    for text in later_system_texts(request.messages):
        services.screening.require_allowed(text, tenant.tenant, trace_id, "chat.system")
    exchange.messages = screen_messages(services, tenant, trace_id, exchange.messages)
    if request.user:
        # The caller's end-user id, for abuse tracing; hashed: it may be an e-mail address.
        logger.info("chat.end_user", extra={"trace_id": trace_id, "tenant": tenant.tenant,
                                            "end_user": hashlib.sha256(request.user.encode()).hexdigest()[:16]})
    return completion_body(run_exchange(services, tenant, exchange, trace_id, request_id, deadline), trace_id)


def completion_body(outcome: ExchangeOutcome, trace_id: str) -> dict[str, Any]:
    result = outcome.result
    message: dict[str, Any] = {"role": "assistant", "content": result.output or None, "refusal": None}
    if result.pending:
        message["tool_calls"] = [{"id": use["toolUseId"], "type": "function",
                                  "function": {"name": use["name"], "arguments": json.dumps(use.get("input") or {})}}
                                 for use in result.pending]
    usage = result.usage
    # Through the model: the answer is checked against the contract the OpenAPI document publishes.
    return ChatCompletion.model_validate({
        "id": "chatcmpl-" + outcome.request_id.removeprefix("req-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": outcome.model_id,
        "system_fingerprint": None,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": STOP_TO_FINISH.get(result.stop_reason, "stop")}],
        "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                  "total_tokens": usage.input_tokens + usage.output_tokens},
        # Ours, beside OpenAI's fields (clients ignore what they do not know).
        "crossover": {"request_id": outcome.request_id, "trace_id": trace_id, "backend": outcome.backend,
                      "stop_reason": result.stop_reason, "steps": result.steps,
                      "cost_usd": float(result.cost_usd) if result.cost_usd is not None else None},
    }).model_dump(exclude_unset=True)


def stream_events(completion: dict[str, Any], include_usage: bool) -> str:
    """A finished completion as OpenAI's chunk stream (text/event-stream), ending with [DONE]."""
    base = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"], "system_fingerprint": None}
    choice, message = completion["choices"][0], completion["choices"][0]["message"]
    usage_field = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}], **usage_field}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        chunks.append(chunk({"content": message["content"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return "".join(f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks) + "data: [DONE]\n\n"


def model_list(services: Services) -> dict[str, Any]:
    """GET /v1/models: the aliases, the default model, every Bedrock model in the price catalog, and the
    self-hosted model when one is configured. Any other Bedrock id also works as `model`."""
    settings = services.settings
    entries: dict[str, str] = {alias: "crossover" for alias in settings.models.aliases}
    entries.setdefault(settings.models.default_model, "bedrock")
    for model_id in sorted(services.catalog.bedrock_models):
        entries.setdefault(model_id, "bedrock")
    if "self_hosted" in services.backends:
        entries.setdefault(settings.models.self_hosted_model, "self_hosted")
    return ModelList.model_validate({"object": "list", "data": [{"id": model_id, "object": "model", "created": 0, "owned_by": owner}
                                                                for model_id, owner in entries.items()]}).model_dump()


_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "insufficient_quota", 403: "permission_error",
                404: "not_found_error", 405: "invalid_request_error", 409: "conflict_error", 422: "invalid_request_error",
                429: "rate_limit_error"}


def openai_error(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """Our stable error body in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    error = body["error"]
    details = error.get("details")
    param = details.get("field") if isinstance(details, dict) else (
        details[0].get("field") if isinstance(details, list) and details and isinstance(details[0], dict) else None)
    return {"error": {"message": error["message"], "type": _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error"),
                      "param": param or None, "code": error["code"]}}

