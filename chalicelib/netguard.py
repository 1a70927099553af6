"""Outbound HTTP to tenant-registered endpoints without SSRF.

A tenant names a URL; we must never let it reach the metadata service, the VPC, or this host. The
rule: https only, and every address the host name resolves to must be a public unicast address.
The request then connects to the address we checked (not to a second lookup, so DNS rebinding
cannot swap it), with TLS still verified against the host name (SNI). Redirects are re-checked hop
by hop because every hop goes through the same transport.

Two settings loosen this, for local tests only: `TOOL_ALLOW_HTTP` and `TOOL_NETWORK_ALLOWLIST`
(CIDRs that may be reached even though private). The deploy template check refuses both.
"""
from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class UnsafeDestination(Exception):
    """The URL's scheme or (resolved) address is not one a tenant tool may reach."""


@dataclass(frozen=True)
class NetworkPolicy:
    allow_http: bool = False
    allowlist: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(default_factory=tuple)

    @classmethod
    def from_settings(cls, allow_http: bool, allowlist_csv: str) -> "NetworkPolicy":
        networks = tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in allowlist_csv.split(",") if cidr.strip())
        return cls(allow_http=allow_http, allowlist=networks)


def _unmapped(address: IPAddress) -> IPAddress:
    """The IPv4 address inside an IPv4-mapped, 6to4 or NAT64-less IPv6 address (checked as IPv4)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def address_refusal(raw: str, policy: NetworkPolicy) -> str | None:
    """None when `raw` may be connected to, else why not (private, loopback, link-local, ...)."""
    address = _unmapped(ipaddress.ip_address(raw.split("%", 1)[0]))  # a zone id never makes an address public
    if any(address in network for network in policy.allowlist):
        return None
    checks = (("loopback", address.is_loopback), ("link_local", address.is_link_local), ("private", address.is_private),
              ("multicast", address.is_multicast), ("reserved", address.is_reserved), ("unspecified", address.is_unspecified),
              ("not_global", not address.is_global))
    for reason, hit in checks:
        if hit:
            return reason
    return None


def check_url(url: str, policy: NetworkPolicy) -> tuple[str, str, int]:
    """Scheme, host and port of a URL a tool may call (before resolution). Raises UnsafeDestination."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise UnsafeDestination("URL is malformed") from exc
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and policy.allow_http):
        raise UnsafeDestination(f"scheme {scheme or '(none)'!r} is not allowed; use https")
    if parts.username or parts.password:
        raise UnsafeDestination("credentials in the URL are not allowed; use a secret header")
    if not host:
        raise UnsafeDestination("URL has no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeDestination("URL has an invalid port") from exc
    return scheme, host, port


def system_resolver(host: str, port: int) -> list[str]:
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


def vetted_address(host: str, port: int, policy: NetworkPolicy, resolve: Resolver = system_resolver) -> str:
    """The address to connect to: every address the host resolves to must pass (one bad answer refuses
    the host, so a name cannot mix a public address with a private one and let chance pick)."""
    try:
        ipaddress.ip_address(host)
        addresses = [host]
    except ValueError:
        try:
            addresses = resolve(host, port)
        except (OSError, UnicodeError, ValueError) as exc:  # no such name, or a name the resolver cannot encode
            raise UnsafeDestination(f"host {host!r} does not resolve") from exc
    if not addresses:
        raise UnsafeDestination(f"host {host!r} does not resolve")
    for address in addresses:
        reason = address_refusal(address, policy)
        if reason:
            raise UnsafeDestination(f"host {host!r} resolves to a {reason} address")
    return addresses[0]


def _pin(request: Any, policy: NetworkPolicy, resolve: Resolver) -> None:
    """Point an httpx2 request at the vetted address; Host header and TLS name stay the host name."""
    _, host, port = check_url(str(request.url), policy)
    address = vetted_address(host, port, policy, resolve)
    request.url = request.url.copy_with(host=address)
    request.extensions = {**request.extensions, "sni_hostname": host}


def _transports() -> tuple[type, type]:
    import httpx2

    class PinnedTransport(httpx2.HTTPTransport):
        def __init__(self, policy: NetworkPolicy, resolve: Resolver, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._policy, self._resolve = policy, resolve

        def handle_request(self, request: Any) -> Any:
            _pin(request, self._policy, self._resolve)
            return super().handle_request(request)

    class AsyncPinnedTransport(httpx2.AsyncHTTPTransport):
        def __init__(self, policy: NetworkPolicy, resolve: Resolver, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._policy, self._resolve = policy, resolve

        async def handle_async_request(self, request: Any) -> Any:
            _pin(request, self._policy, self._resolve)
            return await super().handle_async_request(request)

    return PinnedTransport, AsyncPinnedTransport


def safe_client(policy: NetworkPolicy, timeout_s: float, headers: dict[str, str] | None = None,
                resolve: Resolver = system_resolver, asynchronous: bool = False, max_redirects: int = 3) -> Any:
    """An httpx2 client (sync or async) whose every request, redirects included, passes the policy.
    Environment proxies are ignored: a proxy would connect somewhere we did not check."""
    import httpx2

    sync_transport, async_transport = _transports()
    transport = (async_transport if asynchronous else sync_transport)(policy, resolve)
    kind = httpx2.AsyncClient if asynchronous else httpx2.Client
    return kind(transport=transport, timeout=httpx2.Timeout(timeout_s), headers=headers or {}, trust_env=False,
                follow_redirects=True, max_redirects=max_redirects)


def refused_hosts(urls: Iterable[str], policy: NetworkPolicy, resolve: Resolver = system_resolver) -> list[str]:
    """The URLs among `urls` the policy refuses now (registration feedback; calls are checked again)."""
    refused = []
    for url in urls:
        try:
            _, host, port = check_url(url, policy)
            vetted_address(host, port, policy, resolve)
        except UnsafeDestination:
            refused.append(url)
    return refused
