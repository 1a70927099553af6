"""Pydantic models for every HTTP body. They are the validation and the OpenAPI document."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$"
MAX_OBJECT_BYTES = 50_000_000  # the largest uploaded object an S3 trigger reads


class InvokeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"prompt": "What is 17 * 23?", "tools": ["calculator"]}})

    prompt: str = Field(min_length=1, description="The user's message. Screened before any model sees it.")
    system: str | None = Field(default=None, max_length=16_000, description="Optional system prompt.")
    tools: list[str] = Field(default_factory=list, max_length=16, description="Names of built-in tools the agent may call.")
    model: str | None = Field(default=None, pattern=MODEL_ID_PATTERN, description="Bedrock model or inference profile id.")
    max_tokens: int | None = Field(default=None, ge=1, le=8192, description="Output token limit per model call.")


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


class InvokeResponse(BaseModel):
    output: str
    model: str
    backend: Literal["bedrock", "self_hosted"]
    stop_reason: str = Field(description="end_turn, max_tokens, guardrail_intervened, content_filtered, step_limit or budget_exceeded")
    usage: UsageBody
    cost_usd: float | None = Field(description="null when the model has no price in the catalog")
    tool_calls: list[ToolCallBody]
    steps: int
    trace_id: str
    request_id: str


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
