"""HTTP edge: body parsing, the stable error format, trace ids. The only place errors become responses."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar

from chalice import Response
from pydantic import BaseModel, ValidationError

from . import safe_json
from .errors import CrossoverError, ValidationFailed, from_aws_failure
from .observability import TRACE_HEADER, logger, metrics, trace_id_from
from .timing import Deadline

M = TypeVar("M", bound=BaseModel)

# Chalice rejects unlisted content types itself, with its own error body (even on GET routes, which
# default to JSON only), so every route accepts any type and parse_body answers non-JSON with ours.
ACCEPTED_CONTENT_TYPES = ["*/*"]
MAX_BODY_BYTES = 1_000_000


@dataclass
class ApiRequest:
    """What a handler needs from the HTTP request, independent of Chalice."""

    headers: Mapping[str, str]
    raw_body: bytes
    trace_id: str
    path_params: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    deadline: Deadline | None = None  # set before authentication (chalicelib.operation.Operation.run)


@dataclass
class ApiResponse:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def parse_body(request: ApiRequest, model: type[M]) -> M:
    """Decode and validate a JSON body; every failure is a 400 validation_error that says what to fix."""
    content_type = (request.headers.get("content-type") or "application/json").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise ValidationFailed("Send the body as JSON with Content-Type: application/json.", {"content_type": content_type})
    if len(request.raw_body) > MAX_BODY_BYTES:
        raise ValidationFailed(f"Body larger than {MAX_BODY_BYTES} bytes.", {"max_bytes": MAX_BODY_BYTES})
    if not request.raw_body.strip():
        raise ValidationFailed("Body must be a JSON object.", None)
    data = safe_json.loads_object(request.raw_body)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed("The request body is invalid.", validation_details(exc)) from exc


def validation_details(exc: ValidationError) -> list[dict[str, Any]]:
    # Without `input`: it may echo the prompt back into logs or caches.
    # A cross-field error has no location of its own: it names its field in ctx (api_schemas.combination_error).
    return [{"field": ".".join(str(part) for part in err["loc"]) or str((err.get("ctx") or {}).get("field", "")),
             "message": err["msg"], "type": err["type"]} for err in exc.errors()]


ErrorShape = Callable[[int, dict[str, Any]], Any]


def dispatch(headers: Mapping[str, str], raw_body: bytes | None, handler: Callable[[ApiRequest], ApiResponse],
             path_params: dict[str, str] | None = None, query: dict[str, str] | None = None,
             error_shape: ErrorShape | None = None) -> Response:
    """Run a handler; map our errors to the stable JSON error and anything else to a 500 without internals.
    `error_shape` re-shapes the error body for routes that speak another API's dialect (the OpenAI routes)."""
    started = time.perf_counter()
    lowered = {key.lower(): value for key, value in headers.items()}
    request = ApiRequest(lowered, raw_body or b"", trace_id_from(lowered), path_params or {}, query or {})
    try:
        result = handler(request)
    except CrossoverError as exc:
        logger.info("request.rejected", extra={"trace_id": request.trace_id, "code": exc.code, "status": exc.status})
        result = ApiResponse(exc.to_body(), exc.status, exc.headers)
    except Exception as exc:  # the last line of defence: log with stack, answer without it
        logger.exception("request.failed", extra={"trace_id": request.trace_id})
        outage = from_aws_failure(exc)
        result = ApiResponse(outage.to_body(), outage.status, outage.headers) if outage else ApiResponse(
            {"error": {"code": "internal_error", "message": "Internal error; quote the trace id when reporting it.", "details": {"trace_id": request.trace_id}}},
            500,
        )
    finally:
        metrics.add_metric(name="ApiLatency", unit="Milliseconds", value=(time.perf_counter() - started) * 1000)
        metrics.flush_metrics()
    if error_shape is not None and result.status >= 400:
        result.body = error_shape(result.status, result.body)
    return Response(body=result.body, status_code=result.status, headers={TRACE_HEADER: request.trace_id, **result.headers})
