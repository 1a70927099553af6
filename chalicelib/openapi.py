"""The OpenAPI 3.1 document: the declared operations (chalicelib/routes/), with the pydantic models the handlers validate with."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic.json_schema import models_json_schema

from .api_schemas import ConversationDeleted, ConversationView, ErrorBody, HealthResponse, InvokeRequest, InvokeResponse, UploadForm, UploadRequest
from .chat_completions import ChatCompletion, ChatCompletionRequest, ModelList, OpenAIErrorBody
from .jobs.models import JobAccepted, JobRequest, JobView
from .operation import TRACE_HEADER, Operation
from .registry.schemas import AgentDefinition, AgentList, AgentView, Deleted, ToolDefinition, ToolList, ToolView
from .routes import all_operations

_REF = "#/components/schemas/{model}"


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def describe(operation: Operation) -> dict[str, Any]:
    """The OpenAPI operation object for one declared operation."""
    error_model, error_text = ("OpenAIErrorBody", "Error (OpenAI's shape)") if operation.openai else ("ErrorBody", "Error")
    ok = _json(operation.ok_model, operation.ok_text)
    if operation.streams:
        ok["content"]["text/event-stream"] = {"schema": {"type": "string", "description": "data: <chat.completion.chunk JSON> events, then data: [DONE]"}}
    security: list[dict[str, list[str]]] = []
    if operation.role is not None:
        security = [{"ApiKey": []}, {"Bearer": []}] if operation.openai else [{"ApiKey": []}]
    described: dict[str, Any] = {"operationId": operation.operation_id, "security": security,
                                 "parameters": [TRACE_HEADER, *operation.parameters],
                                 "responses": {str(operation.ok_status): ok, **{str(status): _json(error_model, error_text) for status in operation.errors}}}
    if operation.body:
        described["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model=operation.body)}}}}
    return described


def describe_paths(operations: tuple[Operation, ...]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = describe(operation)
    return paths


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    models = [(m, "validation") for m in (InvokeRequest, JobRequest, UploadRequest, ChatCompletionRequest, ToolDefinition, AgentDefinition)] + [
        (m, "serialization") for m in (InvokeResponse, ErrorBody, HealthResponse, JobAccepted, JobView, UploadForm, ConversationView,
                                       ConversationDeleted, ChatCompletion, ModelList, OpenAIErrorBody, ToolView, ToolList, AgentView,
                                       AgentList, Deleted)]
    _, schemas = models_json_schema(models, ref_template=_REF)
    schemas["$defs"]["CostReport"] = {"type": "object", "description": "Totals, projection, break-even and recommendation (see README)."}
    schemas["$defs"]["OpenApiDocument"] = {"type": "object"}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crossover API", "version": "1.0.0", "description": "Run LLM agents: screened, metered, traced."},
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
                                "Bearer": {"type": "http", "scheme": "bearer", "description": "The same API key, as OpenAI's SDKs send it"}},
        },
        "paths": describe_paths(all_operations()),
    }
