"""S4, S9, S10 for the Responses API and Gemini, from hand-written wire bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.agent import StreamFailure
from harness.agent._gemini_stream import GeminiAccumulator
from harness.agent._responses_stream import ResponsesAccumulator
from harness.ports import Usage
from harness.ports._sse import decode_all


def _event(body: dict[str, Any]) -> str:
    return f"event: {body['type']}\ndata: {json.dumps(body, ensure_ascii=False)}\n\n"


def _responses(*bodies: dict[str, Any]) -> ResponsesAccumulator:
    acc = ResponsesAccumulator()
    for event in decode_all("".join(_event(b) for b in bodies).encode()):
        acc.feed(event)
    return acc


CALL_ADDED = {"type": "response.output_item.added", "output_index": 0,
              "item": {"type": "function_call", "call_id": "c1", "name": "mail", "arguments": ""}}
USAGE = {"input_tokens": 90, "output_tokens": 12, "input_tokens_details": {"cached_tokens": 64}}


def _args(delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": delta}


def _call_done(arguments: str, status: str = "completed") -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "function_call", "call_id": "c1", "name": "mail",
                     "arguments": arguments, "status": status}}


def test_responses_arguments_join_and_completed_means_tool_calls() -> None:
    acc = _responses(CALL_ADDED, _args('{"to":'), _args('"ü"}'), _call_done('{"to":"ü"}'),
                     {"type": "response.completed",
                      "response": {"status": "completed", "model": "m", "usage": USAGE}})
    message = acc.finish("att_1")
    assert [(c.call_id, dict(c.arguments)) for c in message.tool_calls] == [("c1", {"to": "ü"})]
    assert (message.finish, message.model) == ("tool_calls", "m")
    assert message.usage == Usage(90, 12, 64, None)


def test_responses_incomplete_at_max_output_tokens_is_length_and_the_call_is_not_runnable() -> None:
    acc = _responses(CALL_ADDED, _args('{"to":"o'), _call_done('{"to":"o', "incomplete"),
                     {"type": "response.incomplete", "response": {
                         "status": "incomplete", "usage": USAGE,
                         "incomplete_details": {"reason": "max_output_tokens"}}})
    message = acc.finish("att_1")
    assert message.finish == "length"
    assert not message.tool_calls[0].runnable


def test_responses_without_a_terminal_event_is_truncated() -> None:
    acc = _responses(CALL_ADDED, _args("{}"), _call_done("{}"))
    with pytest.raises(StreamFailure) as caught:
        acc.finish("att_1")
    assert caught.value.error.kind == "truncated_stream"


@pytest.mark.parametrize("failure", [
    {"type": "error", "code": "server_error", "message": "boom", "param": None},
    {"type": "response.failed", "response": {
        "status": "failed", "error": {"code": "server_error", "message": "boom"}}},
])
def test_responses_error_and_failed_events_are_500_stream_errors(failure: dict[str, Any]) -> None:
    with pytest.raises(StreamFailure) as caught:
        _responses(CALL_ADDED, failure)
    error = caught.value.error
    assert (error.kind, error.message, error.effective_status) == ("stream_error", "boom", 500)


def test_responses_delta_before_its_item_is_a_malformed_frame() -> None:
    with pytest.raises(StreamFailure) as caught:
        _responses(_args("{}"))
    assert caught.value.error.kind == "malformed_frame"


def _gemini(*chunks: dict[str, Any]) -> GeminiAccumulator:
    acc = GeminiAccumulator()
    wire = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n" for c in chunks)
    for event in decode_all(wire.encode()):
        acc.feed(event)
    return acc


def _candidate(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "fake-flash"}


METADATA = {"usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 5,
                              "cachedContentTokenCount": 32}}


def test_gemini_text_a_whole_call_and_stop_mean_tool_calls() -> None:
    acc = _gemini(_candidate([{"text": "Sending — 送信"}]),
                  _candidate([{"functionCall": {"id": "c1", "name": "mail",
                                                "args": {"to": "ü"}}}]),
                  _candidate([{"text": ""}], "STOP") | METADATA)
    message = acc.finish("att_1")
    assert message.text == "Sending — 送信"
    assert [(c.call_id, dict(c.arguments)) for c in message.tool_calls] == [("c1", {"to": "ü"})]
    assert (message.finish, message.model) == ("tool_calls", "fake-flash")
    assert message.usage == Usage(50, 5, 32, None)


@pytest.mark.parametrize(("reason", "finish"), [
    ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"),
    ("OTHER", "other"),
])
def test_gemini_finish_reasons_map_to_finish(reason: str, finish: str) -> None:
    acc = _gemini(_candidate([{"text": "x"}], reason))
    assert acc.finish("att_1").finish == finish


def test_gemini_without_a_finish_reason_is_truncated() -> None:
    acc = _gemini(_candidate([{"text": "partial"}]))
    with pytest.raises(StreamFailure) as caught:
        acc.finish("att_1")
    assert caught.value.error.kind == "truncated_stream"
    assert acc.partial_text == "partial"


def test_gemini_malformed_function_call_fails_the_attempt() -> None:
    with pytest.raises(StreamFailure) as caught:
        _gemini(_candidate([{"text": "Calling."}], "MALFORMED_FUNCTION_CALL"))
    assert (caught.value.error.kind, caught.value.error.error_type) == (
        "stream_error", "MALFORMED_FUNCTION_CALL")


def test_gemini_error_object_is_a_stream_error_with_its_status() -> None:
    error = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    with pytest.raises(StreamFailure) as caught:
        _gemini(_candidate([{"text": "x"}]), error)
    assert (caught.value.error.kind, caught.value.error.effective_status) == ("stream_error", 429)


def test_gemini_thought_parts_are_not_answer_text() -> None:
    acc = _gemini(_candidate([{"text": "thinking", "thought": True}, {"text": "Hi"}], "STOP"))
    assert acc.finish("att_1").text == "Hi"
