"""The cache on the wire: usage fields carry the outcome, and the record keeps it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest

from fakes import (
    CacheConfig,
    FakeProvider,
    IncomingRequest,
    PromptCache,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
    VirtualClock,
)
from harness import ConfigError

REPLY = ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(7, 7))
SYSTEM = " ".join(["abcd"] * 1300)  # 1,300 tokens


def events(body: bytes) -> list[dict[str, Any]]:
    frames = [line[len(b"data: "):] for line in body.split(b"\n") if line.startswith(b"data: ")]
    return [json.loads(frame) for frame in frames if frame != b"[DONE]"]


def post(provider: FakeProvider, body: dict[str, Any]) -> tuple[int, bytes]:
    plan = provider.plan(IncomingRequest("POST", provider.endpoint, {}, json.dumps(body).encode()))
    return plan.status, plan.body


def openai_body() -> dict[str, Any]:
    return {"model": "fake-gpt", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": "hi"}]}


def anthropic_body(breakpoints: int = 1) -> dict[str, Any]:
    control = {"type": "ephemeral"}
    turns = [{"role": "user" if i % 2 == 0 else "assistant",
              "content": [{"type": "text", "text": f"turn {i}"}]} for i in range(5)]
    for turn in turns[: breakpoints - 1]:
        turn["content"][0]["cache_control"] = control
    return {"model": "fake-sonnet", "max_tokens": 100, "stream": True, "messages": turns,
            "system": [{"type": "text", "text": SYSTEM, "cache_control": control}]}


def test_openai_usage_chunk_counts_cached_tokens_inside_prompt_tokens() -> None:
    provider = FakeProvider("openai", REPLY, cache=CacheConfig())
    post(provider, openai_body())
    status, body = post(provider, openai_body())
    usage = events(body)[-1]["usage"]
    assert status == 200
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (
        1307, 2, 1309)
    assert usage["prompt_tokens_details"]["cached_tokens"] == 1280
    assert "cache_write_tokens" not in usage["prompt_tokens_details"]
    outcomes = [request.cache for request in provider.requests]
    assert [(o.cache_read_tokens, o.miss) for o in outcomes if o] == [(0, "cold"), (1280, None)]


def test_anthropic_usage_keeps_creation_and_read_apart_from_input() -> None:
    provider = FakeProvider("anthropic", REPLY, cache=CacheConfig())
    first, second = (events(post(provider, anthropic_body())[1]) for _ in range(2))
    uncached = provider.requests[0].cache.uncached_input_tokens  # type: ignore[union-attr]
    assert first[0]["message"]["usage"] == {
        "input_tokens": uncached, "cache_creation_input_tokens": 1300,
        "cache_read_input_tokens": 0, "output_tokens": 1}
    assert second[0]["message"]["usage"]["cache_read_input_tokens"] == 1300
    assert second[0]["message"]["usage"]["cache_creation_input_tokens"] == 0
    delta = next(e for e in second if e["type"] == "message_delta")
    assert delta["usage"] == {"input_tokens": uncached, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 1300, "output_tokens": 2}


def test_a_fifth_breakpoint_gets_a_400_in_the_anthropic_format() -> None:
    provider = FakeProvider("anthropic", REPLY, cache=CacheConfig())
    status, body = post(provider, anthropic_body(breakpoints=5))
    error = json.loads(body)
    assert status == 400
    assert error["type"] == "error"
    assert error["error"] == {
        "type": "invalid_request_error",
        "message": "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    }
    assert provider.requests[-1].cache is None
    assert post(provider, anthropic_body(breakpoints=4))[0] == 200


def test_without_a_cache_the_script_usage_goes_out_unchanged() -> None:
    provider = FakeProvider("openai", REPLY)
    usage = events(post(provider, openai_body())[1])[-1]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (7, 7)
    assert provider.cache is None
    assert provider.requests[-1].cache is None


def test_output_tokens_come_from_the_script_text_and_tool_calls() -> None:
    reply = ScriptedResponse((Text("Sending it."), ToolUse("c1", "send", {"to": "a"})),
                             "tool_calls", ScriptedUsage(1, 1))
    provider = FakeProvider("openai", reply, cache=CacheConfig())
    usage = events(post(provider, openai_body())[1])[-1]["usage"]
    # "Sending" 2, " it" 1, "." 1; "send" 1; {"to":"a"} 9.
    assert usage["completion_tokens"] == 14


def test_the_responder_sees_the_outcome_and_a_shared_cache_outlives_the_provider() -> None:
    seen: list[str | None] = []

    def respond(request: Any) -> ScriptedResponse:
        seen.append(request.cache.miss)
        return REPLY

    cache = PromptCache("openai")
    post(FakeProvider("openai", respond, cache=cache), openai_body())
    post(FakeProvider("openai", respond, cache=cache), openai_body())
    assert seen == ["cold", None]


async def openai_rounds(provider: FakeProvider, gap: float) -> list[Any]:
    client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                http_client=provider.httpx2_client(), max_retries=0)
    usages = []
    for _ in range(3):
        stream = await client.chat.completions.create(
            model="fake-gpt", messages=openai_body()["messages"], stream=True,
            stream_options={"include_usage": True},
        )
        usages += [chunk.usage async for chunk in stream if chunk.usage]
        await asyncio.sleep(gap)
    await client.close()
    return usages


def test_the_openai_sdk_reads_hits_and_expiry_on_virtual_time() -> None:
    provider = FakeProvider("openai", REPLY, cache=CacheConfig())
    usages = VirtualClock().run(openai_rounds(provider, gap=200.0))
    assert [u.prompt_tokens_details.cached_tokens for u in usages] == [0, 1280, 1280]
    provider = FakeProvider("openai", REPLY, cache=CacheConfig())
    VirtualClock().run(openai_rounds(provider, gap=301.0))
    assert [r.cache.miss for r in provider.requests if r.cache] == [
        "cold", "ttl_expired", "ttl_expired"]


async def anthropic_round(provider: FakeProvider) -> anthropic.types.Message:
    client = anthropic.AsyncAnthropic(api_key="test", base_url=provider.base_url,
                                      http_client=provider.httpx2_client(), max_retries=0)
    body = anthropic_body()
    async with client.messages.stream(model="fake-sonnet", max_tokens=100,
                                      system=body["system"], messages=body["messages"]) as stream:
        message = await stream.get_final_message()
    await client.close()
    return message


def test_the_anthropic_sdk_reads_the_disjoint_buckets() -> None:
    provider = FakeProvider("anthropic", REPLY, cache=CacheConfig())
    clock = VirtualClock()
    first, second = clock.run(anthropic_round(provider)), clock.run(anthropic_round(provider))
    assert (first.usage.cache_creation_input_tokens, first.usage.cache_read_input_tokens) == (
        1300, 0)
    assert (second.usage.cache_creation_input_tokens, second.usage.cache_read_input_tokens) == (
        0, 1300)
    assert second.usage.input_tokens == provider.requests[-1].cache.uncached_input_tokens  # type: ignore[union-attr]


def test_a_cache_of_the_other_dialect_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^cache: got \"PromptCache\('openai'\)\"; expected a "
                                          r"PromptCache for 'anthropic'\. Each provider needs "
                                          r"its own cache$"):
        FakeProvider("anthropic", REPLY, cache=PromptCache("openai"))
    with pytest.raises(ConfigError, match=r"^cache: got True; expected a CacheConfig"):
        FakeProvider("anthropic", REPLY, cache=True)  # type: ignore[arg-type]
