"""The OpenAPI 3.1 document, generated from the pydantic models the handlers validate with."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic.json_schema import models_json_schema

from .api_schemas import ErrorBody, HealthResponse, InvokeRequest, InvokeResponse

_REF = "#/components/schemas/{model}"


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": _REF.format(model=ref)}}}}


def _errors(*statuses: int) -> dict[str, Any]:
    return {str(status): _json("ErrorBody", "Error") for status in statuses}


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    models = [(m, "validation") for m in (InvokeRequest,)] + [(m, "serialization") for m in (InvokeResponse, ErrorBody, HealthResponse)]
    _, schemas = models_json_schema(models, ref_template=_REF)
    api_key = [{"ApiKey": []}]
    trace_header = {"name": "X-Amzn-Trace-Id", "in": "header", "required": False, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crossover API", "version": "1.0.0", "description": "Run LLM agents: screened, metered, traced."},
        "components": {
            "schemas": schemas["$defs"],
            "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}},
        },
        "paths": {
            "/v1/health": {"get": {"operationId": "health", "security": [], "responses": {"200": _json("HealthResponse", "Service is up")}}},
            "/v1/invoke": {
                "post": {
                    "operationId": "invoke",
                    "security": api_key,
                    "parameters": [trace_header, {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string", "maxLength": 255}}],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": _REF.format(model="InvokeRequest")}}}},
                    "responses": {"200": _json("InvokeResponse", "The agent's answer"), **_errors(400, 401, 403, 409, 422, 429, 502, 504)},
                }
            },
        },
    }
