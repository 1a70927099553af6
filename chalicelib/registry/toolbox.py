"""Registered tools inside the agent loop.

`tenant_registry` returns a ToolRegistry holding the built-in tools plus the tenant's registered tools
a request names, so the loop offers them to the model as Converse toolSpecs and runs them like any
other tool. A registered tool's `run` validates the model's arguments against the declared JSON
Schema, calls the target under the tool's timeout and size cap, validates the result, and logs and
counts the call (name, target kind, status, latency; never the payload). The loop then screens the
result (ScreeningService.tool_result_guard) before the model reads it.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from ..agent.tools import ToolRegistry
from ..config import Settings
from ..observability import logger, metrics
from .store import RegistryStore

if TYPE_CHECKING:  # loaded when a request names a registered tool: an invoke without one never needs them
    from ..auth import Tenant
    from ..netguard import NetworkPolicy
    from ..services import Services
    from .schemas import ToolDefinition
    from .targets import CallContext, SecretCache


class ToolInputInvalid(ValueError):
    """The model's arguments do not match the tool's input schema (goes back to the model)."""


def schema_errors(schema: dict[str, Any], value: Any, limit: int = 5) -> list[str]:
    """Validation messages for `value` against a JSON Schema; no remote $ref is ever fetched."""
    from jsonschema import Draft202012Validator
    from referencing import Registry

    validator = Draft202012Validator(schema, registry=Registry())
    messages = []
    for error in validator.iter_errors(value):
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        messages.append(f"{where}: {error.message}"[:200])
        if len(messages) >= limit:
            break
    return messages


def definition_from(record: dict[str, Any]) -> ToolDefinition:
    from .schemas import ToolDefinition

    return ToolDefinition.model_validate({key: value for key, value in record.items() if key not in ("name", "updated_at")})


def _caller(target: Any) -> Callable[[Any, Any, CallContext, str], Any]:
    """Dispatch by target kind (an explicit table, not attribute names built at run time)."""
    from .schemas import HttpsTarget, LambdaTarget, McpTarget
    from .targets import call_https, call_lambda, call_mcp

    callers: dict[type, Callable[[Any, Any, CallContext, str], Any]] = {
        LambdaTarget: lambda target, payload, ctx, _name: call_lambda(target, payload, ctx),
        HttpsTarget: lambda target, payload, ctx, _name: call_https(target, payload, ctx),
        McpTarget: call_mcp,
    }
    return callers[type(target)]


def tool_spec(name: str, definition: ToolDefinition) -> dict[str, Any]:
    """A registered tool as the model is offered it (Converse's toolSpec); also what registration screens."""
    return {"toolSpec": {"name": name, "description": definition.description, "inputSchema": {"json": definition.input_schema}}}


@dataclass
class RegisteredTool:
    """Quacks like agent.tools.Tool (tool_spec, run) so the loop needs no second code path."""

    name: str
    definition: ToolDefinition
    context: CallContext
    trace_id: str

    @property
    def description(self) -> str:
        return self.definition.description

    def tool_spec(self) -> dict[str, Any]:
        return tool_spec(self.name, self.definition)

    def run(self, raw_input: Any) -> Any:
        from .targets import ToolFailure

        started = time.perf_counter()
        status = "success"
        try:
            problems = schema_errors(self.definition.input_schema, raw_input)
            if problems:
                status = "invalid_input"
                raise ToolInputInvalid("invalid tool input: " + "; ".join(problems))
            try:
                result = _caller(self.definition.target)(self.definition.target, raw_input, self.context, self.name)
            except ToolFailure as exc:
                status = exc.status
                raise
            if self.definition.output_schema is not None:
                problems = schema_errors(self.definition.output_schema, result)
                if problems:
                    status = "invalid_output"
                    raise ToolFailure("the tool's result does not match its output schema", status)
            return result
        except Exception:
            if status == "success":
                status = "error"
            raise
        finally:
            _record_call(self.context.tenant, self.name, self.definition.target.type, status,
                         (time.perf_counter() - started) * 1000, self.trace_id)


_metrics_lock = threading.Lock()


def _record_call(tenant: str, name: str, kind: str, status: str, latency_ms: float, trace_id: str) -> None:
    logger.info("tool.call", extra={"trace_id": trace_id, "tenant": tenant, "tool": name, "target": kind,
                                    "status": status, "latency_ms": round(latency_ms, 2)})
    # Tools run on loop threads; Powertools Metrics keeps one shared buffer.
    with _metrics_lock:
        metrics.add_metric(name="RegisteredToolCalls", unit="Count", value=1)
        metrics.add_metric(name="RegisteredToolLatency", unit="Milliseconds", value=latency_ms)
        if status != "success":
            metrics.add_metric(name="RegisteredToolErrors", unit="Count", value=1)


class ToolClients:
    """boto3 clients for tool calls. With TOOL_ROLE_ARN (deployed), each tenant's calls run as the tool
    role assumed with the session tag tenant=<tenant>: IAM then lets them invoke only functions tagged
    crossover-tenant=<tenant> and read only secrets under crossover-tool/<tenant>/. Without it (local,
    tests) the process's own credentials are used."""

    def __init__(self, role_arn: str, secret_cache_s: float) -> None:
        self._role_arn = role_arn
        self._clients: dict[tuple[str, str, float], Any] = {}
        self._lock = threading.Lock()
        self._secret_cache_s = secret_cache_s

    @cached_property
    def secret(self) -> SecretCache:
        """Tool secrets, cached per process (made when a registered tool first needs one)."""
        from .targets import SecretCache

        return SecretCache(lambda tenant: self._client("secretsmanager", tenant, 5.0), self._secret_cache_s)

    def lambda_client(self, tenant: str, timeout_s: float) -> Any:
        return self._client("lambda", tenant, timeout_s)

    def _client(self, service: str, tenant: str, timeout_s: float) -> Any:
        key = (service, tenant if self._role_arn else "", timeout_s)
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                from botocore.config import Config

                # One attempt: a retried tool call could repeat its side effects.
                config = Config(connect_timeout=min(2.0, timeout_s), read_timeout=timeout_s, retries={"total_max_attempts": 1})
                found = self._session(tenant).client(service, config=config)
                self._clients[key] = found
            return found

    def _session(self, tenant: str) -> Any:
        if not self._role_arn:
            from .. import aws

            return aws.session()  # the process's one session (chalicelib/aws.py)
        import boto3
        import botocore.session
        from botocore.credentials import AssumeRoleCredentialFetcher, DeferredRefreshableCredentials

        base = botocore.session.Session()
        fetcher = AssumeRoleCredentialFetcher(base.create_client, base.get_credentials(), self._role_arn,
                                              extra_args={"RoleSessionName": f"tools-{tenant}"[:64], "DurationSeconds": 900,
                                                          "Tags": [{"Key": "tenant", "Value": tenant}]})
        tenant_session = botocore.session.Session()
        # botocore has no public setter for refreshable credentials; this is how its own providers attach them.
        tenant_session._credentials = DeferredRefreshableCredentials(method="assume-role", refresh_using=fetcher.fetch_credentials)
        return boto3.session.Session(botocore_session=tenant_session)


def network_policy(settings: Settings) -> NetworkPolicy:
    from ..netguard import NetworkPolicy

    return NetworkPolicy.from_settings(settings.registry.tool_allow_http, settings.registry.tool_network_allowlist)


def load_registered(store: RegistryStore, settings: Settings, clients: ToolClients, tenant: str, names: list[str],
                    builtin: ToolRegistry, trace_id: str) -> dict[str, RegisteredTool]:
    """The tenant's registered tools among `names` (built-in names and unknown names are skipped)."""
    found: dict[str, RegisteredTool] = {}
    if not names:
        return found
    from .schemas import McpTarget
    from .targets import CallContext

    for name in dict.fromkeys(names):
        if builtin.get(name) is not None:
            continue
        record = store.get(tenant, "tool", name)
        if record is None:
            continue
        definition = definition_from(record)
        if isinstance(definition.target, McpTarget):
            import mcp.client.streamable_http  # noqa: F401  (a second or more on a cold start: not inside the tool's timeout)
        context = CallContext(tenant=tenant, timeout_s=min(definition.timeout_s, settings.limits.tool_timeout_s),
                              max_bytes=definition.max_result_bytes, network=network_policy(settings),
                              lambda_client=clients.lambda_client, secret=clients.secret)
        found[name] = RegisteredTool(name, definition, context, trace_id)
    return found


def tenant_registry(builtin: ToolRegistry, registered: dict[str, RegisteredTool]) -> ToolRegistry:
    """A registry with the built-in tools and these registered ones (names never collide: registration
    refuses built-in names)."""
    combined = ToolRegistry()
    for name in builtin.names():
        combined.register(builtin.get(name))  # type: ignore[arg-type]
    for tool_ in registered.values():
        combined.register(tool_)  # type: ignore[arg-type]
    return combined


def with_tenant_tools(services: "Services", tenant: "Tenant", tools: list[Any] | None, trace_id: str) -> "Services":
    """The services for one request: the tool registry gains the tenant's registered tools it names
    (entries of `tools` that are not names, e.g. client tool declarations, are not ours)."""
    names = [name for name in tools or [] if isinstance(name, str)]
    registered = load_registered(services.registry, services.settings, services.tool_clients, tenant.tenant, names,
                                 services.tools, trace_id)
    return dataclasses.replace(services, tools=tenant_registry(services.tools, registered)) if registered else services
