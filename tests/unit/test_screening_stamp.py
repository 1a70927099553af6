"""The screening stamp a stored conversation keeps, and re-screening its history (chalicelib/invoke.screened_history)."""
from __future__ import annotations

from types import SimpleNamespace

from chalicelib.conversations.store import Conversation
from chalicelib.screening import core
from chalicelib.screening.core import Policy, Verdict
from chalicelib.screening.service import PolicyStore, ScreeningService, TenantPolicy
from chalicelib.table import InMemoryTable


def _service() -> ScreeningService:
    return ScreeningService(PolicyStore(InMemoryTable("policies", ("tenant",)), Policy(), cache_ttl_s=0))


def test_the_stamp_names_the_release_and_the_tenants_policy(monkeypatch):
    service = _service()
    first = service.stamp("acme")
    assert first == service.stamp("acme") and first.startswith("screen-")
    service.policies.put("acme", TenantPolicy(block_threshold=0.7))
    tightened = service.stamp("acme")
    assert tightened != first and service.stamp("other") == first  # one tenant's policy moves only its stamp
    monkeypatch.setattr("chalicelib.screening.service.release_name", lambda: "rules-next.json|system:2.b,user:2.a")
    assert service.stamp("acme") != tightened  # a new release: every stamp moves


def test_the_release_names_the_built_rules_and_both_models():
    name = core.release_name()
    rules, models = name.split("|")
    assert rules == core.built_rules_name() and rules.startswith("rules-")
    assert models == ",".join(f"{role}:{core.classifier.manifest_version(directory)}" for role, directory in sorted(core.MODEL_DIRS.items()))
    assert "unavailable" not in models


def test_a_missing_manifest_reads_as_unavailable(tmp_path):
    assert core.classifier.manifest_version(str(tmp_path)) == "unavailable"


WINDOW = 16_000
NOW = f"screen-now-w{WINDOW}"  # invoke.history_stamp: the screening's stamp and the window


class _Redacting:
    """A screening twin whose policy now redacts e-mail addresses: the history's text changes as the model reads it."""

    def __init__(self) -> None:
        self.entry_points: list[str] = []

    def stamp(self, tenant: str) -> str:
        return "screen-now"

    def require_allowed(self, text, tenant, trace_id, entry_point, *, subject=None, role="user"):  # noqa: ANN001, ANN201
        self.entry_points.append(entry_point)
        redacted = text.replace("ana@example.com", "[EMAIL]")
        return Verdict(True, 0.0, redacted_text=redacted if redacted != text else None)


def test_history_redacted_now_is_sent_redacted_and_screened_again_next_time():
    from chalicelib.invoke import screened_history

    screening = _Redacting()
    services, tenant = SimpleNamespace(screening=screening), SimpleNamespace(tenant="acme")
    history = [{"role": "user", "content": [{"text": "Write to ana@example.com"}]},
               {"role": "assistant", "content": [{"text": "Done: ana@example.com"}]}]
    old = Conversation("acme", "conv-1", "t0", "t0", 1, screened_as="screen-before")
    sent, stamp = screened_history(services, tenant, "trace", old, history, WINDOW)
    assert sent[0]["content"] == [{"text": "Write to [EMAIL]"}] and sent[1] == history[1]  # the model's own turn is not the caller's
    assert stamp is None  # the stored text is unchanged: screen it again on the next turn
    assert screening.entry_points == ["invoke.history"]

    clean = [{"role": "user", "content": [{"text": "Hello"}]}]
    assert screened_history(services, tenant, "trace", old, clean, WINDOW) == (clean, NOW)
    current = Conversation("acme", "conv-1", "t0", "t0", 1, screened_as=NOW)
    screening.entry_points.clear()
    assert screened_history(services, tenant, "trace", current, history, WINDOW) == (history, NOW)
    assert screening.entry_points == []  # screened under this stamp already


def test_only_the_history_a_window_can_still_send_is_screened_again():
    """Bounded work on a conversation of any length: the newest exchanges that fit the window (with no system prompt,
    the most room) are screened and returned; older ones are never sent again."""
    from chalicelib.invoke import screened_history

    screening = _Redacting()
    services, tenant = SimpleNamespace(screening=screening), SimpleNamespace(tenant="acme")
    exchange = [{"role": "user", "content": [{"text": "Question " + "q" * 300}]}, {"role": "assistant", "content": [{"text": "Answer."}]}]
    history = exchange * 500  # 1,000 messages, ~110 tokens an exchange
    old = Conversation("acme", "conv-1", "t0", "t0", 1, screened_as="screen-before")
    sent, stamp = screened_history(services, tenant, "trace", old, history, 1_000)
    assert sent == history[-len(sent):] and 2 <= len(sent) <= 20 and len(screening.entry_points) == len(sent) // 2
    assert stamp == "screen-now-w1000"  # a larger window reaches older turns: another stamp
