"""Pydantic models for every HTTP body. They are the validation and the OpenAPI document."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from .basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)

MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$"
MAX_OBJECT_BYTES = 50_000_000  # the largest uploaded object an S3 trigger reads
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
CONVERSATION_ID_PATTERN = r"^conv-[0-9a-f]{32}$"
TOOL_USE_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"


def combination_error(field: str, message: str) -> PydanticCustomError:
    """A cross-field error that still names a field (chalicelib.http.validation_details reads ctx.field)."""
    return PydanticCustomError("invalid_combination", "{message}", {"field": field, "message": message})


class ClientToolBody(BaseModel):
    """A tool the caller runs itself (function calling): the model's calls come back in the answer."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(default="", max_length=4096)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}},
                                       description="JSON Schema of the tool's input; the model's input is validated against it.")


class ToolUseBody(BaseModel):
    """A tool call the model made: `input` matches the tool's declared schema."""

    id: str = Field(pattern=TOOL_USE_ID_PATTERN)
    name: str = Field(pattern=TOOL_NAME_PATTERN)
    input: Any = None


class MessageBody(BaseModel):
    """One message of a stateless conversation (also how stored turns are shown).

    user: `content` is the text. assistant: `content` text and/or `tool_calls`. tool: the result of
    one tool call, `content` text or a JSON object, `is_error` when the tool failed."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "tool"]
    content: str | dict[str, Any] | None = None
    tool_calls: list[ToolUseBody] = Field(default_factory=list, max_length=64)
    tool_use_id: str | None = Field(default=None, pattern=TOOL_USE_ID_PATTERN)
    is_error: bool = False

    @model_validator(mode="after")
    def _shape(self) -> "MessageBody":
        if self.role == "user" and not (isinstance(self.content, str) and self.content):
            raise ValueError("a user message needs non-empty text content")
        if self.role == "assistant" and (isinstance(self.content, dict) or not (self.content or self.tool_calls)):
            raise ValueError("an assistant message needs text content or tool_calls")
        if self.role == "tool" and (self.tool_use_id is None or self.content is None):
            raise ValueError("a tool message needs tool_use_id and content")
        if self.role != "assistant" and self.tool_calls:
            raise ValueError("only assistant messages carry tool_calls")
        return self


class ToolResultBody(BaseModel):
    """The caller's result for one pending client tool call of a stored conversation."""

    model_config = ConfigDict(extra="forbid")

    tool_use_id: str = Field(pattern=TOOL_USE_ID_PATTERN)
    content: str | dict[str, Any]
    is_error: bool = False


class InvokeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"prompt": "What is 17 * 23?", "tools": ["calculator"]}})

    prompt: str | None = Field(default=None, min_length=1, description="The user's message. Screened before any model sees it.")
    messages: list[MessageBody] | None = Field(default=None, min_length=1, max_length=500,
                                               description="A whole conversation, kept by the caller (instead of prompt).")
    conversation_id: str | None = Field(default=None, pattern=CONVERSATION_ID_PATTERN,
                                        description="Continue a conversation Crossover keeps (with prompt or tool_results).")
    store: bool = Field(default=False, description="Start a stored conversation with this prompt; its id comes back.")
    tool_results: list[ToolResultBody] | None = Field(default=None, min_length=1, max_length=64,
                                                      description="Results of the pending client tool calls of conversation_id.")
    system: str | None = Field(default=None, max_length=16_000, description="Optional system prompt (kept by a stored conversation).")
    tools: list[str | ClientToolBody] | None = Field(
        default=None, max_length=64,
        description="Built-in tool names, and client tools declared with a JSON Schema (kept by a stored conversation).")
    model: str | None = Field(default=None, pattern=MODEL_ID_PATTERN, description="Bedrock model or inference profile id, or an alias.")
    max_tokens: int | None = Field(default=None, ge=1, le=8192, description="Output token limit per model call.")

    @model_validator(mode="after")
    def _one_input(self) -> "InvokeRequest":
        if self.messages is not None:
            if self.prompt is not None or self.conversation_id or self.tool_results or self.store:
                raise combination_error("messages", "messages is stateless: send it without prompt, conversation_id, tool_results or store")
            if self.messages[-1].role == "assistant":
                raise combination_error("messages", "the last message must be from the user or a tool")
        elif self.conversation_id:
            if (self.prompt is None) == (self.tool_results is None):
                raise combination_error("prompt", "with conversation_id send either prompt or tool_results")
            if self.store:
                raise combination_error("store", "store starts a new conversation: leave out conversation_id")
        elif self.prompt is None or self.tool_results is not None:
            raise combination_error("prompt", "send prompt, messages, or conversation_id with prompt or tool_results")
        return self


class UsageBody(BaseModel):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class ToolCallBody(BaseModel):
    name: str
    input: Any = None
    status: Literal["success", "error", "timeout"]
    ms: float
    error: str | None = None


class ConversationSummary(BaseModel):
    conversation_id: str
    turns: int
    usage: UsageBody = Field(description="Summed over every turn of the conversation")
    cost_usd: float | None = Field(description="Summed over every turn; null if any turn's model had no price")


class InvokeResponse(BaseModel):
    output: str
    model: str
    backend: Literal["bedrock", "self_hosted"]
    stop_reason: str = Field(description="end_turn, max_tokens, guardrail_intervened, content_filtered, tool_use (client tool "
                                         "calls wait in client_tool_calls), step_limit or budget_exceeded")
    usage: UsageBody
    cost_usd: float | None = Field(description="null when the model has no price in the catalog")
    tool_calls: list[ToolCallBody] = Field(description="Built-in (server) tool calls Crossover ran")
    client_tool_calls: list[ToolUseBody] = Field(default_factory=list,
                                                 description="Calls of the caller's own tools, to answer with their results")
    messages: list[MessageBody] = Field(default_factory=list,
                                        description="What this call added to the conversation (append it when keeping messages yourself)")
    conversation: ConversationSummary | None = None
    steps: int = Field(description="Model calls in this exchange (client tool round trips included)")
    trace_id: str
    request_id: str


class TurnView(BaseModel):
    seq: int
    messages: list[MessageBody]
    usage: UsageBody
    cost_usd: float | None
    stop_reason: str
    model: str
    request_id: str
    created_at: str


class ConversationView(BaseModel):
    conversation_id: str
    created_at: str
    updated_at: str
    expires_at: int = Field(description="Unix time after which the conversation is erased (refreshed by every turn)")
    system: str | None
    turns: list[TurnView]
    usage: UsageBody
    cost_usd: float | None
    pending_tool_calls: list[ToolUseBody] = Field(description="Client tool calls waiting for tool_results")


class ConversationDeleted(BaseModel):
    conversation_id: str
    deleted: Literal[True]


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class HealthResponse(BaseModel):
    status: Literal["ok"]


class UploadRequest(BaseModel):
    """POST /v1/uploads: what the tenant wants to upload. The server picks the key."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"filename": "prompts.jsonl", "kind": "job"}})

    filename: str = Field(min_length=1, max_length=255, description="Kept (sanitised) as the object's last key segment.")
    kind: Literal["job", "invoke"] = Field(default="job", description="job: JSONL of {\"prompt\"} lines; invoke: one InvokeRequest JSON.")
    max_bytes: int = Field(default=MAX_OBJECT_BYTES, ge=1, le=MAX_OBJECT_BYTES, description="Largest object the form accepts.")


class UploadForm(BaseModel):
    """A presigned POST: send every `fields` entry, then the file as `file`, as multipart/form-data to `url`."""

    upload_id: str
    key: str = Field(description="incoming/<tenant>/<upload_id>/<filename>; the form accepts no other key")
    url: str
    fields: dict[str, str]
    expires_at: str = Field(description="ISO 8601; the form is refused after this")
    max_bytes: int
    kind: Literal["job", "invoke"]
