"""Accumulating an OpenAI Responses stream into one message (S4, S9, S10).

Wire format (``POST /v1/responses`` with ``stream: true``): typed events, each
``event: <type>`` with a JSON ``data`` carrying the same ``type``. Output items
open with ``response.output_item.added`` (a ``message`` or a ``function_call``
with its ``call_id`` and ``name``), grow by ``response.output_text.delta`` and
``response.function_call_arguments.delta`` keyed by ``output_index``, and close
with ``response.output_item.done``. The answer ends with ``response.completed``
or ``response.incomplete`` (``incomplete_details.reason: max_output_tokens``),
whose ``response.usage`` has ``input_tokens_details.cached_tokens``. An error
is ``event: error`` (``code``, ``message``) or ``response.failed``.

As for Chat Completions, arguments are joined per item and parsed only once the
stream finished; without a terminal event the stream is truncated (S9).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, final

from harness.agent._classify import ProviderError, StreamFailure
from harness.agent._messages import AssistantMessage, ToolCall, with_call_ids
from harness.agent._openai_stream import (
    StreamedPart,
    StreamState,
    gathered_call,
    index_of,
    load_frame,
    stream_error,
)
from harness.ports import SSEEvent, Usage

#: ``incomplete_details.reason`` → finish reason.
INCOMPLETE_REASONS: Mapping[str, str] = {
    "max_output_tokens": "length", "content_filter": "content_filter",
}


@dataclass
class _Item(StreamedPart):
    done: bool = False


@final
class ResponsesAccumulator(StreamState):
    """Feed the SSE events of one attempt; :meth:`finish` returns the message.

    >>> acc = ResponsesAccumulator()
    >>> for data in ['{"type":"response.output_item.added","output_index":0,'
    ...              '"item":{"type":"message"}}',
    ...              '{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}',
    ...              '{"type":"response.completed","response":{"status":"completed"}}']:
    ...     acc.feed(SSEEvent("message", data, None, None))
    >>> acc.finish("att_1").text
    'Hi'
    """

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[int, _Item] = {}

    @property
    def partial_text(self) -> str:
        """The text received so far (shown as interrupted if the attempt fails)."""
        return "".join("".join(item.text) for _, item in sorted(self._items.items())
                       if item.kind == "message")

    def feed(self, event: SSEEvent) -> None:
        """Take one event; raises :class:`StreamFailure` on an error or bad frame."""
        if self.done:
            return
        frame = load_frame(event.data)
        kind = str(frame.get("type") or event.event)
        if kind == "error":
            raise StreamFailure(stream_error(
                {"message": frame.get("message"), "type": frame.get("code"),
                 "code": frame.get("code")}))
        handler = self._HANDLERS.get(kind)
        if handler is None:  # other event types (content_part, reasoning …) are tolerated
            return
        self.take(lambda parsed: handler(self, parsed), frame, event.data)

    def _lifecycle(self, frame: dict[str, Any]) -> None:
        response = frame.get("response") or {}
        if isinstance(response.get("model"), str):
            self._model = response["model"]

    def _item_added(self, frame: dict[str, Any]) -> None:
        item = frame.get("item") or {}
        entry = _Item(str(item.get("type", "")))
        entry.call_id = str(item.get("call_id") or "")
        entry.name = str(item.get("name") or "")
        self._items[_index_of(frame)] = entry

    def _delta(self, frame: dict[str, Any]) -> None:
        item = self._items.get(_index_of(frame))
        if item is None:
            raise StreamFailure(ProviderError("malformed_frame", f"delta before its item: {frame}"))
        item.text.append(str(frame.get("delta", "")))

    def _item_done(self, frame: dict[str, Any]) -> None:
        item = self._items.get(_index_of(frame))
        done = frame.get("item") or {}
        if item is None:
            return
        # The finished item is authoritative for a call's arguments.
        if item.kind == "function_call" and isinstance(done.get("arguments"), str):
            item.text = [done["arguments"]]
        item.done = done.get("status", "completed") == "completed"

    def _terminal(self, frame: dict[str, Any]) -> None:
        self._lifecycle(frame)
        response = frame.get("response") or {}
        details = response.get("incomplete_details") or {}
        if frame.get("type") == "response.incomplete" or response.get("status") == "incomplete":
            reason = str(details.get("reason") or "incomplete")
            self._finish = INCOMPLETE_REASONS.get(reason, reason)
        else:
            calls = any(item.kind == "function_call" for item in self._items.values())
            self._finish = "tool_calls" if calls else "stop"
        if isinstance(response.get("usage"), dict):
            self._usage = _usage_of(response["usage"])
        self.done = True

    def _failed(self, frame: dict[str, Any]) -> None:
        error = (frame.get("response") or {}).get("error") or {}
        raise StreamFailure(stream_error(
            {"message": error.get("message") or "response.failed", "type": error.get("code"),
             "code": error.get("code")}))

    _HANDLERS: ClassVar[Mapping[str, Callable[[ResponsesAccumulator, dict[str, Any]], None]]] = {
        "response.created": _lifecycle,
        "response.in_progress": _lifecycle,
        "response.output_item.added": _item_added,
        "response.output_text.delta": _delta,
        "response.function_call_arguments.delta": _delta,
        "response.output_item.done": _item_done,
        "response.completed": _terminal,
        "response.incomplete": _terminal,
        "response.failed": _failed,
    }

    def finish(self, attempt_id: str) -> AssistantMessage:
        """The complete message; a stream without its terminal event is truncated."""
        if not self.done or self._finish is None:
            raise StreamFailure(ProviderError(
                "truncated_stream", "stream ended without response.completed"))
        calls = with_call_ids(tuple(
            _tool_call(item) for _, item in sorted(self._items.items())
            if item.kind == "function_call"
        ), attempt_id)
        return AssistantMessage(self.partial_text, calls, self._finish, self._usage,
                                attempt_id, self._model)


def _tool_call(item: _Item) -> ToolCall:
    unfinished = None if item.done else "function_call item never completed"
    return gathered_call(item.call_id, item.name, "".join(item.text), unfinished)


def _index_of(frame: dict[str, Any]) -> int:
    return index_of(frame, "output_index", "event")


def _usage_of(raw: dict[str, Any]) -> Usage:
    details = raw.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0),
                 int(cached) if isinstance(cached, int) else None, None)
