"""HTTP handlers: each takes an ApiRequest (and, when its operation has a role, the authenticated Tenant)
and returns an ApiResponse. chalicelib/routes/ declares the operations that route to them."""
from __future__ import annotations

from .api_schemas import InvokeRequest
from .auth import Tenant
from .http import ApiRequest, ApiResponse, parse_body
from .idempotency import IDEMPOTENCY_HEADER, lambda_remaining_s, run_once, stable_request_id
from .invoke import invoke as run_invoke
from .services import Services, get_services
from .timing import Deadline, request_deadline

MODEL_VERSION_HEADER = "X-Model-Version"


def authenticate(request: ApiRequest, role: str = "invoke") -> Tenant:
    tenant = get_services().tenants.authenticate(dict(request.headers))
    tenant.require_role(role)
    return tenant


def health(_: ApiRequest) -> ApiResponse:
    return ApiResponse({"status": "ok"})


def method_not_allowed(_: ApiRequest, method: str, allowed: list[str]) -> ApiResponse:
    from .errors import MethodNotAllowed

    raise MethodNotAllowed(f"{method} is not supported here.", {"method": method, "allowed": allowed},
                           headers={"Allow": ", ".join(allowed)})


def openapi(_: ApiRequest) -> ApiResponse:
    from .openapi import openapi_document

    return ApiResponse(openapi_document())


def invoke(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    body = parse_body(request, InvokeRequest)
    return invoke_with(get_services(), tenant, body, request, f"invoke#{tenant.tenant}")


def api_deadline() -> Deadline | None:
    """Take it first: API Gateway's 29 s started before anything a handler does."""
    return request_deadline(lambda_remaining_s(), behind_api_gateway=True)


def invoke_with(services: Services, tenant: Tenant, body: InvokeRequest, request: ApiRequest, scope: str) -> ApiResponse:
    """Run one invoke (also a named agent's) once per Idempotency-Key, with the tenant's registered tools."""
    from .registry.toolbox import with_tenant_tools

    key = request.headers.get(IDEMPOTENCY_HEADER)
    request_id = stable_request_id(scope, key) if key else None
    answer = run_once(
        services.settings.idempotency.table, services.settings.idempotency.ttl_s, scope, key,
        body.model_dump(mode="json"),
        lambda: run_invoke(with_tenant_tools(services, tenant, body.tools, request.trace_id), tenant, body, request.trace_id, request_id,
                           deadline=request.deadline),
    )
    return ApiResponse(answer, 200, {MODEL_VERSION_HEADER: answer["model"]})


def get_conversation(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    """GET /v1/conversations/{conversation_id}: the turns, usage and cost per turn and in total, pending tool calls."""
    from .conversations.view import conversation_view

    return ApiResponse(conversation_view(get_services().conversations, tenant.tenant, request.path_params.get("conversation_id", "")))


def delete_conversation(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    """DELETE /v1/conversations/{conversation_id}: erase it with every turn and tool result."""
    from .conversations.view import erase_conversation

    services = get_services()
    conversation_id = request.path_params.get("conversation_id", "")
    answer = run_once(services.settings.idempotency.table, services.settings.idempotency.ttl_s, f"conversations#{tenant.tenant}",
                      request.headers.get(IDEMPOTENCY_HEADER), {"delete": conversation_id},
                      lambda: erase_conversation(services.conversations, tenant.tenant, conversation_id))
    return ApiResponse(answer)


def chat_completions(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    """POST /v1/chat/completions (OpenAI-compatible; errors in OpenAI's shape, see chalicelib/routes/invoke.py)."""
    from .chat_completions import ChatCompletionRequest, chat_completion, stream_events

    services = get_services()
    body = parse_body(request, ChatCompletionRequest)
    key = request.headers.get(IDEMPOTENCY_HEADER)
    scope = f"chat#{tenant.tenant}"
    request_id = stable_request_id(scope, key) if key else None
    completion = run_once(services.settings.idempotency.table, services.settings.idempotency.ttl_s, scope, key,
                          body.model_dump(mode="json"),
                          lambda: chat_completion(services, tenant, body, request.trace_id, request_id, request.deadline))
    headers = {MODEL_VERSION_HEADER: completion["model"]}
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        return ApiResponse(stream_events(completion, include_usage), 200,
                           {**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    return ApiResponse(completion, 200, headers)


def list_models(_: ApiRequest, __: Tenant) -> ApiResponse:
    """GET /v1/models (OpenAI-compatible)."""
    from .chat_completions import model_list

    return ApiResponse(model_list(get_services()))


def cost_report(request: ApiRequest, _: Tenant) -> ApiResponse:
    """GET /v1/cost/report?days=N (ops role): totals, projection, break-even and recommendation."""
    from .errors import ValidationFailed
    from .meter.service import report_for

    raw_days = request.query.get("days", "30")
    if not raw_days.isdigit() or not 1 <= int(raw_days) <= 366:
        raise ValidationFailed("days must be an integer from 1 to 366.", {"field": "days"})
    services = get_services()
    report = report_for(services.ledger, services.decisions, services.catalog, int(raw_days), services.settings.meter.ops_ready,
                        budgets=services.budgets)
    return ApiResponse(report)


def submit_job(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    from .jobs.models import MAX_INLINE_BYTES, JobRequest
    from .jobs.service import job_service
    from .errors import ValidationFailed

    services = get_services()
    if len(request.raw_body) > MAX_INLINE_BYTES:
        raise ValidationFailed(f"Inline job input is limited to {MAX_INLINE_BYTES} bytes; upload larger inputs to S3 and pass input_uri.",
                               {"max_bytes": MAX_INLINE_BYTES})
    body = parse_body(request, JobRequest)
    key = request.headers.get(IDEMPOTENCY_HEADER)
    jobs = job_service(services)
    accepted = run_once(services.settings.idempotency.table, services.settings.idempotency.ttl_s, f"jobs#{tenant.tenant}", key,
                        body.model_dump(mode="json"), lambda: jobs.submit(tenant, body, request.trace_id, key))
    return ApiResponse(accepted, 202)


def get_job(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    from .jobs.service import job_service

    return ApiResponse(job_service(get_services()).view(tenant, request.path_params.get("job_id", "")))


def cancel_job(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    from .jobs.service import job_service

    return ApiResponse(job_service(get_services()).cancel(tenant, request.path_params.get("job_id", "")))


def create_upload(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    """POST /v1/uploads: a presigned POST for one object under the caller's own incoming prefix."""
    from .api_schemas import UploadRequest
    from .uploads import create_upload as presign

    services = get_services()
    body = parse_body(request, UploadRequest)
    settings = services.settings
    key = request.headers.get(IDEMPOTENCY_HEADER)
    form = run_once(settings.idempotency.table, settings.idempotency.ttl_s, f"uploads#{tenant.tenant}", key, body.model_dump(mode="json"),
                    lambda: presign(settings.storage.data_bucket, settings.storage.incoming_prefix, tenant.tenant, body, settings.storage.presign_ttl_s,
                                    settings.storage.kms_key_id))
    return ApiResponse(form, 201)
