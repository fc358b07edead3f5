"""The official SDKs and the reference client read the same fake stream the same way.

The fakes speak the real wire format: what ``openai`` 3.x (Chat Completions and
Responses), ``anthropic`` 2.x and ``google-genai`` decode from a stream (over the
fake's httpx2 transport) is the message our client commits from the same stream
(over respx), under the same chunking.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from fakes import (
    ByteAtATime,
    ErrorInStream,
    FakeProvider,
    Fault,
    HttpError,
    InjectComments,
    LineEndings,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SplitInsideUtf8,
    Text,
    ToolUse,
    TruncatedToolArguments,
    VirtualClock,
)
from harness.agent._messages import AssistantMessage
from harness.ports import DIALECTS

from ._streaming import MESSAGES, run_client

REPLY = ScriptedResponse(
    parts=(
        Text("Vérifions l'état — 状態を確認 🙂\n"),
        ToolUse("call_a", "inspect_notes", {"path": "notes.txt"}),
        ToolUse("call_b", "send_mail", {"to": "ops@example.com", "cc": ["ÿ", None], "n": 2}),
    ),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=3000, output_tokens=91, cache_read_tokens=2048,
                        cache_write_tokens=512),
)
CHUNKINGS: list[tuple[Fault, ...]] = [
    (),
    (ByteAtATime(),),
    (LineEndings("cr"), SplitInsideUtf8(2), InjectComments(every=2)),
    (LineEndings("crlf"), RandomSplits(64)),
]
FINISH = {"tool_calls": "tool_calls", "tool_use": "tool_calls", "end_turn": "stop",
          "stop": "stop", "length": "length", "max_tokens": "length"}
PROMPT = "go"


def _message_view(message: AssistantMessage | None) -> dict[str, Any]:
    assert message is not None
    usage = message.usage
    assert usage is not None
    return {
        "text": message.text,
        "calls": [(c.call_id, c.name, dict(c.arguments)) for c in message.tool_calls],
        "finish": message.finish,
        "usage": (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens),
    }


async def _openai_view(provider: FakeProvider) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                http_client=provider.httpx2_client(), max_retries=0)
    stream = await client.chat.completions.create(
        model="fake-model", messages=list(MESSAGES), stream=True,  # type: ignore[arg-type]
        stream_options={"include_usage": True},
    )
    text, finish, usage, calls = "", None, None, {}
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": "", "name": "", "args": ""})
                entry["id"] = call.id or entry["id"]
                if call.function is not None:
                    entry["name"] = call.function.name or entry["name"]
                    entry["args"] += call.function.arguments or ""
    await client.close()
    assert usage is not None
    assert usage.prompt_tokens_details is not None
    return {
        "text": text,
        "calls": [(c["id"], c["name"], json.loads(c["args"])) for c in calls.values()],
        "finish": FINISH[str(finish)],
        "usage": (usage.prompt_tokens, usage.completion_tokens,
                  usage.prompt_tokens_details.cached_tokens),
    }


async def _anthropic_view(provider: FakeProvider) -> dict[str, Any]:
    client = anthropic.AsyncAnthropic(api_key="test", base_url=provider.base_url,
                                      http_client=provider.httpx2_client(), max_retries=0)
    async with client.messages.stream(
        model="fake-model", max_tokens=1024, messages=list(MESSAGES)  # type: ignore[arg-type]
    ) as stream:
        message = await stream.get_final_message()
    await client.close()
    usage = message.usage
    read, created = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
    return {
        "text": "".join(b.text for b in message.content if b.type == "text"),
        "calls": [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"],
        "finish": FINISH[str(message.stop_reason)],
        "usage": (usage.input_tokens + read + created, usage.output_tokens, read),
    }


async def _responses_view(provider: FakeProvider) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                http_client=provider.httpx2_client(), max_retries=0)
    async with client.responses.stream(model="fake-model", input=PROMPT) as stream:
        response = await stream.get_final_response()
    await client.close()
    return _responses_of(response)


def _responses_of(response: Any) -> dict[str, Any]:
    usage = response.usage
    assert usage is not None
    calls = [(i.call_id, i.name, json.loads(i.arguments)) for i in response.output
             if i.type == "function_call"]
    reason = response.incomplete_details.reason if response.incomplete_details else None
    finish = "length" if reason == "max_output_tokens" else ("tool_calls" if calls else "stop")
    return {
        "text": response.output_text,
        "calls": calls,
        "finish": finish,
        "usage": (usage.input_tokens, usage.output_tokens,
                  usage.input_tokens_details.cached_tokens),
    }


def _genai_client(provider: FakeProvider) -> genai.Client:
    options = genai_types.HttpOptions(base_url=provider.base_url, api_version="v1beta",
                                      httpx_async_client=provider.httpx2_client())
    return genai.Client(api_key="test", http_options=options)


async def _gemini_view(provider: FakeProvider) -> dict[str, Any]:
    client = _genai_client(provider)
    text, calls, finish, usage = "", [], None, None
    async for chunk in await client.aio.models.generate_content_stream(
            model="fake-model", contents=PROMPT):
        usage = chunk.usage_metadata or usage
        for candidate in chunk.candidates or []:
            finish = candidate.finish_reason or finish
            for part in (candidate.content.parts if candidate.content else None) or []:
                text += part.text or ""
                if part.function_call is not None:
                    call = part.function_call
                    calls.append((call.id, call.name, dict(call.args or {})))
    assert usage is not None
    assert finish is not None
    reason = {"STOP": "tool_calls" if calls else "stop", "MAX_TOKENS": "length"}
    return {
        "text": text,
        "calls": calls,
        "finish": reason[finish.value],
        "usage": (usage.prompt_token_count, usage.candidates_token_count,
                  usage.cached_content_token_count),
    }


SDK_VIEWS = {"openai": _openai_view, "anthropic": _anthropic_view,
             "openai-responses": _responses_view, "gemini": _gemini_view}


def test_every_dialect_has_an_sdk_view() -> None:
    assert tuple(SDK_VIEWS) == DIALECTS


@pytest.mark.parametrize("faults", CHUNKINGS, ids=lambda f: "+".join(x.kind for x in f) or "clean")
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_sdk_and_the_client_commit_the_same_message(
    dialect: str, faults: tuple[Fault, ...]
) -> None:
    if dialect == "gemini":
        # google-genai reads an SSE comment as a JSON line (see the test below).
        faults = tuple(f for f in faults if not isinstance(f, InjectComments))
    provider = FakeProvider(dialect, REPLY, {(1, 1): faults})  # type: ignore[arg-type]
    sdk_view = VirtualClock().run(SDK_VIEWS[dialect](provider))

    result, _, _, _ = run_client(dialect, REPLY, {(1, 1): faults})  # type: ignore[arg-type]

    assert _message_view(result.message) == sdk_view


def test_google_genai_fails_on_a_keep_alive_comment_the_client_skips() -> None:
    # Legal SSE (a comment line) that google-genai parses as JSON and refuses: an
    # agent built on it loses the attempt; the reference client commits it.
    faults = (InjectComments(every=2),)
    provider = FakeProvider("gemini", REPLY, {(1, 1): faults})
    with pytest.raises(genai.errors.UnknownApiResponseError, match="keep-alive"):
        VirtualClock().run(_gemini_view(provider))
    result, _, _, _ = run_client("gemini", REPLY, {(1, 1): faults})
    assert result.outcome == "committed"


def test_the_responses_sdk_reads_max_output_tokens_as_the_client_does() -> None:
    faults = (TruncatedToolArguments(call_index=1),)
    provider = FakeProvider("openai-responses", REPLY, {(1, 1): faults})

    async def incomplete() -> Any:
        client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                    http_client=provider.httpx2_client(), max_retries=0)
        stream = await client.responses.create(model="fake-model", input=PROMPT, stream=True)
        events = [event async for event in stream]
        await client.close()
        return events[-1]

    last = VirtualClock().run(incomplete())
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"
    result, _, _, _ = run_client("openai-responses", REPLY, {(1, 1): faults})
    assert result.outcome == "truncated"
    assert result.message is not None
    assert result.message.text == last.response.output_text
    sdk_calls = [i.call_id for i in last.response.output if i.type == "function_call"]
    assert [c.call_id for c in result.rejected_tool_calls] == sdk_calls == ["call_a", "call_b"]


def test_the_responses_sdk_sees_the_in_stream_error_the_client_retries() -> None:
    faults = (ErrorInStream(after_events=4),)
    provider = FakeProvider("openai-responses", REPLY, {(1, 1): faults})

    async def events() -> list[Any]:
        client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                    http_client=provider.httpx2_client(), max_retries=0)
        stream = await client.responses.create(model="fake-model", input=PROMPT, stream=True)
        seen = [event async for event in stream]
        await client.close()
        return seen

    last = VirtualClock().run(events())[-1]
    assert (last.type, last.code, last.sequence_number) == ("error", "server_error", 4)
    result, _, _, _ = run_client("openai-responses", REPLY, {(1, 1): faults})
    assert [a.status for a in result.attempts] == ["interrupted", "complete"]
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.effective_status == 500


def test_google_genai_reads_a_429_resource_exhausted_with_its_retry_delay() -> None:
    provider = FakeProvider("gemini", REPLY, {(1, 1): (HttpError(429, retry_after=7),)})
    with pytest.raises(genai.errors.ClientError) as raised:
        VirtualClock().run(_gemini_view(provider))
    assert (raised.value.code, raised.value.status) == (429, "RESOURCE_EXHAUSTED")
    assert raised.value.details["error"]["details"][0]["retryDelay"] == "7s"
    result, _, _, _ = run_client("gemini", REPLY, {(1, 1): (HttpError(429, retry_after=7),)})
    assert result.outcome == "committed"
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.headers["retry-after"] == "7"
