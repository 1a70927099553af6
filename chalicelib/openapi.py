"""The OpenAPI 3.1 document, generated from the pydantic models the handlers validate with."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic.json_schema import models_json_schema

from .api_schemas import ConversationDeleted, ConversationView, ErrorBody, HealthResponse, InvokeRequest, InvokeResponse, UploadForm, UploadRequest
from .chat_completions import ChatCompletion, ChatCompletionRequest, ModelList, OpenAIErrorBody
from .jobs.models import JobAccepted, JobRequest, JobView
from .registry.schemas import AgentDefinition, AgentList, AgentView, Deleted, ToolDefinition, ToolList, ToolView

_REF = "#/components/schemas/{model}"


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(status): _json("ErrorBody", "Error") for status in statuses}


def _operation(operation_id: str, ok_status: int, ok_model: str, ok_text: str, errors: tuple[int, ...], *,
               security: bool = True, body: str | None = None, parameters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": operation_id, "security": [{"ApiKey": []}] if security else [],
                                 "parameters": [TRACE_HEADER_PARAMETER, *(parameters or [])],
                                 "responses": {str(ok_status): _json(ok_model, ok_text), **_errors(*errors)}}
    if body:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model=body)}}}}
    return operation


def _openai(operation: dict[str, Any], streams: bool = False) -> dict[str, Any]:
    """An OpenAI-compatible operation: Bearer auth as well, errors in OpenAI's shape, streamed answers as SSE."""
    operation["security"] = [{"ApiKey": []}, {"Bearer": []}]
    for status, response in operation["responses"].items():
        if status.startswith(("4", "5")):
            operation["responses"][status] = _json("OpenAIErrorBody", "Error (OpenAI's shape)")
    if streams:
        ok = next(iter(operation["responses"].values()))
        ok["content"]["text/event-stream"] = {"schema": {"type": "string", "description": "data: <chat.completion.chunk JSON> events, then data: [DONE]"}}
    return operation


TRACE_HEADER_PARAMETER = {"name": "X-Amzn-Trace-Id", "in": "header", "required": False, "schema": {"type": "string"}}
IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string", "maxLength": 255}}
CONVERSATION_ID = {"name": "conversation_id", "in": "path", "required": True, "schema": {"type": "string"}}
JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
NAME = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "pattern": r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"}}
# Every authenticated operation can answer 401 (no or bad key), 403 (role), 503 (AWS dependency down).
AUTHENTICATED = (401, 403, 503)


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    models = [(m, "validation") for m in (InvokeRequest, JobRequest, UploadRequest, ChatCompletionRequest, ToolDefinition, AgentDefinition)] + [
        (m, "serialization") for m in (InvokeResponse, ErrorBody, HealthResponse, JobAccepted, JobView, UploadForm, ConversationView,
                                       ConversationDeleted, ChatCompletion, ModelList, OpenAIErrorBody, ToolView, ToolList, AgentView,
                                       AgentList, Deleted)]
    _, schemas = models_json_schema(models, ref_template=_REF)
    schemas["$defs"]["CostReport"] = {"type": "object", "description": "Totals, projection, break-even and recommendation (see README)."}
    schemas["$defs"]["OpenApiDocument"] = {"type": "object"}
    days = {"name": "days", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1, "maximum": 366, "default": 30}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crossover API", "version": "1.0.0", "description": "Run LLM agents: screened, metered, traced."},
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
                                "Bearer": {"type": "http", "scheme": "bearer", "description": "The same API key, as OpenAI's SDKs send it"}},
        },
        "paths": {
            "/v1/health": {"get": _operation("health", 200, "HealthResponse", "Service is up", (), security=False)},
            "/v1/openapi.json": {"get": _operation("openapi", 200, "OpenApiDocument", "This document", (), security=False)},
            "/v1/invoke": {"post": _operation("invoke", 200, "InvokeResponse", "The agent's answer",
                                              (400, *AUTHENTICATED, 402, 404, 409, 422, 429, 502, 504), body="InvokeRequest",
                                              parameters=[IDEMPOTENCY_KEY])},
            "/v1/jobs": {"post": _operation("submitJob", 202, "JobAccepted", "Job accepted (or the one this Idempotency-Key made)",
                                            (400, *AUTHENTICATED, 404, 409, 422), body="JobRequest", parameters=[IDEMPOTENCY_KEY])},
            "/v1/jobs/{job_id}": {
                "get": _operation("getJob", 200, "JobView", "The job, with a short-lived result URL when it succeeded",
                                  (*AUTHENTICATED, 404), parameters=[JOB_ID]),
                "delete": _operation("cancelJob", 200, "JobView", "The job after cancellation", (*AUTHENTICATED, 404), parameters=[JOB_ID]),
            },
            "/v1/uploads": {"post": _operation("createUpload", 201, "UploadForm",
                                               "A presigned POST (SigV4, short-lived) for one object under the caller's incoming/ prefix",
                                               (400, *AUTHENTICATED, 409, 422), body="UploadRequest", parameters=[IDEMPOTENCY_KEY])},
            "/v1/conversations/{conversation_id}": {
                "get": _operation("getConversation", 200, "ConversationView", "The stored turns, with usage and cost per turn and in total",
                                  (*AUTHENTICATED, 404), parameters=[CONVERSATION_ID]),
                "delete": _operation("deleteConversation", 200, "ConversationDeleted", "Erased, with every turn and tool result",
                                     (*AUTHENTICATED, 404, 409, 422), parameters=[CONVERSATION_ID, IDEMPOTENCY_KEY]),
            },
            "/v1/chat/completions": {"post": _openai(_operation(
                "createChatCompletion", 200, "ChatCompletion", "OpenAI-compatible completion (text/event-stream chunks when stream is true)",
                (400, *AUTHENTICATED, 402, 409, 422, 429, 502, 504), body="ChatCompletionRequest", parameters=[IDEMPOTENCY_KEY]), streams=True)},
            "/v1/models": {"get": _openai(_operation("listModels", 200, "ModelList", "Models and aliases (OpenAI-compatible)", AUTHENTICATED))},
            **_registry_paths(),
            "/v1/cost/report": {"get": _operation("costReport", 200, "CostReport", "Cost report (ops role)", (400, *AUTHENTICATED),
                                                  parameters=[days])},
        },
    }


def _registry_paths() -> dict[str, Any]:
    """/v1/tools and /v1/agents: per tenant; another tenant's item is a 404 like a missing one."""
    mutate = [NAME, IDEMPOTENCY_KEY]
    paths: dict[str, Any] = {}
    for kind, model in (("tool", "Tool"), ("agent", "Agent")):
        title = kind.capitalize()
        paths[f"/v1/{kind}s"] = {"get": _operation(f"list{title}s", 200, f"{model}List", f"The tenant's {kind}s", AUTHENTICATED)}
        paths[f"/v1/{kind}s/{{name}}"] = {
            "put": _operation(f"put{title}", 200, f"{model}View", f"The {kind} as stored (created or replaced)", (400, *AUTHENTICATED, 409, 422),
                              body=f"{model}Definition", parameters=mutate),
            "get": _operation(f"get{title}", 200, f"{model}View", f"The {kind}", (400, *AUTHENTICATED, 404), parameters=[NAME]),
            "delete": _operation(f"delete{title}", 200, "Deleted", f"The {kind} was deleted", (400, *AUTHENTICATED, 404, 409, 422),
                                 parameters=mutate),
        }
    paths["/v1/agents/{name}/invoke"] = {"post": _operation(
        "invokeAgent", 200, "InvokeResponse", "The agent's answer (an /v1/invoke body; system, model and tools come from the agent)",
        (400, *AUTHENTICATED, 402, 404, 409, 422, 429, 502, 504), body="InvokeRequest", parameters=mutate)}
    return paths
