"""The rendered streams have the shape the official APIs document."""

from __future__ import annotations

import json

from fakes import (
    Emit,
    FakeProvider,
    IncomingRequest,
    ResponsePlan,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
)

REPLY = ScriptedResponse(
    parts=(Text("Sending the report now, ça marche."), ToolUse("call_7", "send_email",
                                                               {"to": "ops@example.com"})),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=1200, output_tokens=40, cache_read_tokens=1000,
                        cache_write_tokens=150),
)
OPENAI_BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
               "stream_options": {"include_usage": True}}


def plan(dialect: str, body: dict[str, object] | None = None) -> ResponsePlan:
    provider = FakeProvider(dialect, REPLY)  # type: ignore[arg-type]
    content = json.dumps(body or OPENAI_BODY).encode()
    return provider.plan(IncomingRequest("POST", provider.endpoint, {}, content))


def sse_events(body: bytes) -> list[dict[str, str]]:
    """A minimal SSE reader for assertions (every line ending, comments kept)."""
    text = body.decode().replace("\r\n", "\n").replace("\r", "\n")
    events = []
    for block in text.split("\n\n"):
        if block:
            fields = {}
            for line in block.split("\n"):
                name, _, value = line.partition(": ")
                fields[name or "comment"] = value
            events.append(fields)
    return events


def openai_chunks(body: bytes) -> list[dict[str, object]]:
    datas = [event["data"] for event in sse_events(body)]
    assert datas[-1] == "[DONE]"
    return [json.loads(data) for data in datas[:-1]]


def test_openai_stream_has_the_documented_chunk_sequence() -> None:
    result = plan("openai")
    assert result.status == 200
    assert dict(result.headers)["content-type"] == "text/event-stream; charset=utf-8"
    chunks = openai_chunks(result.body)
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert str(chunks[0]["id"]).startswith("chatcmpl-")
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "",  # type: ignore[index]
                                                "refusal": None}
    deltas = [c["choices"][0]["delta"] for c in chunks[1:-2]]  # type: ignore[index]
    text = "".join(d["content"] for d in deltas if "content" in d)
    assert text == "Sending the report now, ça marche."
    assert sum("content" in d for d in deltas) > 1, "text must arrive in several deltas"
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0] == {"index": 0, "id": "call_7", "type": "function",
                        "function": {"name": "send_email", "arguments": ""}}
    assert all(set(call) == {"index", "function"} for call in calls[1:])
    arguments = "".join(call["function"]["arguments"] for call in calls)
    assert json.loads(arguments) == {"to": "ops@example.com"}


def test_openai_finish_and_usage_chunks() -> None:
    chunks = openai_chunks(plan("openai").body)
    finish, usage = chunks[-2], chunks[-1]
    assert finish["choices"] == [{"index": 0, "delta": {}, "logprobs": None,
                                  "finish_reason": "tool_calls"}]
    assert usage["choices"] == []
    assert usage["usage"]["prompt_tokens"] == 1200  # type: ignore[index]
    assert usage["usage"]["completion_tokens"] == 40  # type: ignore[index]
    assert usage["usage"]["total_tokens"] == 1240  # type: ignore[index]
    assert usage["usage"]["prompt_tokens_details"]["cached_tokens"] == 1000  # type: ignore[index]
    assert all(chunk["usage"] is None for chunk in chunks[:-1])


def test_openai_sends_usage_only_when_the_request_asks() -> None:
    body = {"model": "m", "messages": [], "stream": True}
    chunks = openai_chunks(plan("openai", body).body)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"  # type: ignore[index]
    assert all("usage" not in chunk for chunk in chunks)


def test_anthropic_stream_has_the_documented_event_sequence() -> None:
    events = sse_events(plan("anthropic").body)
    names = [event["event"] for event in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    payloads = [json.loads(event["data"]) for event in events]
    assert all(p["type"] == name for p, name in zip(payloads, names, strict=True))
    message = payloads[0]["message"]
    assert message["role"] == "assistant"
    assert message["content"] == []
    assert message["model"] == OPENAI_BODY["model"]  # the requested model, echoed back
    assert message["id"].startswith("msg_")


def test_anthropic_blocks_carry_text_and_tool_input_deltas() -> None:
    payloads = [json.loads(e["data"]) for e in sse_events(plan("anthropic").body)]
    starts = [p for p in payloads if p["type"] == "content_block_start"]
    assert starts[0] == {"type": "content_block_start", "index": 0,
                         "content_block": {"type": "text", "text": ""}}
    assert starts[1] == {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "call_7", "name": "send_email", "input": {}}}
    deltas = [p for p in payloads if p["type"] == "content_block_delta"]
    text = "".join(d["delta"]["text"] for d in deltas if d["index"] == 0)
    assert text == "Sending the report now, ça marche."
    fragments = [d["delta"] for d in deltas if d["index"] == 1]
    assert {f["type"] for f in fragments} == {"input_json_delta"}
    assert fragments[0]["partial_json"] == ""
    assert json.loads("".join(f["partial_json"] for f in fragments)) == {"to": "ops@example.com"}


def test_anthropic_usage_splits_cached_tokens_out_of_input() -> None:
    payloads = [json.loads(e["data"]) for e in sse_events(plan("anthropic").body)]
    start_usage = payloads[0]["message"]["usage"]
    delta = next(p for p in payloads if p["type"] == "message_delta")
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    expected = {"input_tokens": 50, "cache_creation_input_tokens": 150,
                "cache_read_input_tokens": 1000}
    assert delta["usage"] == expected | {"output_tokens": 40}
    assert start_usage == expected | {"output_tokens": 1}


def test_one_network_read_per_event_without_faults() -> None:
    result = plan("anthropic")
    assert all(isinstance(step, Emit) for step in result.steps)
    assert len(result.steps) == len(sse_events(result.body))


def test_every_openai_chunk_is_the_compact_dump_of_envelope_and_choices() -> None:
    for line in plan("openai", OPENAI_BODY).body.decode().split("\n\n"):
        data = line.removeprefix("data: ")
        if data.startswith("{"):
            assert data == json.dumps(json.loads(data), ensure_ascii=False,
                                      separators=(",", ":"))
