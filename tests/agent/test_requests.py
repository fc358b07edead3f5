"""Transcript → provider request body, for both dialects (seed 002 §19.5, J5)."""

from __future__ import annotations

from typing import Any

from harness.agent._dialects import build_request
from harness.agent._messages import ToolCall
from harness.agent._requests import model_order
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry, UserEntry
from harness.agent._tools import ToolReply
from harness.ports import Task, ToolSpec

TASK = Task("go", model="m", tools=(ToolSpec("read", "reads", {"type": "object"}),))
READ = ToolCall("c1", "read", '{"path": "a"}', {"path": "a"})
CUT = ToolCall("c2", "send", '{"to": "bo', {}, "arguments are not valid JSON")


def _entries() -> list[Entry]:
    """A turn whose reminder was written before the second reply (it must move after)."""
    return [
        UserEntry("t1", "go"),
        AssistantEntry("t1", "a1", "Looking.", "tool_calls", (READ, CUT)),
        ReplyEntry(ToolReply("t1", "c1", "ok", {"text": "hi"})),
        UserEntry("t2", "Stop repeating.", "guard"),
        ReplyEntry(ToolReply("t1", "c2", "error", {"error": "ARGUMENTS_TRUNCATED"})),
    ]


def test_replies_follow_their_message_in_the_models_order() -> None:
    ordered = model_order(_entries())
    kinds = [type(e).__name__ for e in ordered]
    assert kinds == ["UserEntry", "AssistantEntry", "ToolReply", "ToolReply", "UserEntry"]


def test_a_duplicate_reply_is_sent_once() -> None:
    entries = [*_entries(), ReplyEntry(ToolReply("t1", "c1", "ok", {"text": "again"}))]
    replies = [e for e in model_order(entries) if isinstance(e, ToolReply)]
    assert [r.content for r in replies] == [{"text": "hi"}, {"error": "ARGUMENTS_TRUNCATED"}]


def test_openai_body() -> None:
    body = build_request("openai", TASK, _entries(), system="Be brief.")
    assert body["model"] == "m"
    assert body["max_completion_tokens"] == 1024
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "reads", "parameters": {"type": "object"}},
        }
    ]
    messages: list[dict[str, Any]] = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    calls = messages[2]["tool_calls"]
    assert calls[0]["function"] == {"name": "read", "arguments": '{"path": "a"}'}
    assert calls[1]["function"]["arguments"] == "{}"  # half a JSON object is never replayed
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": '{"text": "hi"}'}


def test_anthropic_body_merges_user_side_blocks_tool_results_first() -> None:
    body = build_request("anthropic", TASK, _entries(), system="Be brief.")
    assert (body["system"], body["max_tokens"]) == ("Be brief.", 1024)
    assert body["tools"] == [
        {"name": "read", "description": "reads", "input_schema": {"type": "object"}}
    ]
    messages: list[dict[str, Any]] = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use", "tool_use"]
    assert messages[1]["content"][2]["input"] == {}
    last = messages[2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert "is_error" not in last[0]
    assert last[1]["is_error"] is True


def test_an_empty_assistant_message_is_never_sent_empty() -> None:
    entries: list[Entry] = [UserEntry("t1", "go"), AssistantEntry("t1", "a1", "", "length", ())]
    anthropic = build_request("anthropic", Task("go"), entries)["messages"][1]
    assert anthropic == {"role": "assistant", "content": [{"type": "text", "text": "(no output)"}]}
    openai = build_request("openai", Task("go"), entries)["messages"][1]
    assert openai == {"role": "assistant", "content": None}


def test_the_body_has_no_tools_key_without_tools() -> None:
    assert "tools" not in build_request("openai", Task("go"), [UserEntry("t1", "go")])
    assert "tools" not in build_request("anthropic", Task("go"), [UserEntry("t1", "go")])
