"""Calling a registered tool's target: an AWS Lambda function, an HTTPS endpoint, or a remote MCP server.

Each caller takes the target, the (already validated) input and a `CallContext`, and returns the
result as JSON-able data or raises `ToolFailure` with a short reason of our own wording: a remote
error body is never passed on (it would reach the model without screening).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from .. import aws
from ..netguard import NetworkPolicy, UnsafeDestination, check_url, safe_client, system_resolver
from ..ttl_cache import TTLCache
from .schemas import HttpsTarget, LambdaTarget, McpTarget


E = TypeVar("E", bound=BaseException)


class ToolFailure(Exception):
    """A registered tool's call failed; `status` is what the call log and metrics record."""

    def __init__(self, message: str, status: str = "error") -> None:
        super().__init__(message)
        self.status = status


@dataclass
class CallContext:
    tenant: str
    timeout_s: float
    max_bytes: int
    network: NetworkPolicy
    lambda_client: Callable[[str, float], Any]        # (tenant, timeout_s) -> boto3 lambda client
    secret: Callable[[str, str], str]                 # (tenant, secret reference) -> secret value
    resolve: Callable[[str, int], list[str]] = system_resolver


def _decode(raw: bytes, max_bytes: int) -> Any:
    if len(raw) > max_bytes:
        raise ToolFailure(f"result larger than {max_bytes} bytes", "too_large")
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def call_lambda(target: LambdaTarget, payload: Any, ctx: CallContext) -> Any:
    from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError

    client = ctx.lambda_client(ctx.tenant, ctx.timeout_s)
    try:
        answer = client.invoke(FunctionName=target.function, InvocationType="RequestResponse", Payload=json.dumps(payload).encode())
    except (ReadTimeoutError, ConnectTimeoutError) as exc:
        raise ToolFailure(f"function did not answer within {ctx.timeout_s:g}s", "timeout") from exc
    except ClientError as exc:
        # AccessDenied here usually means the function lacks the tag crossover-tenant=<tenant>.
        raise ToolFailure(f"function call refused: {aws.error_code(exc) or 'error'}") from exc
    raw = answer["Payload"].read(ctx.max_bytes + 1)
    if answer.get("FunctionError"):
        raise ToolFailure(f"function failed ({answer['FunctionError']})", "function_error")
    return _decode(raw, ctx.max_bytes)


def _headers(target: HttpsTarget | McpTarget, ctx: CallContext) -> dict[str, str]:
    return {target.secret_header: ctx.secret(ctx.tenant, target.secret_arn)} if target.secret_arn else {}


def call_https(target: HttpsTarget, payload: Any, ctx: CallContext) -> Any:
    import httpx2

    try:
        with safe_client(ctx.network, ctx.timeout_s, _headers(target, ctx), ctx.resolve) as http:
            with http.stream("POST", target.url, json=payload, headers={"accept": "application/json"}) as response:
                if not 200 <= response.status_code < 300:
                    raise ToolFailure(f"endpoint answered HTTP {response.status_code}", "http_error")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > ctx.max_bytes:
                        raise ToolFailure(f"result larger than {ctx.max_bytes} bytes", "too_large")
    except UnsafeDestination as exc:
        raise ToolFailure(f"destination refused: {exc}", "refused") from exc
    except httpx2.TimeoutException as exc:
        raise ToolFailure(f"endpoint did not answer within {ctx.timeout_s:g}s", "timeout") from exc
    except httpx2.TooManyRedirects as exc:
        raise ToolFailure("too many redirects", "http_error") from exc
    except httpx2.HTTPError as exc:
        raise ToolFailure(f"endpoint unreachable ({exc.__class__.__name__})", "http_error") from exc
    return _decode(bytes(body), ctx.max_bytes)


def _inner(exc: BaseException, kind: type[E]) -> E | None:
    """The first `kind` exception inside an (anyio) exception group or cause chain, if any."""
    if isinstance(exc, kind):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _inner(inner, kind)
        if found:
            return found
    return _inner(exc.__cause__, kind) if exc.__cause__ else None


def call_mcp(target: McpTarget, payload: Any, ctx: CallContext, default_name: str) -> Any:
    """List the server's tools (the remote tool must exist), then call it; the whole session is bounded
    by the tool's timeout."""
    import anyio

    check_url(target.url, ctx.network)  # fail fast on the scheme; each connection re-checks the address
    remote_name = target.tool or default_name
    headers = _headers(target, ctx)

    async def session() -> Any:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        with anyio.fail_after(ctx.timeout_s):
            async with safe_client(ctx.network, ctx.timeout_s, headers, ctx.resolve, asynchronous=True) as http:
                async with Client(streamable_http_client(target.url, http_client=http), read_timeout_seconds=ctx.timeout_s,
                                  cache=None) as client:
                    listed = await client.list_tools()
                    if remote_name not in {tool.name for tool in listed.tools}:
                        raise ToolFailure(f"the MCP server has no tool {remote_name!r}")
                    return await client.call_tool(remote_name, payload)

    try:
        result = anyio.run(session)
    except Exception as exc:  # anyio wraps what happens inside the client's task group in exception groups
        failure, unsafe, timeout = _inner(exc, ToolFailure), _inner(exc, UnsafeDestination), _inner(exc, TimeoutError)
        if failure:
            raise failure from exc
        if unsafe:
            raise ToolFailure(f"destination refused: {unsafe}", "refused") from exc
        if timeout:
            raise ToolFailure(f"MCP server did not answer within {ctx.timeout_s:g}s", "timeout") from exc
        raise ToolFailure(f"MCP call failed ({exc.__class__.__name__})") from exc
    if result.is_error:
        raise ToolFailure("the MCP tool reported an error", "tool_error")
    if result.structured_content is not None:
        value: Any = result.structured_content
    else:
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        value = _decode("\n".join(texts).encode(), ctx.max_bytes)  # servers often send JSON as text
    if len(json.dumps(value, default=str).encode()) > ctx.max_bytes:
        raise ToolFailure(f"result larger than {ctx.max_bytes} bytes", "too_large")
    return value


class SecretCache:
    """Secrets Manager values, cached briefly per (tenant, secret): a rotated secret is picked up within
    the TTL. Only secrets under crossover-tool/<tenant>/ are asked for (checked at registration, and by
    IAM through the tool role's session tag)."""

    def __init__(self, client_for: Callable[[str], Any], ttl_s: float) -> None:
        self._client_for = client_for
        self._values: TTLCache[str] = TTLCache(ttl_s)

    def __call__(self, tenant: str, reference: str) -> str:
        return self._values.get_or_load((tenant, reference), lambda: self._fetch(tenant, reference))

    def _fetch(self, tenant: str, reference: str) -> str:
        from botocore.exceptions import ClientError

        try:
            return self._client_for(tenant).get_secret_value(SecretId=reference)["SecretString"]
        except ClientError as exc:
            raise ToolFailure(f"secret unavailable: {aws.error_code(exc) or 'error'}") from exc
