"""OpenAI Chat Completions streaming, rendered as the API sends it.

Each chunk is ``data: {json}`` and a blank line::

    data: {"id":"chatcmpl-…","object":"chat.completion.chunk",…,"choices":[{"index":0,
           "delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
    data: {…"delta":{"content":"Hel"}…}
    data: {…"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",
           "function":{"name":"f","arguments":""}}]}…}
    data: {…"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\""}}]}…}
    data: {…"delta":{},"finish_reason":"tool_calls"…}
    data: {…"choices":[],"usage":{"prompt_tokens":…}}      (only with include_usage)
    data: [DONE]
"""

from __future__ import annotations

import functools

from fakes._script import ScriptedResponse, ScriptedUsage, Text, ToolUse
from fakes._wire import Frame, FrameRole, RenderContext, compact_json, split_pieces

# (error type, error code, message) per HTTP status, as the API words them.
_HTTP_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported."),
    404: ("invalid_request_error", "model_not_found",
          "The model does not exist or you do not have access to it."),
    408: ("timeout", None, "Request timed out."),
    409: ("invalid_request_error", "conflict", "Conflict with the current state."),
    413: ("invalid_request_error", "request_too_large", "Request too large."),
    422: ("invalid_request_error", None, "Unprocessable request."),
    429: ("requests", "rate_limit_exceeded",
          "Rate limit reached for requests. Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
    504: ("server_error", None, "Gateway timeout."),
    525: ("server_error", None, "SSL handshake failed."),
    526: ("server_error", None, "Invalid SSL certificate."),
    529: ("server_error", None, "The server is overloaded."),
}


def render(response: ScriptedResponse, ctx: RenderContext) -> tuple[Frame, ...]:
    """All frames of one streamed completion, ``[DONE]`` included."""
    first: dict[str, object] = {"role": "assistant", "content": "", "refusal": None}
    frames = [_chunk(response, ctx, first, role="start")]
    tool_index = 0
    for part in response.parts:
        if isinstance(part, Text):
            frames += _text_chunks(response, ctx, part)
        else:
            frames += _tool_chunks(response, ctx, part, tool_index)
            tool_index += 1
    frames.append(_chunk(response, ctx, {}, role="finish", finish=finish_reason(response)))
    if ctx.include_usage:
        frames.append(_usage_chunk(response, ctx))
    frames.append(Frame(data="[DONE]", role="terminal"))
    return tuple(frames)


def _text_chunks(response: ScriptedResponse, ctx: RenderContext, part: Text) -> list[Frame]:
    return [
        _chunk(response, ctx, {"content": piece}) for piece in split_pieces(part.text, ctx.rng)
    ]


def _tool_chunks(
    response: ScriptedResponse, ctx: RenderContext, call: ToolUse, index: int
) -> list[Frame]:
    head = {"index": index, "id": call.call_id, "type": "function",
            "function": {"name": call.name, "arguments": ""}}
    frames = [_chunk(response, ctx, {"tool_calls": [head]})]
    for piece in split_pieces(call.argument_text, ctx.rng):
        fragment = {"index": index, "function": {"arguments": piece}}
        frames.append(_chunk(response, ctx, {"tool_calls": [fragment]}))
    return frames


def finish_reason(response: ScriptedResponse) -> str:
    """The API's word for the finish: Chat Completions calls every withheld answer
    ``content_filter`` (a refusal has no finish of its own there)."""
    return "content_filter" if response.finish == "refusal" else response.finish


def _chunk(
    response: ScriptedResponse,
    ctx: RenderContext,
    delta: dict[str, object],
    *,
    role: FrameRole = "delta",
    finish: str | None = None,
) -> Frame:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    # The text of compact_json(_envelope(...) | {"choices": [choice]}), with the
    # envelope encoded once per response instead of once per chunk. With
    # include_usage every chunk carries "usage": null until the last one.
    tail = '],"usage":null}' if ctx.include_usage else "]}"
    head = _envelope_head(ctx.response_id, ctx.created, response.model)
    return Frame(data=head + compact_json(choice) + tail, role=role)


def _usage_chunk(response: ScriptedResponse, ctx: RenderContext) -> Frame:
    body = _envelope(response, ctx) | {"choices": [], "usage": usage_object(response.usage)}
    return Frame(data=compact_json(body), role="usage")


@functools.lru_cache(maxsize=64)
def _envelope_head(response_id: str, created: int, model: str) -> str:
    """Every chunk's JSON up to its first choice: ``{"id":…,"choices":[``."""
    return compact_json(_envelope_fields(response_id, created, model))[:-1] + ',"choices":['


def _envelope(response: ScriptedResponse, ctx: RenderContext) -> dict[str, object]:
    return _envelope_fields(ctx.response_id, ctx.created, response.model)


def _envelope_fields(response_id: str, created: int, model: str) -> dict[str, object]:
    return {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_fake",
    }


def usage_object(usage: ScriptedUsage) -> dict[str, object]:
    """The ``usage`` object; ``prompt_tokens`` counts cached tokens too."""
    prompt_details: dict[str, int] = {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0}
    if usage.cache_write_tokens:
        prompt_details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def stream_error_frame(message: str, error_type: str) -> Frame:
    """The error object OpenAI sends inside a 200 stream (no ``event:`` line)."""
    error = {"message": message, "type": error_type, "param": None, "code": None}
    return Frame(data=compact_json({"error": error}), role="error")


def http_error_body(status: int, message: str | None) -> bytes:
    """A JSON error body for ``status``, worded as the API words it."""
    error_type, code, default_message = _HTTP_ERRORS.get(status, _HTTP_ERRORS[500])
    error = {"message": message or default_message, "type": error_type, "param": None,
             "code": code}
    return compact_json({"error": error}).encode()


def render_json(response: ScriptedResponse, ctx: RenderContext) -> bytes:
    """The whole completion as one JSON object, for a request that did not ask to stream."""
    calls = [{"id": part.call_id, "type": "function",
              "function": {"name": part.name, "arguments": part.argument_text}}
             for part in response.parts if isinstance(part, ToolUse)]
    text = "".join(part.text for part in response.parts if isinstance(part, Text))
    message: dict[str, object] = {"role": "assistant", "content": text or None,
                                  "refusal": None}
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "logprobs": None,
              "finish_reason": finish_reason(response)}
    body = _envelope(response, ctx) | {"object": "chat.completion", "choices": [choice],
                                       "usage": usage_object(response.usage)}
    return compact_json(body).encode()
