"""The official SDKs and the reference client read the same fake stream the same way.

The fakes speak the real wire format: what ``openai`` 3.x and ``anthropic`` 2.x
decode from a stream (over the fake's httpx2 transport) is the message our
client commits from the same stream (over respx), under the same chunking.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from fakes import (
    ByteAtATime,
    FakeProvider,
    Fault,
    InjectComments,
    LineEndings,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SplitInsideUtf8,
    Text,
    ToolUse,
    VirtualClock,
)
from harness.agent import AssistantMessage

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


@pytest.mark.parametrize("faults", CHUNKINGS, ids=lambda f: "+".join(x.kind for x in f) or "clean")
@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_the_sdk_and_the_client_commit_the_same_message(
    dialect: str, faults: tuple[Fault, ...]
) -> None:
    provider = FakeProvider(dialect, REPLY, {(1, 1): faults})  # type: ignore[arg-type]
    read = _openai_view if dialect == "openai" else _anthropic_view
    sdk_view = VirtualClock().run(read(provider))

    result, _, _, _ = run_client(dialect, REPLY, {(1, 1): faults})  # type: ignore[arg-type]

    assert _message_view(result.message) == sdk_view
