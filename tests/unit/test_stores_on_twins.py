"""Conversations and API keys on the table's in-memory twin (DynamoDB's semantics: test_table_contract.py)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.auth import TenantStore, hash_api_key
from chalicelib.conversations.store import Conversation, ConversationConflict, InMemoryConversationStore, Turn
from chalicelib.errors import Unauthenticated
from chalicelib.core import Usage
from chalicelib.table import InMemoryTable


def turn(seq: int, cost: str | None = "0.002") -> Turn:
    return Turn(seq=seq, messages=[{"role": "user", "content": [{"text": f"q{seq}"}]}], usage=Usage(input_tokens=10, output_tokens=2),
                cost_usd=Decimal(cost) if cost is not None else None, stop_reason="end_turn", model="m", request_id=f"r{seq}",
                created_at="2026-12-03T12:00:00+00:00")


def test_a_conversation_round_trips_and_a_stale_append_is_a_conflict() -> None:
    store = InMemoryConversationStore()
    start = Conversation("acme", "conv-1", "t0", "t0", 1_900_000_000, system="be brief", tools=[{"name": "x"}])
    store.create(start)
    assert store.get("acme", "conv-1") == start and store.get("other", "conv-1") is None
    first = start.after(turn(1), "t1", 1_900_000_100, {"tool_uses": [1.5]}, start.system, start.tools)
    store.append(start, first, turn(1))
    with pytest.raises(ConversationConflict):
        store.append(start, first, turn(1))  # a second request that read the same state
    second = first.after(turn(2, cost=None), "t2", 1_900_000_200, None, first.system, first.tools, "screen-abc")
    store.append(first, second, turn(2, cost=None))
    assert store.get("acme", "conv-1") == second and second.screened_as == "screen-abc"
    assert second.total_cost() is None and second.cost_usd == Decimal("0.002")
    assert store.turns("acme", "conv-1") == [turn(1), turn(2, cost=None)]


def test_deleting_a_conversation_erases_its_turns_only() -> None:
    store = InMemoryConversationStore()
    for cid in ("conv-1", "conv-10"):
        c = Conversation("acme", cid, "t0", "t0", 1)
        store.create(c)
        store.append(c, c.after(turn(1), "t1", 2, None, None, None), turn(1))
    assert store.delete("acme", "conv-1") is True
    assert store.get("acme", "conv-1") is None and store.turns("acme", "conv-1") == []
    assert store.get("acme", "conv-10") is not None and len(store.turns("acme", "conv-10")) == 1
    assert store.delete("acme", "conv-1") is False


def test_api_keys_are_looked_up_by_digest_and_unknown_keys_are_cached_too() -> None:
    table = InMemoryTable("tenants", ("key_hash",))
    tenants = TenantStore(table, cache_ttl_s=60)
    tenants.put("acme", "secret-key", ("invoke", "ops"))
    assert all("secret-key" not in str(item) for item in table.items())
    found = tenants.authenticate({"authorization": "Bearer secret-key"})
    assert (found.tenant, found.roles) == ("acme", ("invoke", "ops")) and tenants.exists("acme")
    with pytest.raises(Unauthenticated):
        tenants.authenticate({"x-api-key": "late-key"})
    tenants.put("beta", "late-key")
    assert tenants.lookup(hash_api_key("late-key")) is None  # the miss stays cached for the TTL
    assert TenantStore(table, cache_ttl_s=0).lookup(hash_api_key("late-key")).tenant == "beta"


def test_screening_policies_fold_the_default_under_the_tenant_and_a_broken_item_keeps_the_base() -> None:
    from chalicelib.screening.core import Policy
    from chalicelib.screening.service import PolicyStore, TenantPolicy

    table = InMemoryTable("policies", ("tenant",))
    store = PolicyStore(table, Policy(), cache_ttl_s=60)
    store.put("*", TenantPolicy(max_chars=8_000, block_threshold=0.7))
    store.put("acme", TenantPolicy(block_threshold=0.9))
    acme, other = store.policy_for("acme"), store.policy_for("other")
    assert (acme.block_threshold, acme.max_chars) == (0.9, 8_000)  # the tenant's own value over the account default
    assert (other.block_threshold, other.max_chars) == (0.7, 8_000)
    table.put({"tenant": "acme", "block_threshold": "not a number"})  # written around the store: invalid
    assert store.policy_for("acme").block_threshold == 0.9  # cached for cache_ttl_s
    store.put("beta", TenantPolicy(max_chars=100))  # any put drops every cached policy (the default is folded into each)
    assert store.policy_for("acme").block_threshold == 0.7  # a broken item never opens the gate: the default stands
