"""Conversations held on the server: Anthropic threads and Responses' previous_response_id."""

from __future__ import annotations

import json
from typing import Any

from fakes import FakeProvider, IncomingRequest, ScriptedResponse, ScriptedUsage, Text, ToolUse

ANTHROPIC = "https://anthropic.fake.test/v1/messages"
RESPONSES = "https://openai.fake.test/v1/responses"
CALL = ScriptedResponse((ToolUse("toolu_1", "mail", {"to": "a@b"}),), "tool_calls",
                        ScriptedUsage(9, 3))
DONE = ScriptedResponse((Text("Sent."),), "stop", ScriptedUsage(9, 3))


def by_turn(request: Any) -> ScriptedResponse:
    return CALL if request.turn == 1 else DONE


def post(provider: FakeProvider, url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    plan = provider.plan(IncomingRequest("POST", url, {}, json.dumps(body).encode()))
    return plan.status, json.loads(plan.body)


def test_an_anthropic_thread_continues_with_only_the_new_messages() -> None:
    provider = FakeProvider("anthropic", by_turn)
    first = {"model": "m", "max_tokens": 99, "thread": {"type": "create"},
             "messages": [{"role": "user", "content": "mail a@b"}]}
    status, answer = post(provider, ANTHROPIC, first)
    assert status == 200
    result = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sent"}]}
    status, final = post(provider, ANTHROPIC, {
        "model": "m", "max_tokens": 99, "messages": [result],
        "thread": {"type": "continue", "previous_message_id": answer["id"]}})
    # Turn 2: the server put the held user message and its own answer first.
    assert status == 200
    assert final["content"] == [{"type": "text", "text": "Sent."}]
    seen = provider.requests[-1]
    assert seen.turn == 2
    assert [m["role"] for m in seen.json["messages"]] == ["user", "assistant", "user"]


def test_a_thread_that_was_never_created_is_not_found() -> None:
    provider = FakeProvider("anthropic", by_turn)
    status, answer = post(provider, ANTHROPIC, {
        "model": "m", "max_tokens": 99, "messages": [{"role": "user", "content": "go"}],
        "thread": {"type": "continue", "previous_message_id": "msg_unknown"}})
    assert status == 404
    assert "msg_unknown" in answer["error"]["message"]


def test_a_plain_anthropic_request_holds_nothing() -> None:
    provider = FakeProvider("anthropic", by_turn)
    _, answer = post(provider, ANTHROPIC, {"model": "m", "max_tokens": 99,
                                           "messages": [{"role": "user", "content": "go"}]})
    status, _ = post(provider, ANTHROPIC, {
        "model": "m", "max_tokens": 99, "messages": [{"role": "user", "content": "more"}],
        "thread": {"type": "continue", "previous_message_id": answer["id"]}})
    assert status == 404


def test_a_responses_request_continues_its_previous_response() -> None:
    provider = FakeProvider("openai-responses", by_turn)
    status, answer = post(provider, RESPONSES, {"model": "m", "input": "mail a@b"})
    assert status == 200
    call = answer["output"][0]
    status, final = post(provider, RESPONSES, {
        "model": "m", "previous_response_id": answer["id"],
        "input": [{"type": "function_call_output", "call_id": call["call_id"],
                   "output": "sent"}]})
    assert status == 200
    assert final["output"][0]["content"][0]["text"] == "Sent."
    assert provider.requests[-1].turn == 2


def test_a_response_stored_false_cannot_be_continued() -> None:
    provider = FakeProvider("openai-responses", by_turn)
    _, answer = post(provider, RESPONSES, {"model": "m", "input": "go", "store": False})
    status, error = post(provider, RESPONSES, {
        "model": "m", "previous_response_id": answer["id"], "input": "more"})
    assert status == 400
    assert error["error"]["message"] == f"Previous response with id '{answer['id']}' not found."
