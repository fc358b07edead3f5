"""OpenAI Responses API streaming (``POST /v1/responses``, ``stream: true``), as the API sends it.

Each event is ``event: <type>``, ``data: {json}`` and a blank line; every event
carries ``type`` and an increasing ``sequence_number``; there is no ``[DONE]``::

    response.created / response.in_progress        {"response":{…,"status":"in_progress"}}
    response.output_item.added                     {"output_index":0,"item":{"type":"message",…}}
    response.content_part.added                    {…"part":{"type":"output_text","text":""}}
    response.output_text.delta                     {…"delta":"Hel"}
    response.output_text.done / content_part.done / output_item.done
    response.output_item.added                     {"item":{"type":"function_call","call_id":…}}
    response.function_call_arguments.delta         {…"delta":"{\\"a"}
    response.function_call_arguments.done          {…"arguments":"{\\"a\\":1}"}
    response.output_item.done
    response.completed | response.incomplete       {"response":{…,"usage":{…}}}

A response cut by ``max_output_tokens`` ends with ``response.incomplete`` and
``incomplete_details.reason: max_output_tokens``; an error inside the stream is
``event: error`` with ``code`` and ``message``.
"""

from __future__ import annotations

from typing import Any

from fakes import _wire_openai
from fakes._script import ScriptedResponse, ScriptedUsage, Text, ToolUse
from fakes._wire import Frame, FrameRole, RenderContext, compact_json, split_pieces


class _Events:
    """Numbers events as they are made: ``sequence_number`` counts from 0."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def add(self, kind: str, body: dict[str, Any], role: FrameRole = "delta") -> None:
        data = {"type": kind, "sequence_number": len(self.frames), **body}
        self.frames.append(Frame(data=compact_json(data), event=kind, role=role))


def render(response: ScriptedResponse, ctx: RenderContext) -> tuple[Frame, ...]:
    """All events of one streamed response, the terminal one included."""
    events = _Events()
    events.add("response.created", {"response": _response(response, ctx, "in_progress", [])},
               "start")
    events.add("response.in_progress",
               {"response": _response(response, ctx, "in_progress", [])}, "start")
    items: list[dict[str, Any]] = []
    for index, part in enumerate(response.parts):
        if isinstance(part, Text):
            items.append(_text_item(events, part, index, ctx))
        else:
            items.append(_call_item(events, part, index, ctx, response.finish))
    status = "incomplete" if response.finish in _INCOMPLETE else "completed"
    events.add(f"response.{status}", {"response": _response(response, ctx, status, items)},
               "terminal")
    return tuple(events.frames)


def _text_item(events: _Events, part: Text, index: int, ctx: RenderContext) -> dict[str, Any]:
    item_id = f"msg_{ctx.response_id[5:]}_{index}"
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant",
            "content": []}
    events.add("response.output_item.added", {"output_index": index, "item": item},
               "block_start")
    events.add("response.content_part.added", {**where, "part": empty})
    for piece in split_pieces(part.text, ctx.rng):
        events.add("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
    events.add("response.output_text.done", {**where, "text": part.text, "logprobs": []})
    full = {**empty, "text": part.text}
    events.add("response.content_part.done", {**where, "part": full})
    done = {**item, "status": "completed", "content": [full]}
    events.add("response.output_item.done", {"output_index": index, "item": done}, "block_stop")
    return done


def _call_item(events: _Events, call: ToolUse, index: int, ctx: RenderContext,
               finish: str) -> dict[str, Any]:
    item_id = f"fc_{ctx.response_id[5:]}_{index}"
    item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": call.call_id, "name": call.name}
    events.add("response.output_item.added", {"output_index": index, "item": item},
               "block_start")
    where = {"item_id": item_id, "output_index": index}
    for piece in split_pieces(call.argument_text, ctx.rng):
        events.add("response.function_call_arguments.delta", {**where, "delta": piece})
    events.add("response.function_call_arguments.done",
               {**where, "arguments": call.argument_text})
    # A call cut by the output limit is left unfinished, as the API marks it.
    status = "incomplete" if finish == "length" else "completed"
    done = {**item, "status": status, "arguments": call.argument_text}
    events.add("response.output_item.done", {"output_index": index, "item": done}, "block_stop")
    return done


#: Finishes the API reports as an incomplete response, with its reason.
_INCOMPLETE: dict[str, str] = {"length": "max_output_tokens", "content_filter": "content_filter",
                               "refusal": "content_filter"}


def _response(response: ScriptedResponse, ctx: RenderContext, status: str,
              output: list[dict[str, Any]]) -> dict[str, Any]:
    finished = status != "in_progress"
    return {
        "id": ctx.response_id, "object": "response", "created_at": ctx.created,
        "status": status, "error": None,
        "incomplete_details": {"reason": _INCOMPLETE[response.finish]}
        if status == "incomplete" else None,
        "instructions": None, "model": response.model, "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": usage_object(response.usage) if finished else None,
    }


def usage_object(usage: ScriptedUsage) -> dict[str, object]:
    """The ``usage`` object; ``input_tokens`` counts cached tokens too."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def stream_error_frame(message: str, error_type: str, position: int) -> Frame:
    """The ``error`` event the API sends inside a 200 stream, numbered at ``position``."""
    body = {"type": "error", "sequence_number": position, "code": error_type,
            "message": message, "param": None}
    return Frame(data=compact_json(body), event="error", role="error")


def http_error_body(status: int, message: str | None, _request_id: str,
                    _retry_after: int | None = None) -> bytes:
    """The same error body as Chat Completions: one ``error`` object."""
    return _wire_openai.http_error_body(status, message)


def render_json(response: ScriptedResponse, ctx: RenderContext) -> bytes:
    """The whole response as one JSON object, for a request that did not ask to stream."""
    events = _Events()
    items = [_text_item(events, part, index, ctx) if isinstance(part, Text)
             else _call_item(events, part, index, ctx, response.finish)
             for index, part in enumerate(response.parts)]
    status = "incomplete" if response.finish in _INCOMPLETE else "completed"
    return compact_json(_response(response, ctx, status, items)).encode()
