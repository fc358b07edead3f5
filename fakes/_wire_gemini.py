"""Gemini ``streamGenerateContent?alt=sse``, rendered as the API sends it.

Each chunk is ``data: {json}`` and a blank line, a whole ``GenerateContentResponse``;
there is no ``[DONE]``: the chunk whose candidate carries ``finishReason`` (with
``usageMetadata``) ends the answer::

    data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],
           "modelVersion":"…","responseId":"…"}
    data: {"candidates":[{"content":{"parts":[{"functionCall":{"id":"call_1","name":"f",
           "args":{"a":1}}}],"role":"model"},"index":0}],…}
    data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},
           "finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":…,
           "cachedContentTokenCount":…},…}

A function call arrives whole (``args`` is an object, never a fragment), so a
call cut by the output limit never reaches the client: the API answers
``MAX_TOKENS`` without it, and a call it cannot parse ``MALFORMED_FUNCTION_CALL``.
An error, before or inside a stream, is ``{"error":{"code","message","status"}}``.
"""

from __future__ import annotations

import json
from typing import Any

from fakes._script import Finish, ScriptedResponse, ScriptedUsage, Text, ToolUse
from fakes._wire import Frame, FrameRole, RenderContext, compact_json, split_pieces

FINISH_REASONS: dict[Finish, str] = {"stop": "STOP", "tool_calls": "STOP",
                                     "length": "MAX_TOKENS", "content_filter": "SAFETY",
                                     "refusal": "SAFETY"}
MALFORMED_CALL = "MALFORMED_FUNCTION_CALL"

# (status word, message) per HTTP status, as the API words them (google.rpc codes).
_HTTP_ERRORS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    408: ("DEADLINE_EXCEEDED", "Request timed out."),
    409: ("ABORTED", "The operation was aborted."),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit."),
    422: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred."),
    502: ("UNAVAILABLE", "Bad gateway."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline exceeded."),
    525: ("UNAVAILABLE", "SSL handshake failed."),
    526: ("UNAVAILABLE", "Invalid SSL certificate."),
    529: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}
# The HTTP status of each status word, as google.rpc maps them (an error inside a 200
# stream names only the word): several statuses share a word, the canonical one is this.
_CODES: dict[str, int] = {"INVALID_ARGUMENT": 400, "UNAUTHENTICATED": 401,
                          "PERMISSION_DENIED": 403, "NOT_FOUND": 404, "ABORTED": 409,
                          "RESOURCE_EXHAUSTED": 429, "INTERNAL": 500, "UNAVAILABLE": 503,
                          "DEADLINE_EXCEEDED": 504}
assert {word for word, _ in _HTTP_ERRORS.values()} <= set(_CODES), "a status word lacks its code"


def render(response: ScriptedResponse, ctx: RenderContext) -> tuple[Frame, ...]:
    """All chunks of one streamed answer, the finishing one included."""
    frames: list[Frame] = []
    for part in _sendable(response):
        if isinstance(part, Text):
            frames += [_chunk(response, ctx, [{"text": piece}], role="delta")
                       for piece in split_pieces(part.text, ctx.rng)]
        else:
            frames.append(_chunk(response, ctx, [_call_part(part)], role="block_start"))
    frames.append(_chunk(response, ctx, [{"text": ""}], role="terminal",
                         finish=_finish_reason(response), usage=response.usage))
    return tuple(frames)


def _sendable(response: ScriptedResponse) -> tuple[Text | ToolUse, ...]:
    """The parts that reach the client: a call whose arguments do not parse never does."""
    return tuple(part for part in response.parts
                 if isinstance(part, Text) or _arguments(part) is not None)


def _finish_reason(response: ScriptedResponse) -> str:
    dropped = len(_sendable(response)) < len(response.parts)
    if dropped and response.finish != "length":
        return MALFORMED_CALL
    return FINISH_REASONS[response.finish]


def _arguments(call: ToolUse) -> dict[str, Any] | None:
    if not isinstance(call.arguments, str):
        return dict(call.arguments)
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _call_part(call: ToolUse) -> dict[str, Any]:
    return {"functionCall": {"id": call.call_id, "name": call.name, "args": _arguments(call)}}


def _chunk(response: ScriptedResponse, ctx: RenderContext, parts: list[dict[str, Any]], *,
           role: FrameRole, finish: str | None = None,
           usage: ScriptedUsage | None = None) -> Frame:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
        if finish == MALFORMED_CALL:
            candidate["finishMessage"] = "Malformed function call: the arguments are not JSON."
    candidate["index"] = 0
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = usage_object(usage)
    body |= {"modelVersion": response.model, "responseId": ctx.response_id}
    return Frame(data=compact_json(body), role=role)


def usage_object(usage: ScriptedUsage) -> dict[str, object]:
    """``usageMetadata``: ``promptTokenCount`` counts cached tokens too."""
    metadata: dict[str, object] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        metadata["cachedContentTokenCount"] = usage.cache_read_tokens
    metadata["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.input_tokens}]
    return metadata


def _error(code: int, message: str, status: str) -> dict[str, object]:
    return {"error": {"code": code, "message": message, "status": status}}


def stream_error_frame(message: str, error_type: str, _position: int) -> Frame:
    """The error object Gemini sends inside a 200 stream; ``error_type`` is its status word."""
    body = _error(_CODES.get(error_type, 500), message, error_type)
    return Frame(data=compact_json(body), role="error")


def http_error_body(status: int, message: str | None, _request_id: str,
                    retry_after: int | None = None) -> bytes:
    """A JSON error body for ``status``; a 429 with a delay carries ``RetryInfo``."""
    word, default_message = _HTTP_ERRORS.get(status, _HTTP_ERRORS[500])
    body = _error(status, message or default_message, word)
    if retry_after is not None:
        retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                 "retryDelay": f"{retry_after}s"}
        body["error"] = {**body["error"], "details": [retry]}  # type: ignore[dict-item]
    return compact_json(body).encode()


def render_json(response: ScriptedResponse, ctx: RenderContext) -> bytes:
    """The whole answer as one JSON object (``:generateContent``)."""
    parts = [{"text": part.text} if isinstance(part, Text) else _call_part(part)
             for part in _sendable(response)]
    frame = _chunk(response, ctx, parts or [{"text": ""}], role="terminal",
                   finish=_finish_reason(response), usage=response.usage)
    assert frame.data is not None
    return frame.data.encode()


# Fields whose value is the caller's own data (a google.protobuf.Struct, a JSON schema,
# a map), kept as sent: only the field's own name is a proto name.
_CALLERS_DATA = frozenset({"args", "response", "parameters", "parametersJsonSchema",
                           "responseSchema", "responseJsonSchema", "labels", "properties"})


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    """A request as the API reads it: every field named in lowerCamelCase.

    The API's JSON takes a field by its proto name (``system_instruction``,
    ``function_call``) as well as by its JSON name (``systemInstruction``), as every
    proto3 JSON parser does; litellm's ``gemini/`` models send the proto names. The
    values of the caller's own data (a call's ``args``, a reply's ``response``, a
    schema) are kept as they are.

    >>> request_body({"system_instruction": {"parts": []}, "contents": [{"parts": [
    ...     {"function_call": {"name": "f", "args": {"to_do": 1}}}]}]})["contents"]
    [{'parts': [{'functionCall': {'name': 'f', 'args': {'to_do': 1}}}]}]
    """
    camel: dict[str, Any] = _camel_cased(body)
    return camel


def _camel_cased(value: Any) -> Any:
    if isinstance(value, list):
        return [_camel_cased(item) for item in value]
    if not isinstance(value, dict):
        return value
    renamed: dict[str, Any] = {}
    for key, item in value.items():
        name = _json_name(key) if isinstance(key, str) else key
        renamed[name] = item if name in _CALLERS_DATA else _camel_cased(item)
    return renamed


def _json_name(field: str) -> str:
    """``function_call`` → ``functionCall``; a name with no underscore is kept."""
    head, *rest = field.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)
