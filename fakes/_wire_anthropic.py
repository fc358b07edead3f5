"""Anthropic Messages streaming, rendered as the API sends it.

Each event is ``event: <type>``, ``data: {json}`` and a blank line::

    event: message_start        {"type":"message_start","message":{…,"content":[],"usage":{…}}}
    event: content_block_start  {"type":"content_block_start","index":0,
                                 "content_block":{"type":"text","text":""}}
    event: ping                 {"type":"ping"}
    event: content_block_delta  {…"delta":{"type":"text_delta","text":"Hel"}}
    event: content_block_stop   {"type":"content_block_stop","index":0}
    event: content_block_start  {…"content_block":{"type":"tool_use","id":…,"name":…,"input":{}}}
    event: content_block_delta  {…"delta":{"type":"input_json_delta","partial_json":"{\\"a"}}
    event: content_block_stop
    event: message_delta        {…"delta":{"stop_reason":"tool_use",…},"usage":{…}}
    event: message_stop         {"type":"message_stop"}
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from fakes._script import Finish, ScriptedResponse, ScriptedUsage, Text, ToolUse
from fakes._wire import Frame, FrameRole, RenderContext, compact_json, split_pieces

STOP_REASONS: dict[Finish, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    # The Messages API has one word for a withheld answer.
    "content_filter": "refusal",
    "refusal": "refusal",
}

# (error type, message) per HTTP status, as the API words them.
_HTTP_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use this resource."),
    404: ("not_found_error", "Not found."),
    408: ("timeout_error", "Request timed out."),
    409: ("invalid_request_error", "Conflict with the current state."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    422: ("invalid_request_error", "Unprocessable request."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    500: ("api_error", "Internal server error"),
    502: ("api_error", "Bad gateway"),
    503: ("api_error", "Service unavailable"),
    504: ("timeout_error", "Request timed out"),
    525: ("api_error", "SSL handshake failed"),
    526: ("api_error", "Invalid SSL certificate"),
    529: ("overloaded_error", "Overloaded"),
}


def render(response: ScriptedResponse, ctx: RenderContext) -> tuple[Frame, ...]:
    """All events of one streamed message, ``message_stop`` included."""
    frames = [_message_start(response, ctx)]
    for index, part in enumerate(response.parts):
        block = _block(part, index, ctx)
        if index == 0:
            # The API sends one ping right after the first block opens.
            block.insert(1, ping_frame())
        frames += block
    if not response.parts:
        frames.append(ping_frame())
    frames.append(_message_delta(response))
    frames.append(_event("message_stop", {"type": "message_stop"}, "terminal"))
    return tuple(frames)


def _message_start(response: ScriptedResponse, ctx: RenderContext) -> Frame:
    usage = usage_object(response.usage, output_tokens=min(1, response.usage.output_tokens))
    message: dict[str, object] = {
        "id": ctx.response_id,
        "type": "message",
        "role": "assistant",
        "model": response.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return _event("message_start", {"type": "message_start", "message": message}, "start")


def _block(part: Text | ToolUse, index: int, ctx: RenderContext) -> list[Frame]:
    if isinstance(part, Text):
        opening: dict[str, object] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece}
                  for piece in split_pieces(part.text, ctx.rng)]
    else:
        opening = {"type": "tool_use", "id": part.call_id, "name": part.name, "input": {}}
        # The API opens every tool input with an empty fragment.
        deltas = [{"type": "input_json_delta", "partial_json": piece}
                  for piece in ("", *split_pieces(part.argument_text, ctx.rng))]
    start = {"type": "content_block_start", "index": index, "content_block": opening}
    frames = [_event("content_block_start", start, "block_start")]
    frames += [
        _event("content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": delta})
        for delta in deltas
    ]
    stop: dict[str, object] = {"type": "content_block_stop", "index": index}
    frames.append(_event("content_block_stop", stop, "block_stop"))
    return frames


def _message_delta(response: ScriptedResponse) -> Frame:
    body = {
        "type": "message_delta",
        "delta": {"stop_reason": STOP_REASONS[response.finish], "stop_sequence": None},
        "usage": usage_object(response.usage, output_tokens=response.usage.output_tokens),
    }
    return _event("message_delta", body, "finish")


def usage_object(usage: ScriptedUsage, *, output_tokens: int) -> dict[str, object]:
    """Usage in Anthropic's disjoint buckets: uncached input, cache write, cache read."""
    return {
        "input_tokens": usage.uncached_input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": output_tokens,
    }


def _event(name: str, body: Mapping[str, object], role: FrameRole = "delta") -> Frame:
    return Frame(data=compact_json(body), event=name, role=role)


def ping_frame() -> Frame:
    """A ``ping`` event, which clients must skip."""
    return _event("ping", {"type": "ping"}, "ping")


def stream_error_frame(message: str, error_type: str) -> Frame:
    """The ``event: error`` Anthropic sends inside a 200 stream."""
    body: dict[str, object] = {"type": "error", "error": {"type": error_type, "message": message}}
    return _event("error", body, "error")


def http_error_body(status: int, message: str | None, request_id: str) -> bytes:
    """A JSON error body for ``status``, worded as the API words it."""
    error_type, default_message = _HTTP_ERRORS.get(status, _HTTP_ERRORS[500])
    body = {"type": "error", "error": {"type": error_type, "message": message or default_message},
            "request_id": request_id}
    return compact_json(body).encode()


def render_json(response: ScriptedResponse, ctx: RenderContext) -> bytes:
    """The whole message as one JSON object, for a request that did not ask to stream."""
    content = [{"type": "text", "text": part.text} if isinstance(part, Text)
               else {"type": "tool_use", "id": part.call_id, "name": part.name,
                     "input": _input_object(part)}
               for part in response.parts]
    message = {
        "id": ctx.response_id, "type": "message", "role": "assistant",
        "model": response.model, "content": content,
        "stop_reason": STOP_REASONS[response.finish], "stop_sequence": None,
        "usage": usage_object(response.usage, output_tokens=response.usage.output_tokens),
    }
    return compact_json(message).encode()


def _input_object(call: ToolUse) -> object:
    """A call's input as an object; arguments that do not parse (a cut) come as ``{}``.

    The Messages API parses tool input before it answers a request that does not
    stream, so a broken object never reaches such a client.
    """
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
