"""Accumulating an Anthropic Messages stream into one message (S4, S9, S10).

Wire format: ``message_start`` (model, initial usage), then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta``,
``input_json_delta``, and others such as ``thinking_delta`` that are tolerated)
/ ``content_block_stop``; ``message_delta`` with ``stop_reason`` and cumulative
``usage``; ``message_stop``. ``ping`` may come at any time; ``event: error``
carries ``{"type": "error", "error": {"type": "overloaded_error", ...}}``.

Seed 002 "自建起步" ④: tool input is gathered per content block and parsed only
once the block is stopped; a block never stopped is incomplete and does not
run. S9: without ``message_stop`` the stream is truncated, never done.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, final

from harness.agent._classify import ProviderError, StreamFailure
from harness.agent._messages import (
    ANTHROPIC_STOP_REASONS,
    AssistantMessage,
    ToolCall,
    with_call_ids,
)
from harness.agent._openai_stream import (
    StreamedPart,
    gathered_call,
    index_of,
    load_frame,
    stream_error,
    wrong_shape,
)
from harness.ports import SSEEvent, Usage


@dataclass
class _Block(StreamedPart):
    initial_input: object = None
    stopped: bool = False


@final
class AnthropicAccumulator:
    """Feed the SSE events of one attempt; :meth:`finish` returns the message.

    >>> acc = AnthropicAccumulator()
    >>> for name, data in [
    ...     ("content_block_start", '{"index":0,"content_block":{"type":"text","text":""}}'),
    ...     ("content_block_delta", '{"index":0,"delta":{"type":"text_delta","text":"Hi"}}'),
    ...     ("content_block_stop", '{"index":0}'),
    ...     ("message_delta", '{"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}'),
    ...     ("message_stop", '{"type":"message_stop"}')]:
    ...     acc.feed(SSEEvent(name, data, None, None))
    >>> acc.finish("att_1").finish
    'stop'
    """

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self._stop_reason: str | None = None
        self._usage_fields: dict[str, int] = {}
        self._model: str | None = None
        self.done = False

    @property
    def partial_text(self) -> str:
        """The text received so far (shown as interrupted if the attempt fails)."""
        return "".join("".join(b.text) for _, b in sorted(self._blocks.items()) if b.kind == "text")

    @property
    def usage(self) -> Usage | None:
        return _usage_of(self._usage_fields)

    def feed(self, event: SSEEvent) -> None:
        """Take one event; raises :class:`StreamFailure` on an error or bad frame."""
        if event.event == "ping" or self.done:
            return
        frame = load_frame(event.data)
        kind = event.event if event.event != "message" else str(frame.get("type", ""))
        if kind == "error":
            raise StreamFailure(stream_error(frame.get("error", frame)))
        handler = self._HANDLERS.get(kind)
        if handler is None:  # unknown event types are tolerated (S3)
            return
        try:
            handler(self, frame)
        except (AttributeError, TypeError, ValueError) as exc:
            # Fails this attempt as malformed_frame instead of escaping the client.
            raise wrong_shape(exc, event.data) from exc

    def _message_start(self, frame: dict[str, Any]) -> None:
        message = frame.get("message") or {}
        if isinstance(message.get("model"), str):
            self._model = message["model"]
        self._merge_usage(message.get("usage"))

    def _block_start(self, frame: dict[str, Any]) -> None:
        block = frame.get("content_block") or {}
        entry = _Block(str(block.get("type", "")))
        if entry.kind == "text" and block.get("text"):
            entry.text.append(str(block["text"]))
        elif entry.kind == "tool_use":
            entry.call_id = str(block.get("id", ""))
            entry.name = str(block.get("name", ""))
            entry.initial_input = block.get("input")
        self._blocks[_index_of(frame)] = entry

    def _block_delta(self, frame: dict[str, Any]) -> None:
        block = self._blocks.get(_index_of(frame))
        if block is None:
            raise StreamFailure(
                ProviderError("malformed_frame", f"delta before its block: {frame}")
            )
        delta = frame.get("delta") or {}
        if delta.get("type") == "text_delta":
            block.text.append(str(delta.get("text", "")))
        elif delta.get("type") == "input_json_delta":
            block.text.append(str(delta.get("partial_json", "")))

    def _block_stop(self, frame: dict[str, Any]) -> None:
        block = self._blocks.get(_index_of(frame))
        if block is not None:
            block.stopped = True

    def _message_delta(self, frame: dict[str, Any]) -> None:
        delta = frame.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self._stop_reason = str(delta["stop_reason"])
        self._merge_usage(frame.get("usage"))

    def _message_stop(self, _frame: dict[str, Any]) -> None:
        self.done = True

    _HANDLERS: ClassVar[Mapping[str, Callable[[AnthropicAccumulator, dict[str, Any]], None]]] = {
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
    }

    def _merge_usage(self, raw: object) -> None:
        # message_delta usage is cumulative: a later value replaces an earlier one.
        if isinstance(raw, dict):
            for key, value in raw.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    self._usage_fields[key] = value

    def finish(self, attempt_id: str) -> AssistantMessage:
        """The complete message; a stream without ``message_stop`` is truncated."""
        if not self.done:
            raise StreamFailure(
                ProviderError("truncated_stream", "stream ended without message_stop")
            )
        reason = self._stop_reason or "end_turn"
        finish = ANTHROPIC_STOP_REASONS.get(reason, reason)
        calls = with_call_ids(tuple(
            _tool_call(b) for _, b in sorted(self._blocks.items()) if b.kind == "tool_use"
        ), attempt_id)
        return AssistantMessage(
            self.partial_text, calls, finish, self.usage, attempt_id, self._model
        )


def _tool_call(block: _Block) -> ToolCall:
    text = "".join(block.text)
    if not text and block.initial_input:
        text = json.dumps(block.initial_input)
    unfinished = None if block.stopped else "tool_use block was never stopped"
    return gathered_call(block.call_id, block.name, text, unfinished)


def _index_of(frame: dict[str, Any]) -> int:
    return index_of(frame, "index", "content block")


def _usage_of(fields: dict[str, int]) -> Usage | None:
    if "input_tokens" not in fields and "output_tokens" not in fields:
        return None
    cache_read = fields.get("cache_read_input_tokens")
    cache_write = fields.get("cache_creation_input_tokens")
    total_input = fields.get("input_tokens", 0) + (cache_read or 0) + (cache_write or 0)
    return Usage(total_input, fields.get("output_tokens", 0), cache_read, cache_write)
