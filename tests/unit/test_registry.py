"""Pure parts of registered tools and agents: the SSRF rules, schema checks, agent tightening, the store twin."""
from __future__ import annotations

import ipaddress

import pytest

from chalicelib.netguard import NetworkPolicy, UnsafeDestination, address_refusal, check_url, vetted_address
from chalicelib.registry.agents import tightened
from chalicelib.registry.schemas import AgentScreeningBody, ToolDefinition, lambda_function_name, secret_name
from chalicelib.registry.store import InMemoryRegistryStore
from chalicelib.registry.toolbox import schema_errors
from chalicelib.screening import Policy

DEFAULT = NetworkPolicy()


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("169.254.169.254", "link_local"), ("fe80::1", "link_local"), ("fe80::1%eth0", "link_local"),
    ("10.0.0.1", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
    ("fc00::1", "private"), ("fd12:3456::1", "private"),
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link_local"), ("::ffff:10.0.0.1", "private"),
    ("2002:7f00:1::1", "loopback"),  # 6to4 wrapping 127.0.0.1
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("0.0.0.0", "private"), ("240.0.0.1", "private"),
    ("100.64.0.1", "not_global"),  # carrier-grade NAT
])
def test_private_loopback_link_local_multicast_and_reserved_addresses_are_refused(address, reason):
    assert address_refusal(address, DEFAULT) == reason


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address):
    assert address_refusal(address, DEFAULT) is None


def test_a_name_is_refused_when_any_of_its_addresses_is_private():
    resolve = {"mixed.example": ["8.8.8.8", "10.0.0.5"], "rebind.example": ["127.0.0.1"], "ok.example": ["8.8.4.4"]}
    lookup = lambda host, port: resolve[host]  # noqa: E731
    with pytest.raises(UnsafeDestination, match="private"):
        vetted_address("mixed.example", 443, DEFAULT, lookup)
    with pytest.raises(UnsafeDestination, match="loopback"):
        vetted_address("rebind.example", 443, DEFAULT, lookup)
    assert vetted_address("ok.example", 443, DEFAULT, lookup) == "8.8.4.4"


def test_localhost_resolves_to_loopback_and_is_refused():
    with pytest.raises(UnsafeDestination, match="loopback"):
        vetted_address("localhost", 443, DEFAULT)


@pytest.mark.parametrize("url, message", [
    ("http://8.8.8.8/x", "scheme 'http'"), ("ftp://8.8.8.8/x", "scheme 'ftp'"), ("file:///etc/passwd", "scheme 'file'"),
    ("https://user:pw@8.8.8.8/x", "credentials"), ("https:///x", "no host"),
])
def test_only_https_urls_without_credentials(url, message):
    with pytest.raises(UnsafeDestination, match=message):
        check_url(url, DEFAULT)


def test_the_test_allowance_opens_only_what_it_names():
    policy = NetworkPolicy.from_settings(True, "127.0.0.1/32")
    assert check_url("http://127.0.0.1:8080/x", policy) == ("http", "127.0.0.1", 8080)
    assert address_refusal("127.0.0.1", policy) is None
    assert address_refusal("::1", policy) == "loopback"
    assert address_refusal("169.254.169.254", policy) == "link_local"
    assert policy.allowlist == (ipaddress.ip_network("127.0.0.1/32"),)


def test_input_schema_is_checked_at_registration_and_arguments_at_call_time():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    definition = ToolDefinition.model_validate({"description": "d", "input_schema": schema,
                                                "target": {"type": "lambda", "function": "crossover-tool-x"}})
    assert schema_errors(definition.input_schema, {"n": 3}) == []
    assert schema_errors(definition.input_schema, {"n": 0}) == ["n: 0 is less than the minimum of 1"]
    assert schema_errors(definition.input_schema, {}) == ["(root): 'n' is a required property"]
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        ToolDefinition.model_validate({**definition.model_dump(), "input_schema": {"type": "object", "minProperties": -1}})


def test_a_remote_ref_is_refused_at_registration_and_never_fetched():
    schema = {"type": "object", "properties": {"x": {"$ref": "https://169.254.169.254/latest/meta-data/schema.json"}}}
    with pytest.raises(ValueError, match="only local \\$ref"):
        ToolDefinition.model_validate({"description": "d", "input_schema": schema, "target": {"type": "lambda", "function": "crossover-tool-x"}})
    with pytest.raises(Exception, match="Unresolvable|unresolvable"):  # and the validator itself has no retriever
        schema_errors(schema, {"x": 1})
    local = {"type": "object", "$defs": {"id": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/id"}}}
    assert schema_errors(local, {"x": 1}) == ["x: 1 is not of type 'string'"]


def test_function_and_secret_names_are_read_from_arns():
    assert lambda_function_name("arn:aws:lambda:us-east-1:123456789012:function:crossover-tool-a:live") == "crossover-tool-a"
    assert lambda_function_name("crossover-tool-a") == "crossover-tool-a"
    assert secret_name("arn:aws:secretsmanager:us-east-1:123456789012:secret:crossover-tool/dev/key-AbC123") == "crossover-tool/dev/key"
    assert secret_name("crossover-tool/dev/key") == "crossover-tool/dev/key"


def test_agent_screening_only_tightens():
    base = Policy(block_threshold=0.5, pii_action="redact", max_chars=1000)
    assert tightened(base, AgentScreeningBody(block_threshold=0.9, pii_action="redact", max_chars=5000)) == base
    stricter = tightened(base, AgentScreeningBody(block_threshold=0.2, pii_action="block", guardrail_enabled=True, max_chars=10))
    assert (stricter.block_threshold, stricter.pii_action, stricter.guardrail_enabled, stricter.max_chars) == (0.2, "block", True, 10)


def test_in_memory_store_keeps_tenants_and_kinds_apart():
    store = InMemoryRegistryStore()
    store.put("a", "tool", "x", {"description": "one"})
    store.put("a", "agent", "x", {"system": "s"})
    store.put("b", "tool", "y", {"description": "two"})
    assert [r["name"] for r in store.list("a", "tool")] == ["x"] and store.get("b", "tool", "x") is None
    assert store.get("a", "agent", "x")["system"] == "s"
    assert store.delete("a", "tool", "x") and not store.delete("a", "tool", "x")
