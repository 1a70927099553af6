"""A tenant's own setting over the '*' default (chalicelib/tenant_default.py), and both stores that read so."""
from __future__ import annotations

import json
from dataclasses import dataclass

from chalicelib.screening.core import Policy
from chalicelib.screening.service import PolicyStore, TenantPolicy
from chalicelib.table import InMemoryTable
from chalicelib.tenant_default import DEFAULT_TENANT, fold, lookup_order, parse_stored
from chalicelib.tenant_settings import TenantSettings, in_memory_settings


@dataclass(frozen=True)
class Append:
    """An overlay that records the order it was laid in."""

    name: str

    def over(self, base: tuple[str, ...]) -> tuple[str, ...]:
        return (*base, self.name)


def test_the_default_is_read_before_the_tenant_so_the_tenants_own_value_wins():
    assert lookup_order("acme") == (DEFAULT_TENANT, "acme") == ("*", "acme")


def test_overlays_fold_in_order_over_the_base_and_nothing_stored_is_skipped():
    assert fold(("base",), [Append("*"), None, Append("acme")]) == ("base", "*", "acme")
    assert fold(("base",), [None, None]) == ("base",)


def test_a_missing_item_is_none_and_a_broken_one_is_none_and_logged(captured_logs):
    assert parse_stored(TenantSettings, None, "acme", "x.invalid") is None
    assert parse_stored(TenantSettings, {}, "acme", "x.invalid") is None
    assert parse_stored(TenantSettings, {"routing_mode": "auto", "tenant": "acme"}, "acme", "x.invalid") == \
        TenantSettings(routing_mode="auto")
    assert parse_stored(TenantSettings, {"routing_mode": "nonsense"}, "acme", "x.invalid") is None
    [line] = [json.loads(x) for x in captured_logs.getvalue().splitlines() if "x.invalid" in x]
    assert line["tenant"] == "acme" and line["level"] == "ERROR"


def test_tenant_settings_take_the_tenants_own_mode_over_the_default_and_a_broken_item_reads_as_empty():
    store = in_memory_settings({"*": TenantSettings(routing_mode="auto"), "acme": TenantSettings(routing_mode="bedrock")})
    assert store.effective("acme").routing_mode == "bedrock" and store.effective("other").routing_mode == "auto"
    assert store.effective("*").routing_mode == "auto"
    assert in_memory_settings().effective("acme") == TenantSettings()


def test_a_tenant_policy_without_a_default_lays_its_values_over_the_base():
    store = PolicyStore(InMemoryTable("policies", ("tenant",)), Policy(), cache_ttl_s=0)
    store.put("acme", TenantPolicy(max_chars=100))
    assert store.policy_for("acme") == Policy(max_chars=100) and store.policy_for("other") == Policy()
