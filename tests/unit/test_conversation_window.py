"""The token window and the message conversions: pure functions."""
from __future__ import annotations

from chalicelib.conversations.messages import merge_roles, to_converse, to_public
from chalicelib.conversations.window import estimate_tokens, fit_window, split_exchanges


def user(text):
    return {"role": "user", "content": [{"text": text}]}


def assistant(text):
    return {"role": "assistant", "content": [{"text": text}]}


TOOL_EXCHANGE = [
    user("what is 2+2"),
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "calculator", "input": {"expression": "2+2"}}}]},
    {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "4"}], "status": "success"}}]},
    assistant("4"),
]


def test_exchanges_start_at_user_text_so_tool_pairs_stay_together():
    exchanges = split_exchanges(TOOL_EXCHANGE + [user("thanks"), assistant("welcome")])
    assert [len(e) for e in exchanges] == [4, 2]


def test_oldest_whole_exchanges_are_dropped_first_and_the_newest_always_kept():
    history = TOOL_EXCHANGE + [user("a" * 300), assistant("b" * 300), user("last question")]
    sent, dropped = fit_window(history, "system prompt", window_tokens=260)
    assert sent == [user("a" * 300), assistant("b" * 300), user("last question")] and dropped == 4
    sent, dropped = fit_window(history, "system prompt", window_tokens=10)
    assert sent == [user("last question")] and dropped == 6  # the newest exchange goes even over the window
    sent, _ = fit_window(history, None, window_tokens=100_000)
    assert sent == history


def test_the_system_prompt_counts_against_the_window():
    history = [user("x" * 90), assistant("y" * 90), user("z")]
    assert fit_window(history, None, 80)[1] == 0
    assert fit_window(history, "s" * 120, 80)[1] == 2


def test_estimate_is_conservative_for_plain_text():
    # ~4 characters per token in English; 3 bytes per token errs on the side of dropping.
    assert estimate_tokens("hello world, how are you today?") >= 31 // 4


def test_public_messages_round_trip_through_converse():
    public = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "w", "input": {"city": "X"}},
                                                             {"id": "c2", "name": "w", "input": {"city": "Y"}}]},
        {"role": "tool", "tool_use_id": "c1", "content": {"t": 1}, "is_error": False},
        {"role": "tool", "tool_use_id": "c2", "content": "failed", "is_error": True},
        {"role": "user", "content": "and tomorrow?"},
    ]
    converse = to_converse(public)
    assert [m["role"] for m in converse] == ["user", "assistant", "user"]  # tool results and text merged into one user turn
    assert [next(iter(b)) for b in converse[2]["content"]] == ["toolResult", "toolResult", "text"]
    assert to_public(converse) == [{**m, "tool_calls": m.get("tool_calls", [])} if m["role"] == "assistant" else m for m in public]


def test_merge_roles_keeps_tool_results_before_text():
    merged = merge_roles([user("hi"), {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [], "status": "error"}}]}])
    assert list(merged[0]["content"][0]) == ["toolResult"]
