"""A tool call without its result gets the APIs' own 400, and the official SDKs raise on it.

OpenAI Chat Completions: every ``tool_calls[].id`` needs a following ``role: tool``
message with that ``tool_call_id``; Anthropic Messages: every ``tool_use`` block
needs a ``tool_result`` block in the next user message.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from fakes import FakeProvider, ScriptedResponse, ScriptedUsage, Text, VirtualClock
from tests.fakes.test_sdk_crosscheck import anthropic_client, openai_client

DONE = ScriptedResponse(parts=(Text("Done."),), finish="stop",
                        usage=ScriptedUsage(input_tokens=10, output_tokens=2))
OPENAI_CALLS = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_a", "type": "function", "function": {"name": "mail", "arguments": "{}"}},
    {"id": "call_b", "type": "function", "function": {"name": "notes", "arguments": "{}"}}]}
ANTHROPIC_CALLS = {"role": "assistant", "content": [
    {"type": "tool_use", "id": "toolu_a", "name": "mail", "input": {}},
    {"type": "tool_use", "id": "toolu_b", "name": "notes", "input": {}}]}


async def openai_create(provider: FakeProvider, messages: list[dict[str, object]]) -> str:
    completion = await openai_client(provider).chat.completions.create(
        model="fake-model", messages=messages)  # type: ignore[arg-type]
    return completion.choices[0].message.content or ""


async def anthropic_create(provider: FakeProvider, messages: list[dict[str, object]]) -> str:
    message = await anthropic_client(provider).messages.create(
        model="fake-model", max_tokens=100, messages=messages)  # type: ignore[arg-type]
    return "".join(block.text for block in message.content if block.type == "text")


def test_openai_refuses_a_call_without_its_tool_message() -> None:
    provider = FakeProvider("openai", DONE)
    messages = [{"role": "user", "content": "go"}, OPENAI_CALLS,
                {"role": "tool", "tool_call_id": "call_a", "content": "sent"}]

    with pytest.raises(openai.BadRequestError) as raised:
        VirtualClock().run(openai_create(provider, messages))

    assert raised.value.status_code == 400
    assert raised.value.body == {
        "message": "An assistant message with 'tool_calls' must be followed by tool messages "
                   "responding to each 'tool_call_id'. The following tool_call_ids did not "
                   "have response messages: call_b",
        "type": "invalid_request_error", "param": "messages.[1].role", "code": None}
    assert raised.value.code is None
    assert raised.value.param == "messages.[1].role"


def test_openai_takes_every_call_answered() -> None:
    provider = FakeProvider("openai", DONE)
    messages = [{"role": "user", "content": "go"}, OPENAI_CALLS,
                {"role": "tool", "tool_call_id": "call_b", "content": "noted"},
                {"role": "tool", "tool_call_id": "call_a", "content": "sent"}]

    assert VirtualClock().run(openai_create(provider, messages)) == "Done."


def test_anthropic_refuses_a_tool_use_without_a_result_in_the_next_message() -> None:
    provider = FakeProvider("anthropic", DONE)
    messages = [{"role": "user", "content": "go"}, ANTHROPIC_CALLS,
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "noted"}]}]

    with pytest.raises(anthropic.BadRequestError) as raised:
        VirtualClock().run(anthropic_create(provider, messages))

    assert raised.value.status_code == 400
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "messages.1: `tool_use` ids were found without `tool_result` blocks "
                   "immediately after: toolu_a. Each `tool_use` block must have a "
                   "corresponding `tool_result` block in the next message."}
    assert body["request_id"] == raised.value.request_id


def test_anthropic_wants_the_results_in_the_next_message_not_later() -> None:
    provider = FakeProvider("anthropic", DONE)
    messages = [{"role": "user", "content": "go"}, ANTHROPIC_CALLS,
                {"role": "user", "content": "any news?"},
                {"role": "assistant", "content": "waiting"},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "sent"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "noted"}]}]

    with pytest.raises(anthropic.BadRequestError) as raised:
        VirtualClock().run(anthropic_create(provider, messages))

    assert "toolu_a, toolu_b" in json.dumps(raised.value.body)


def test_anthropic_takes_every_tool_use_answered() -> None:
    provider = FakeProvider("anthropic", DONE)
    messages = [{"role": "user", "content": "go"}, ANTHROPIC_CALLS,
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "sent"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "noted"}]}]

    assert VirtualClock().run(anthropic_create(provider, messages)) == "Done."
