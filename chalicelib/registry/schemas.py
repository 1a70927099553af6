"""Bodies of the /v1/tools and /v1/agents routes. They are the validation and the OpenAPI document."""
from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from ..api_schemas import MODEL_ID_PATTERN
from ..basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)
from . import NAME_PATTERN

# Lambda functions a tenant may register: the deploy template lets the API invoke only these (and only
# those tagged with the calling tenant), see deploy/package.py.
TOOL_FUNCTION_PREFIX = "crossover-tool-"
# Secrets a tenant may name: crossover-tool/<tenant>/..., the only ones the tool role can read for it.
TOOL_SECRET_PREFIX = "crossover-tool/"
MAX_SCHEMA_BYTES = 16_000
MAX_RESULT_BYTES = 256_000
_LAMBDA_ARN = re.compile(r"^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:(?P<name>[A-Za-z0-9_-]{1,64})(:[A-Za-z0-9$_-]+)?$")
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:(?P<name>[A-Za-z0-9/_+=.@-]+)-[A-Za-z0-9]{6}$")
_HEADER_NAME = r"^[A-Za-z0-9-]{1,64}$"
_FORBIDDEN_HEADERS = {"host", "content-length", "content-type", "transfer-encoding", "connection", "cookie"}


def lambda_function_name(reference: str) -> str:
    """The function name inside a name or (qualified) ARN."""
    match = _LAMBDA_ARN.match(reference)
    return match.group("name") if match else reference.split(":", 1)[0]


def secret_name(reference: str) -> str:
    """The secret name inside a name or ARN (ARNs end with a six-character suffix)."""
    match = _SECRET_ARN.match(reference)
    return match.group("name") if match else reference


def _refs(schema: Any) -> list[str]:
    """Every $ref / $dynamicRef value in a schema."""
    if isinstance(schema, dict):
        found = [value for key, value in schema.items() if key in ("$ref", "$dynamicRef") and isinstance(value, str)]
        return found + [ref for value in schema.values() for ref in _refs(value)]
    if isinstance(schema, list):
        return [ref for value in schema for ref in _refs(value)]
    return []


class LambdaTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["lambda"]
    function: str = Field(min_length=1, max_length=170, pattern=r"^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:)?[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]+)?$",
                          description=f"Function name or ARN. Its name must start with '{TOOL_FUNCTION_PREFIX}' and the function must carry "
                                      "the tag crossover-tenant=<your tenant>.")

    @field_validator("function")
    @classmethod
    def _tool_function(cls, value: str) -> str:
        if not lambda_function_name(value).startswith(TOOL_FUNCTION_PREFIX):
            raise ValueError(f"the function name must start with {TOOL_FUNCTION_PREFIX!r}")
        return value


class _HttpTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=8, max_length=2048, description="https URL. Private, loopback and link-local addresses are refused.")
    secret_arn: str | None = Field(default=None, max_length=2048,
                                   description=f"Secrets Manager secret (name or ARN) under '{TOOL_SECRET_PREFIX}<tenant>/'; its value is sent in secret_header.")
    secret_header: str = Field(default="Authorization", pattern=_HEADER_NAME)

    @field_validator("secret_header")
    @classmethod
    def _header(cls, value: str) -> str:
        if value.lower() in _FORBIDDEN_HEADERS:
            raise ValueError(f"{value!r} cannot carry a secret")
        return value


class HttpsTarget(_HttpTarget):
    type: Literal["https"]


class McpTarget(_HttpTarget):
    type: Literal["mcp"]
    tool: str | None = Field(default=None, min_length=1, max_length=128, description="The remote MCP tool's name (default: the registered name).")


Target = Annotated[LambdaTarget | HttpsTarget | McpTarget, Field(discriminator="type")]


class ToolDefinition(BaseModel):
    """PUT /v1/tools/{name}: a server tool the tenant's agents may call."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {
        "description": "Look up an order by id", "target": {"type": "lambda", "function": "crossover-tool-orders"},
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}})

    description: str = Field(min_length=1, max_length=1024, description="What the model reads to decide when to call the tool.")
    input_schema: dict[str, Any] = Field(description="JSON Schema (2020-12) of the tool's input; its top level must be an object.")
    output_schema: dict[str, Any] | None = Field(default=None, description="Optional JSON Schema the result must match before the model sees it.")
    target: Target
    timeout_s: float = Field(default=5.0, gt=0, le=30, description="Per call; the service's TOOL_TIMEOUT_S caps it.")
    max_result_bytes: int = Field(default=16_000, ge=1, le=MAX_RESULT_BYTES, description="Larger results are refused, not truncated.")

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _json_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        if value is None:
            return value
        if len(json.dumps(value)) > MAX_SCHEMA_BYTES:
            raise ValueError(f"schema larger than {MAX_SCHEMA_BYTES} bytes")
        try:
            Draft202012Validator.check_schema(value)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from exc
        if any(not ref.startswith("#") for ref in _refs(value)):
            raise ValueError("only local $ref ('#/...') is supported: validation never fetches anything")
        return value

    @field_validator("input_schema")
    @classmethod
    def _object_input(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError("the input schema's top level must be {\"type\": \"object\", ...}")
        return value


class ToolView(ToolDefinition):
    name: str
    updated_at: str


class ToolList(BaseModel):
    tools: list[ToolView]


class AgentLimitsBody(BaseModel):
    """Limits of one agent: each may only lower the service's own caps."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int | None = Field(default=None, ge=1, le=50)
    max_cost_usd: float | None = Field(default=None, gt=0, le=1000)
    max_tokens: int | None = Field(default=None, ge=1, le=8192)


class AgentScreeningBody(BaseModel):
    """Screening for this agent's traffic. Overrides can only tighten the tenant's policy, never loosen it."""

    model_config = ConfigDict(extra="forbid")

    block_threshold: float | None = Field(default=None, ge=0.05, le=1.0, description="Used only when lower than the tenant's.")
    pii_action: Literal["block", "redact"] | None = Field(default=None, description="Used only when stricter than the tenant's (off < redact < block).")
    guardrail_enabled: Literal[True] | None = None
    max_chars: int | None = Field(default=None, ge=1, le=1_000_000, description="Used only when lower than the tenant's.")


class AgentDefinition(BaseModel):
    """PUT /v1/agents/{name}: a reusable agent (system prompt, model, tools, limits, screening)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {
        "system": "You are the order desk. Answer briefly.", "tools": ["calculator", "order_lookup"],
        "limits": {"max_steps": 4, "max_cost_usd": 0.05}}})

    description: str | None = Field(default=None, max_length=1024)
    system: str | None = Field(default=None, max_length=16_000)
    model: str | None = Field(default=None, pattern=MODEL_ID_PATTERN)
    tools: list[Annotated[str, Field(pattern=NAME_PATTERN)]] = Field(default_factory=list, max_length=16,
                                                                      description="Built-in and registered tool names.")
    limits: AgentLimitsBody = Field(default_factory=AgentLimitsBody)
    screening: AgentScreeningBody = Field(default_factory=AgentScreeningBody)


class AgentView(AgentDefinition):
    name: str
    updated_at: str


class AgentList(BaseModel):
    agents: list[AgentView]


class Deleted(BaseModel):
    name: str
    deleted: Literal[True]
