"""One declaration per HTTP operation: method, path, handler, request and response models, errors, role.

Each capability's blueprint (chalicelib/routes/) registers its operations with Chalice from these
declarations, and chalicelib/openapi.py describes the same declarations: a route cannot exist
without its description, nor be described without existing. The role is checked here, before the
handler runs, so a handler receives an authenticated tenant.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable

from chalice import Blueprint, Chalice, Response

from .auth import Tenant
from .http import ACCEPTED_CONTENT_TYPES, ApiRequest, ApiResponse, ErrorShape, dispatch

# Methods a route can be asked for (OPTIONS stays with API Gateway / Chalice for CORS preflight).
HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})
# Every authenticated operation can answer 401 (no or bad key), 403 (role), 503 (AWS dependency down).
AUTHENTICATED = (401, 403, 503)
# An invoke-shaped operation's errors: bad body, budget, unknown model/agent, key reuse, throttling, model down, deadline.
INVOKE_ERRORS = (400, *AUTHENTICATED, 402, 404, 409, 422, 429, 502, 504)

TRACE_HEADER = {"name": "X-Amzn-Trace-Id", "in": "header", "required": False, "schema": {"type": "string"}}
IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {"type": "string", "maxLength": 255}}


def path_parameter(name: str, pattern: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **({"pattern": pattern} if pattern else {})}
    return {"name": name, "in": "path", "required": True, "schema": schema}


@dataclass(frozen=True)
class Operation:
    """One method on one path. `handler(request, tenant)` for an authenticated operation (role set),
    `handler(request)` for a public one (role None). Models are named by their OpenAPI component."""

    operation_id: str
    method: str
    path: str
    handler: Callable[..., ApiResponse]
    ok_status: int
    ok_model: str
    ok_text: str
    errors: tuple[int, ...] = ()
    role: str | None = "invoke"
    body: str | None = None
    parameters: tuple[dict[str, Any], ...] = ()
    openai: bool = False  # OpenAI-compatible: Bearer auth too, errors in OpenAI's shape
    streams: bool = False  # may answer text/event-stream (OpenAI's chunk stream)

    def run(self, request: ApiRequest) -> ApiResponse:
        from .api import api_deadline, authenticate

        # First: API Gateway's 29 s started before anything this request does (authentication included).
        request.deadline = api_deadline()
        if self.role is None:
            return self.handler(request)
        tenant: Tenant = authenticate(request, self.role)
        return self.handler(request, tenant)

    @property
    def error_shape(self) -> ErrorShape | None:
        if not self.openai:
            return None
        from .chat_completions import openai_error

        return openai_error


def answer(app: Chalice, operation_run: Callable[[ApiRequest], ApiResponse], error_shape: ErrorShape | None) -> Response:
    """Run one operation on Chalice's current request (the Lambda context first: idempotency needs its clock)."""
    from .idempotency import use_lambda_context

    use_lambda_context(app.lambda_context)
    request = app.current_request
    return dispatch(request.headers, request.raw_body, operation_run, request.uri_params, request.query_params, error_shape)


def blueprint(import_name: str, operations: tuple[Operation, ...]) -> Blueprint:
    """A Chalice blueprint with one route per declared operation."""
    routes = Blueprint(import_name)
    for operation in operations:
        _register(routes, operation)
    return routes


def _register(routes: Blueprint, operation: Operation) -> None:
    def view(**_uri_params: str) -> Response:  # the handler reads them from ApiRequest.path_params
        return answer(routes.current_app, operation.run, operation.error_shape)

    view.__name__ = view.__qualname__ = operation.operation_id  # Chalice names the route after its view function
    routes.route(operation.path, methods=[operation.method], content_types=ACCEPTED_CONTENT_TYPES)(view)


def handler(module: str, name: str, *bound: Any) -> Callable[..., ApiResponse]:
    """The handler `name` of `module`, imported on its operation's first call (`bound` arguments first, as
    functools.partial): declaring a route loads nothing of it, so `import app` (every Lambda's cold start)
    does not load the capabilities a function never serves."""

    def call(*args: Any) -> ApiResponse:
        return getattr(import_module(module), name)(*bound, *args)  # type: ignore[no-any-return]

    call.__qualname__ = f"{module}.{name}"
    return call


def answer_other_methods(app: Chalice, operations: tuple[Operation, ...]) -> None:
    """Any other method on a known path: our 405 with Allow, rather than Chalice's body (API Gateway routes
    these here too). Called after every blueprint is registered, so it sees every route. On the
    OpenAI-compatible paths the 405 is in OpenAI's shape, like every other error there."""
    allowed = {path: sorted(methods) for path, methods in app.routes.items()}
    openai_paths = frozenset(operation.path for operation in operations if operation.openai)

    def method_not_allowed(**_uri_params: str) -> Response:
        from .api import method_not_allowed as refuse
        from .chat_completions import openai_error

        path = app.current_request.context["resourcePath"]
        method = app.current_request.method
        return answer(app, lambda request: refuse(request, method, allowed[path]), openai_error if path in openai_paths else None)

    for path, methods in allowed.items():
        app.route(path, methods=sorted(HTTP_METHODS - set(methods)), content_types=ACCEPTED_CONTENT_TYPES)(method_not_allowed)
