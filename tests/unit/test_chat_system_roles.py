"""Which chat messages are the system prompt: system and developer alike (chalicelib/chat_completions.py)."""
from __future__ import annotations

from chalicelib.chat_completions import ChatCompletionRequest, ChatMessage, later_system_texts, to_exchange


def request(*messages: tuple[str, str]) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": "claude-sonnet", "messages": [{"role": role, "content": text} for role, text in messages]})


def test_system_and_developer_messages_both_become_the_converse_system_field():
    exchange = to_exchange(request(("system", "Be terse."), ("developer", "Answer in French."), ("user", "Hi")))
    assert exchange.system == "Be terse.\n\nAnswer in French."
    assert [m["role"] for m in exchange.messages] == ["user"]


def test_only_system_or_developer_messages_after_the_first_turn_are_later_system_texts():
    messages = request(("developer", "Lead."), ("system", "Lead too."), ("user", "Hi"),
                       ("developer", "Tool note."), ("assistant", "Hello"), ("system", "Context.")).messages
    assert later_system_texts(messages) == ["Tool note.", "Context."]


def test_a_conversation_of_system_messages_only_has_no_later_system_texts():
    messages = [ChatMessage(role="system", content="A."), ChatMessage(role="developer", content="B.")]
    assert later_system_texts(messages) == []
