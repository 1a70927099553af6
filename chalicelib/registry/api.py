"""HTTP handlers for /v1/tools and /v1/agents (chalicelib/routes/registry.py declares their operations). Everything
is per tenant: another tenant's tool or agent is a 404, exactly like one that does not exist."""
from __future__ import annotations

from typing import Any, Callable

from ..agent.tools import tool_spec_text
from ..api_schemas import InvokeRequest
from ..auth import Tenant
from ..errors import NotFound, ValidationFailed
from ..http import ApiRequest, ApiResponse, parse_body
from ..idempotency import IDEMPOTENCY_HEADER, run_once
from ..netguard import UnsafeDestination, check_url, vetted_address
from ..services import Services, get_services
from .agents import agent_request, agent_screening, agent_services
from .schemas import (NAME_PATTERN, TOOL_SECRET_PREFIX, AgentDefinition, AgentView, HttpsTarget, McpTarget, ToolDefinition,
                      ToolView, secret_name)
from .store import MAX_ITEMS_PER_KIND, Kind
from .toolbox import network_policy, tool_spec


def _name(request: ApiRequest) -> str:
    import re

    name = request.path_params.get("name", "")
    if not re.match(NAME_PATTERN, name):
        raise ValidationFailed("Names start with a letter and use letters, digits, '_' or '-' (at most 64).", {"field": "name"})
    return name


def _mutate(services: Services, request: ApiRequest, tenant: Tenant, scope: str, payload: Any, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a mutation once per Idempotency-Key (a replay returns the first answer)."""
    return run_once(services.settings.idempotency.table, services.settings.idempotency.ttl_s, f"{scope}#{tenant.tenant}",
                    request.headers.get(IDEMPOTENCY_HEADER), payload, work)


def check_tool(services: Services, tenant: str, name: str, definition: ToolDefinition, trace_id: str) -> None:
    """Registration rules that need the tenant, the network or screening (the body's own rules are in the schema)."""
    if services.tools.get(name) is not None:
        raise ValidationFailed(f"{name!r} is a built-in tool; choose another name.", {"field": "name"})
    target = definition.target
    if isinstance(target, (HttpsTarget, McpTarget)):
        if target.secret_arn and not secret_name(target.secret_arn).startswith(f"{TOOL_SECRET_PREFIX}{tenant}/"):
            raise ValidationFailed(f"The secret must be named {TOOL_SECRET_PREFIX}{tenant}/... .", {"field": "target.secret_arn"})
        policy = network_policy(services.settings)
        try:
            _, host, port = check_url(target.url, policy)
            vetted_address(host, port, policy)
        except UnsafeDestination as exc:
            raise ValidationFailed(f"The tool URL is not allowed: {exc}.", {"field": "target.url"}) from exc
    existing = {record["name"] for record in services.registry.list(tenant, "tool")}
    if name not in existing and len(existing) >= MAX_ITEMS_PER_KIND:
        raise ValidationFailed(f"A tenant may register at most {MAX_ITEMS_PER_KIND} tools.", {"max": MAX_ITEMS_PER_KIND})
    # Last, after the cheap refusals: its description and schema reach every model that is offered the tool.
    services.screening.require_allowed(tool_spec_text(tool_spec(name, definition)), tenant, trace_id, "registry.tool")


def check_agent(services: Services, tenant: str, name: str, definition: AgentDefinition, trace_id: str) -> None:
    """Registration rules of an agent that need the tenant or screening (the body's own rules are in the schema)."""
    registered = {record["name"] for record in services.registry.list(tenant, "tool")}
    unknown = sorted(set(definition.tools) - registered - set(services.tools.names()))
    if unknown:
        raise ValidationFailed("Unknown tool(s): register them first.", {"field": "tools", "unknown": unknown})
    existing = {record["name"] for record in services.registry.list(tenant, "agent")}
    if name not in existing and len(existing) >= MAX_ITEMS_PER_KIND:
        raise ValidationFailed(f"A tenant may define at most {MAX_ITEMS_PER_KIND} agents.", {"max": MAX_ITEMS_PER_KIND})
    # Last, after the cheap refusals, and under the agent's own screening (its overrides only tighten the tenant's
    # policy): the gate every invoke of this agent screens the system prompt with, so a prompt that would fail every
    # run is refused here instead of stored. Each invoke still screens it: the policy and the model may change since.
    if definition.system:
        agent_screening(services, definition).require_allowed(definition.system, tenant, trace_id, "registry.agent", role="system")


_VIEWS: dict[str, type] = {"tool": ToolView, "agent": AgentView}
_DEFINITIONS: dict[str, type] = {"tool": ToolDefinition, "agent": AgentDefinition}
# Each kind's check is the one home of its registration rules: (services, tenant, name, definition, trace_id).
_CHECKS: dict[str, Callable[[Services, str, str, Any, str], None]] = {"tool": check_tool, "agent": check_agent}


def put_item(kind: Kind, request: ApiRequest, tenant: Tenant) -> ApiResponse:
    services = get_services()
    name = _name(request)
    definition = parse_body(request, _DEFINITIONS[kind])

    def work() -> dict[str, Any]:
        _CHECKS[kind](services, tenant.tenant, name, definition, request.trace_id)
        record = services.registry.put(tenant.tenant, kind, name, definition.model_dump(mode="json"))
        return _VIEWS[kind].model_validate(record).model_dump(mode="json")

    return ApiResponse(_mutate(services, request, tenant, f"{kind}s-put#{name}", definition.model_dump(mode="json"), work))


def get_item(kind: Kind, request: ApiRequest, tenant: Tenant) -> ApiResponse:
    services = get_services()
    name = _name(request)
    record = services.registry.get(tenant.tenant, kind, name)
    if record is None:
        raise NotFound(f"No {kind} named {name!r}.", {kind: name})
    return ApiResponse(_VIEWS[kind].model_validate(record).model_dump(mode="json"))


def list_items(kind: Kind, request: ApiRequest, tenant: Tenant) -> ApiResponse:
    services = get_services()
    records = services.registry.list(tenant.tenant, kind)
    return ApiResponse({f"{kind}s": [_VIEWS[kind].model_validate(record).model_dump(mode="json") for record in records]})


def delete_item(kind: Kind, request: ApiRequest, tenant: Tenant) -> ApiResponse:
    services = get_services()
    name = _name(request)

    def work() -> dict[str, Any]:
        if not services.registry.delete(tenant.tenant, kind, name):
            raise NotFound(f"No {kind} named {name!r}.", {kind: name})
        return {"name": name, "deleted": True}

    return ApiResponse(_mutate(services, request, tenant, f"{kind}s-delete#{name}", {"name": name}, work))


def invoke_agent(request: ApiRequest, tenant: Tenant) -> ApiResponse:
    """POST /v1/agents/{name}/invoke: the body is an /v1/invoke body without system, model and tools."""
    from ..api import invoke_with

    services = get_services()
    name = _name(request)
    record = services.registry.get(tenant.tenant, "agent", name)
    if record is None:
        raise NotFound(f"No agent named {name!r}.", {"agent": name})
    agent = AgentDefinition.model_validate({key: value for key, value in record.items() if key not in ("name", "updated_at")})
    body = agent_request(parse_body(request, InvokeRequest), agent)
    return invoke_with(agent_services(services, agent), tenant, body, request, f"agent-invoke#{name}#{tenant.tenant}")
