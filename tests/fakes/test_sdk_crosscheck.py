"""The official SDKs decode the fake streams into exactly what was scripted.

The SDKs look up the platform once per client in a worker thread; the virtual
clock cannot see threads and would report a deadlock, so each client gets its
platform filled in beforehand (the value the SDK itself would compute).
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
    InjectPings,
    LineEndings,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SlowDrip,
    SplitBetweenCrLf,
    SplitInsideDataField,
    SplitInsideUtf8,
    Text,
    ToolUse,
    VirtualClock,
)

REPLY = ScriptedResponse(
    parts=(
        Text("Je vérifie d'abord l'état — 日本語 ok. "),
        ToolUse("call_a", "read_file", {"path": "état.md"}),
        ToolUse("call_b", "send_email", {"to": "ops@example.com", "cc": ["x", "ÿ"], "n": 2}),
    ),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=2048, output_tokens=77, cache_read_tokens=1536,
                        cache_write_tokens=256),
)
CHUNKINGS: list[tuple[Fault, ...]] = [
    (),
    (ByteAtATime(),),
    (LineEndings("crlf"), SplitBetweenCrLf(2), RandomSplits(40)),
    (LineEndings("cr"), SplitInsideUtf8(), SplitInsideDataField(2), InjectComments(every=1)),
    (SlowDrip(tokens_per_second=20), SplitInsideUtf8(3)),
]
MESSAGES = [{"role": "user", "content": "check and mail"}]


def openai_client(provider: FakeProvider) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                              http_client=provider.httpx2_client(), max_retries=0)


def anthropic_client(provider: FakeProvider) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test", base_url=provider.base_url,
                                    http_client=provider.httpx2_client(), max_retries=0)


async def openai_round(provider: FakeProvider) -> dict[str, Any]:
    client = openai_client(provider)
    stream = await client.chat.completions.create(
        model="fake-model", messages=MESSAGES, stream=True,  # type: ignore[arg-type]
        stream_options={"include_usage": True},
    )
    text, calls, finish, usage = "", {}, None, None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": None, "args": ""})
                entry["id"] = call.id or entry["id"]
                if call.function is not None:
                    entry["name"] = call.function.name or entry["name"]
                    entry["args"] += call.function.arguments or ""
    await client.close()
    return {"text": text, "finish": finish, "usage": usage,
            "calls": [(c["id"], c["name"], json.loads(c["args"])) for c in calls.values()]}


@pytest.mark.parametrize("faults", CHUNKINGS, ids=lambda f: "+".join(x.kind for x in f) or "clean")
def test_openai_sdk_decodes_the_script(faults: tuple[Fault, ...]) -> None:
    provider = FakeProvider("openai", REPLY, faults={(1, 1): faults})
    result = VirtualClock().run(openai_round(provider))
    assert result["text"] == "Je vérifie d'abord l'état — 日本語 ok. "
    assert result["calls"] == [
        ("call_a", "read_file", {"path": "état.md"}),
        ("call_b", "send_email", {"to": "ops@example.com", "cc": ["x", "ÿ"], "n": 2}),
    ]
    assert result["finish"] == "tool_calls"
    usage = result["usage"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (2048, 77, 2125)
    assert usage.prompt_tokens_details.cached_tokens == 1536


async def anthropic_round(provider: FakeProvider) -> anthropic.types.Message:
    client = anthropic_client(provider)
    async with client.messages.stream(
        model="fake-model", max_tokens=1024, messages=MESSAGES  # type: ignore[arg-type]
    ) as stream:
        message = await stream.get_final_message()
    await client.close()
    return message


@pytest.mark.parametrize(
    "faults", [*CHUNKINGS, (InjectPings(every=2), ByteAtATime())],
    ids=lambda f: "+".join(x.kind for x in f) or "clean",
)
def test_anthropic_sdk_decodes_the_script(faults: tuple[Fault, ...]) -> None:
    provider = FakeProvider("anthropic", REPLY, faults={(1, 1): faults})
    message = VirtualClock().run(anthropic_round(provider))
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[0].text == "Je vérifie d'abord l'état — 日本語 ok. "  # type: ignore[union-attr]
    calls = [(b.id, b.name, b.input) for b in message.content[1:]]  # type: ignore[union-attr]
    assert calls == [
        ("call_a", "read_file", {"path": "état.md"}),
        ("call_b", "send_email", {"to": "ops@example.com", "cc": ["x", "ÿ"], "n": 2}),
    ]
    assert message.stop_reason == "tool_use"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (256, 77)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (1536, 256)


def test_slow_drip_costs_virtual_time_only() -> None:
    clock = VirtualClock()
    provider = FakeProvider("openai", REPLY, faults={(1, 1): (SlowDrip(tokens_per_second=10),)})
    result = clock.run(openai_round(provider))
    assert result["finish"] == "tool_calls"
    assert clock.now() > 1.0  # dozens of 0.1 s gaps, none of them slept for real
