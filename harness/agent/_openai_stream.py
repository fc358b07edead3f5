"""Accumulating an OpenAI Chat Completions stream into one message (S4, S9, S10).

Wire format (``stream: true`` with ``stream_options.include_usage``): each
``data:`` frame is a ``chat.completion.chunk`` whose ``choices[0].delta`` carries
``content`` and ``tool_calls`` pieces keyed by ``index``; ``finish_reason``
arrives on the last content chunk; then a chunk with ``"choices": []`` and the
``usage``; then ``data: [DONE]``. An error inside the stream is a frame
``{"error": {"message", "type", "code"}}``.

Seed 002 "自建起步" ④: arguments are concatenated per ``index`` and parsed only
after the stream finished; ② and S9: without ``[DONE]`` (and a finish reason)
the stream is truncated, never done.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, final

from harness.agent._classify import ProviderError, StreamFailure
from harness.agent._messages import AssistantMessage, ToolCall, with_call_ids
from harness.ports import SSEEvent, Usage


def load_frame(data: str) -> dict[str, Any]:
    """Parse one frame's JSON object, or fail the attempt as ``malformed_frame``.

    >>> load_frame('{"a": 1}')
    {'a': 1}
    """
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise StreamFailure(ProviderError("malformed_frame", f"frame is not JSON: {exc}")) from exc
    if not isinstance(value, dict):
        message = f"frame is not a JSON object: {data[:80]!r}"
        raise StreamFailure(ProviderError("malformed_frame", message))
    return value


def wrong_shape(exc: Exception, data: str) -> StreamFailure:
    """A frame that is JSON but not the shape its dialect promises (a list for an object…).

    >>> wrong_shape(TypeError("'int' object is not iterable"), '{"choices": 5}').error.kind
    'malformed_frame'
    """
    message = f"frame has the wrong shape ({exc}): {data[:80]!r}"
    return StreamFailure(ProviderError("malformed_frame", message))


def stream_error(body: object) -> ProviderError:
    """Turn a provider error object (any dialect) into a :class:`ProviderError`.

    >>> stream_error({"type": "overloaded_error", "message": "Overloaded"}).error_type
    'overloaded_error'
    """
    fields = body if isinstance(body, dict) else {"message": str(body)}
    code = fields.get("code")
    return ProviderError(
        "stream_error",
        str(fields.get("message") or "error without a message"),
        error_type=_text_or_none(fields.get("type")),
        error_code=_text_or_none(code),
    )


def index_of(frame: dict[str, Any], key: str, what: str) -> int:
    """The int ``frame[key]`` that says which block or item a frame belongs to.

    >>> index_of({"index": 2}, "index", "content block")
    2
    """
    index = frame.get(key)
    if not isinstance(index, int):
        raise StreamFailure(ProviderError("malformed_frame", f"{what} without {key}: {frame}"))
    return index


def gathered_call(call_id: str, name: str, text: str, unfinished: str | None) -> ToolCall:
    """A call parsed from its gathered arguments; one its stream never finished never runs.

    >>> gathered_call("c", "f", "{}", "item never completed").runnable
    False
    """
    call = ToolCall.parse(call_id, name, text)
    return call if unfinished is None else ToolCall(call.call_id, call.name, text, {}, unfinished)


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)


class StreamState:
    """What every JSON-per-event accumulator keeps while it reads one attempt.

    The finish reason, the usage and the model as the stream told them, and
    ``done`` once the dialect's terminal event came; :meth:`take` feeds a parsed
    frame to a reader and fails the attempt as ``malformed_frame`` when the frame
    has the wrong shape, instead of letting the error escape the client.
    """

    def __init__(self) -> None:
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._model: str | None = None
        self.done = False

    @property
    def usage(self) -> Usage | None:
        return self._usage

    @staticmethod
    def take(read: Callable[[dict[str, Any]], None], frame: dict[str, Any], data: str) -> None:
        """``read(frame)``; a frame of the wrong shape fails the attempt as malformed."""
        try:
            read(frame)
        except (AttributeError, TypeError, ValueError) as exc:
            raise wrong_shape(exc, data) from exc


class OneTextState(StreamState):
    """An accumulator whose message text is one run of pieces (Chat Completions, Gemini)."""

    def __init__(self) -> None:
        super().__init__()
        self._text: list[str] = []

    @property
    def partial_text(self) -> str:
        """The text received so far (shown as interrupted if the attempt fails)."""
        return "".join(self._text)


@dataclass
class StreamedPart:
    """One part of a message whose parts stream side by side (an Anthropic content block,
    a Responses output item): its kind, its text's pieces, or its call's id and name."""

    kind: str
    text: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""


@dataclass
class _CallParts:
    call_id: str = ""
    name: str = ""
    arguments: str = ""


@final
class OpenAIAccumulator(OneTextState):
    """Feed the SSE events of one attempt; :meth:`finish` returns the message.

    >>> acc = OpenAIAccumulator()
    >>> for data in ['{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}',
    ...              '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}', "[DONE]"]:
    ...     acc.feed(SSEEvent("message", data, None, None))
    >>> acc.finish("att_1").text
    'Hi'
    """

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, _CallParts] = {}

    def feed(self, event: SSEEvent) -> None:
        """Take one event; raises :class:`StreamFailure` on an error or bad frame."""
        if self.done:
            return  # nothing after [DONE] belongs to this message
        if event.data == "[DONE]":
            self.done = True
            return
        chunk = load_frame(event.data)
        if event.event == "error" or chunk.get("error"):
            raise StreamFailure(stream_error(chunk.get("error", chunk)))
        self.take(self._take_chunk, chunk, event.data)

    def _take_chunk(self, chunk: dict[str, Any]) -> None:
        if isinstance(chunk.get("model"), str):
            self._model = chunk["model"]
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._take_choice(choice)
        if isinstance(chunk.get("usage"), dict):
            self._usage = _usage_of(chunk["usage"])

    def _take_choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if isinstance(content, str):
            self._text.append(content)
        for piece in delta.get("tool_calls") or ():
            self._take_tool_piece(piece)
        if choice.get("finish_reason") is not None:
            self._finish = str(choice["finish_reason"])

    def _take_tool_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        if not isinstance(index, int):
            raise StreamFailure(
                ProviderError("malformed_frame", f"tool call without index: {piece}")
            )
        parts = self._calls.setdefault(index, _CallParts())
        if piece.get("id"):
            parts.call_id = str(piece["id"])
        function = piece.get("function") or {}
        if function.get("name") and not parts.name:
            parts.name = str(function["name"])
        if isinstance(function.get("arguments"), str):
            parts.arguments += function["arguments"]

    def finish(self, attempt_id: str) -> AssistantMessage:
        """The complete message; a stream without ``[DONE]`` or finish reason is truncated."""
        if not self.done or self._finish is None:
            missing = "[DONE]" if not self.done else "a finish_reason"
            raise StreamFailure(
                ProviderError("truncated_stream", f"stream ended without {missing}")
            )
        calls = with_call_ids(tuple(
            ToolCall.parse(parts.call_id, parts.name, parts.arguments)
            for _, parts in sorted(self._calls.items())
        ), attempt_id)
        finish = "tool_calls" if self._finish == "function_call" else self._finish
        return AssistantMessage(
            self.partial_text, calls, finish, self._usage, attempt_id, self._model
        )


def _usage_of(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        int(raw.get("prompt_tokens") or 0),
        int(raw.get("completion_tokens") or 0),
        int(cached) if isinstance(cached, int) else None,
        None,  # OpenAI does not report cache writes
    )
