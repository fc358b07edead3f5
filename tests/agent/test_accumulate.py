"""S4, S9, S10: accumulating both dialects from hand-written wire bytes."""

from __future__ import annotations

import json

import pytest

from harness.agent import StreamFailure
from harness.agent._anthropic_stream import AnthropicAccumulator
from harness.agent._messages import AssistantMessage, ToolCall
from harness.agent._openai_stream import OpenAIAccumulator
from harness.ports import Usage
from harness.ports._sse import decode_all


def _openai_frame(delta: dict[str, object], finish: str | None = None) -> str:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }
    return "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n"


_OPENAI_USAGE = (
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,'
    '"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,'
    '"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64}}}\n\n'
)


def _tool_piece(
    index: int, *, call_id: str = "", name: str = "", args: str = ""
) -> dict[str, object]:
    piece: dict[str, object] = {"index": index, "function": {"arguments": args}}
    if call_id:
        piece.update(id=call_id, type="function", function={"name": name, "arguments": args})
    return {"tool_calls": [piece]}


def _openai(wire: str) -> OpenAIAccumulator:
    acc = OpenAIAccumulator()
    for event in decode_all(wire.encode()):
        acc.feed(event)
    return acc


def test_openai_text_and_two_interleaved_tool_calls() -> None:
    wire = (
        _openai_frame({"role": "assistant", "content": ""})
        + _openai_frame({"content": "查一下"})
        + _openai_frame(_tool_piece(0, call_id="call_a", name="search"))
        + _openai_frame(_tool_piece(1, call_id="call_b", name="fetch"))
        + _openai_frame(_tool_piece(0, args='{"q": "天'))
        + _openai_frame(_tool_piece(1, args='{"url": '))
        + _openai_frame(_tool_piece(0, args='气"}'))
        + _openai_frame(_tool_piece(1, args='"https://x.test"}'))
        + _openai_frame({}, finish="tool_calls")
        + _OPENAI_USAGE
        + "data: [DONE]\n\n"
    )
    message = _openai(wire).finish("att_1")
    assert message == AssistantMessage(
        "查一下",
        (
            ToolCall("call_a", "search", '{"q": "天气"}', {"q": "天气"}),
            ToolCall("call_b", "fetch", '{"url": "https://x.test"}', {"url": "https://x.test"}),
        ),
        "tool_calls",
        Usage(120, 30, 64, None),
        "att_1",
        "gpt-4o-mini",
    )


def test_openai_stream_without_done_is_truncated_not_done() -> None:
    acc = _openai(_openai_frame({"content": "Hel"}) + _openai_frame({}, finish="stop"))
    with pytest.raises(StreamFailure) as caught:
        acc.finish("att_1")
    assert caught.value.error.kind == "truncated_stream"
    assert acc.partial_text == "Hel"


def test_openai_in_stream_error_is_a_stream_error() -> None:
    wire = (
        _openai_frame({"content": "Hel"})
        + 'data: {"error": {"message": "The server had an error", "type": "server_error",'
        ' "param": null, "code": null}}\n\n'
    )
    with pytest.raises(StreamFailure) as caught:
        _openai(wire)
    error = caught.value.error
    assert (error.kind, error.error_type, error.effective_status) == (
        "stream_error",
        "server_error",
        500,
    )


def test_openai_malformed_json_frame_is_classified() -> None:
    with pytest.raises(StreamFailure) as caught:
        _openai(_openai_frame({"content": "a"}) + 'data: {"choices": [\n\n')
    assert caught.value.error.kind == "malformed_frame"


def test_openai_truncated_tool_arguments_parse_to_an_error_not_a_call() -> None:
    wire = (
        _openai_frame(_tool_piece(0, call_id="call_a", name="write", args='{"path": "a.txt", "te'))
        + _openai_frame({}, finish="length")
        + "data: [DONE]\n\n"
    )
    message = _openai(wire).finish("att_1")
    assert message.finish == "length"
    assert not message.tool_calls[0].runnable
    assert message.tool_calls[0].arguments == {}


def _anthropic_event(name: str, payload: dict[str, object]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload}, ensure_ascii=False)}\n\n"


def _message_start(usage: dict[str, int]) -> str:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-sonnet-4-5",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return _anthropic_event("message_start", {"message": message})


def _anthropic(wire: str) -> AnthropicAccumulator:
    acc = AnthropicAccumulator()
    for event in decode_all(wire.encode()):
        acc.feed(event)
    return acc


def _text_block(index: int, *pieces: str) -> str:
    start = _anthropic_event(
        "content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}
    )
    deltas = "".join(
        _anthropic_event(
            "content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": p}}
        )
        for p in pieces
    )
    return start + deltas + _anthropic_event("content_block_stop", {"index": index})


def _tool_start(index: int, call_id: str, name: str) -> str:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return _anthropic_event("content_block_start", {"index": index, "content_block": block})


def _json_delta(index: int, partial: str) -> str:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return _anthropic_event("content_block_delta", {"index": index, "delta": delta})


def _message_end(stop_reason: str, usage: dict[str, int]) -> str:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return _anthropic_event("message_delta", {"delta": delta, "usage": usage}) + _anthropic_event(
        "message_stop", {}
    )


_START_USAGE = {
    "input_tokens": 20,
    "cache_creation_input_tokens": 100,
    "cache_read_input_tokens": 400,
    "output_tokens": 1,
}


def test_anthropic_text_and_two_tool_blocks_with_ping_and_cache_usage() -> None:
    wire = (
        _message_start(_START_USAGE)
        + 'event: ping\ndata: {"type": "ping"}\n\n'
        + _text_block(0, "Let me ", "check ☀️")
        + _tool_start(1, "toolu_a", "search")
        + _tool_start(2, "toolu_b", "fetch")
        + _json_delta(1, '{"q": "we')
        + _json_delta(2, "")
        + _json_delta(2, '{"url": "u"}')
        + _json_delta(1, 'ather"}')
        + _anthropic_event("content_block_stop", {"index": 1})
        + _anthropic_event("content_block_stop", {"index": 2})
        + _message_end("tool_use", {"output_tokens": 42})
    )
    message = _anthropic(wire).finish("att_1")
    assert message == AssistantMessage(
        "Let me check ☀️",
        (
            ToolCall("toolu_a", "search", '{"q": "weather"}', {"q": "weather"}),
            ToolCall("toolu_b", "fetch", '{"url": "u"}', {"url": "u"}),
        ),
        "tool_calls",
        Usage(520, 42, 400, 100),
        "att_1",
        "claude-sonnet-4-5",
    )


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
    ],
)
def test_anthropic_stop_reasons_map_to_finish(stop_reason: str, finish: str) -> None:
    wire = _message_start({"input_tokens": 5, "output_tokens": 1}) + _text_block(0, "x")
    message = _anthropic(wire + _message_end(stop_reason, {"output_tokens": 2})).finish("a")
    assert message.finish == finish
    assert message.usage == Usage(5, 2, None, None)


def test_anthropic_tool_use_without_input_deltas_has_empty_arguments() -> None:
    wire = (
        _message_start({"input_tokens": 5, "output_tokens": 1})
        + _tool_start(0, "toolu_a", "now")
        + _anthropic_event("content_block_stop", {"index": 0})
        + _message_end("tool_use", {"output_tokens": 3})
    )
    assert _anthropic(wire).finish("a").tool_calls == (ToolCall("toolu_a", "now", "", {}),)


def test_anthropic_stream_without_message_stop_is_truncated() -> None:
    acc = _anthropic(_message_start(_START_USAGE) + _text_block(0, "partial"))
    with pytest.raises(StreamFailure) as caught:
        acc.finish("a")
    assert caught.value.error.kind == "truncated_stream"
    assert acc.partial_text == "partial"
    assert acc.usage == Usage(520, 1, 400, 100)


def test_anthropic_overloaded_error_event_is_a_529_stream_error() -> None:
    wire = _message_start(_START_USAGE) + (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n'
    )
    with pytest.raises(StreamFailure) as caught:
        _anthropic(wire)
    assert (caught.value.error.kind, caught.value.error.effective_status) == ("stream_error", 529)


def test_anthropic_malformed_json_frame_is_classified() -> None:
    with pytest.raises(StreamFailure) as caught:
        _anthropic(_message_start(_START_USAGE) + "event: content_block_start\ndata: {oops\n\n")
    assert caught.value.error.kind == "malformed_frame"


def test_anthropic_unknown_events_and_deltas_are_tolerated() -> None:
    thinking = {"index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}}
    wire = (
        _message_start({"input_tokens": 1, "output_tokens": 1})
        + _anthropic_event(
            "content_block_start", {"index": 0, "content_block": {"type": "thinking"}}
        )
        + _anthropic_event("content_block_delta", thinking)
        + _anthropic_event("content_block_stop", {"index": 0})
        + _anthropic_event("brand_new_event", {"x": 1})
        + _text_block(1, "answer")
        + _message_end("end_turn", {"output_tokens": 9})
    )
    assert _anthropic(wire).finish("a").text == "answer"


def test_anthropic_tool_block_never_stopped_does_not_become_runnable() -> None:
    wire = (
        _message_start({"input_tokens": 1, "output_tokens": 1})
        + _tool_start(0, "toolu_a", "write")
        + _json_delta(0, '{"path": "a"}')
        + _message_end("max_tokens", {"output_tokens": 9})
    )
    call = _anthropic(wire).finish("a").tool_calls[0]
    assert not call.runnable


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param('{"choices": [{"index": 0, "delta": "Hi"}]}', id="delta not an object"),
        pytest.param('{"choices": 5}', id="choices not a list"),
        pytest.param(
            '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]}',
            id="function not an object",
        ),
        pytest.param('{"choices": [], "usage": {"prompt_tokens": "many"}}', id="usage not a int"),
    ],
)
def test_openai_frame_of_the_wrong_shape_is_a_malformed_frame(frame: str) -> None:
    """S10 / S5: a frame the dialect does not promise fails the attempt, never the caller."""
    with pytest.raises(StreamFailure) as caught:
        _openai(f"data: {frame}\n\n")
    assert caught.value.error.kind == "malformed_frame"


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        pytest.param("message_start", {"message": "msg"}, id="message not an object"),
        pytest.param("content_block_start", {"index": 0, "content_block": "text"}, id="block"),
        pytest.param("message_delta", {"delta": "end_turn"}, id="delta not an object"),
    ],
)
def test_anthropic_frame_of_the_wrong_shape_is_a_malformed_frame(
    event: str, payload: dict[str, object]
) -> None:
    with pytest.raises(StreamFailure) as caught:
        _anthropic(_anthropic_event(event, payload))
    assert caught.value.error.kind == "malformed_frame"


def test_openai_tool_calls_sent_without_ids_get_distinct_derived_ids() -> None:
    # A nonconforming provider: two calls, neither with an id. Replies are matched by
    # call id (J5), so the two must not share the empty id.
    unnamed = {"index": 0, "function": {"name": "search", "arguments": "{}"}}
    wire = (
        _openai_frame({"role": "assistant", "content": ""})
        + _openai_frame({"tool_calls": [unnamed]})
        + _openai_frame({"tool_calls": [{**unnamed, "index": 1}]})
        + _openai_frame({}, finish="tool_calls")
        + "data: [DONE]\n\n"
    )
    calls = _openai(wire).finish("att_7").tool_calls
    assert [c.call_id for c in calls] == ["att_7_call_0", "att_7_call_1"]
    assert all(c.runnable for c in calls)


def test_anthropic_tool_use_without_an_id_gets_a_derived_id() -> None:
    wire = (
        _message_start({"input_tokens": 5, "output_tokens": 1})
        + _tool_start(0, "", "now")
        + _anthropic_event("content_block_stop", {"index": 0})
        + _message_end("tool_use", {"output_tokens": 3})
    )
    assert [c.call_id for c in _anthropic(wire).finish("att_2").tool_calls] == ["att_2_call_0"]
