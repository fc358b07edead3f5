"""What a captured answer said, read per dialect: text, tool calls, finish, usage, errors.

Each dialect has one :class:`AnswerReader` in :data:`READERS`; a new dialect adds
its own and ``harness import`` reads its captures. A reader recognises its stream by
its events (OpenAI's ``chat.completion.chunk`` objects, Anthropic's
``message_start``) or its JSON body, and folds each event into an
:class:`ImportedTurn`::

    >>> turn = ImportedTurn("openai")
    >>> READERS["openai"].read_event(turn, "message", {"choices": [{"delta":
    ...     {"content": "Hi"}, "finish_reason": "stop"}]})
    >>> turn.text, turn.finish
    ('Hi', 'stop')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from harness.ports import Dialect
from harness.scenario import FINISH_REASONS

DONE: Final = "[DONE]"


@dataclass
class ImportedCall:
    """A tool call as the stream built it: its id, name and argument text."""

    call_id: str
    name: str = ""
    arguments: str = ""


@dataclass
class ImportedTurn:
    """The model's turn as the capture shows it."""

    dialect: Dialect
    model: str | None = None
    text: str = ""
    calls: dict[int, ImportedCall] = field(default_factory=dict)
    finish: str | None = None  # a scenario finish reason: stop, tool_calls, length
    raw_finish: str | None = None  # as the API said it
    usage: dict[str, int] = field(default_factory=dict)  # input, output, cache_read, cache_write
    terminal: bool = False
    error: tuple[str, str] | None = None  # (type, message) of an error event inside the stream


class AnswerReader(Protocol):
    """Reads one dialect's answers; see the module docstring."""

    def recognises_event(self, event: str, data: object) -> bool: ...

    def recognises_body(self, body: Mapping[str, Any]) -> bool: ...

    def read_event(self, turn: ImportedTurn, event: str, data: object) -> None: ...

    def read_body(self, turn: ImportedTurn, body: Mapping[str, Any]) -> None: ...


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _error_of(error: object, type_key: str, usual: str) -> tuple[str, str]:
    """An error object's type (under ``type_key``; ``usual`` when absent) and message.

    >>> _error_of({"status": "RESOURCE_EXHAUSTED"}, "status", "UNAVAILABLE")
    ('RESOURCE_EXHAUSTED', 'error')
    """
    fields = _dict(error)
    return str(fields.get(type_key) or usual), str(fields.get("message") or "error")


def _finish(turn: ImportedTurn, raw: object, table: Mapping[str, str]) -> None:
    if isinstance(raw, str):
        turn.raw_finish = raw
        turn.finish = table.get(raw, raw if raw in FINISH_REASONS else "stop")


# ------------------------------------------------------------------ OpenAI


_OPENAI_FINISH: Final = {"stop": "stop", "tool_calls": "tool_calls", "function_call":
                         "tool_calls", "length": "length", "content_filter": "stop"}


class OpenAIReader:
    """Chat Completions: ``chat.completion.chunk`` events, ``[DONE]``, or one JSON body."""

    def recognises_event(self, _event: str, data: object) -> bool:
        return _dict(data).get("object") == "chat.completion.chunk"

    def recognises_body(self, body: Mapping[str, Any]) -> bool:
        return body.get("object") == "chat.completion"

    def read_event(self, turn: ImportedTurn, _event: str, data: object) -> None:
        if data == DONE:
            turn.terminal = True
            return
        chunk = _dict(data)
        if "error" in chunk:
            turn.error = _error_of(chunk["error"], "type", "server_error")
            return
        turn.model = chunk.get("model") or turn.model
        self._usage(turn, chunk.get("usage"))
        for choice in _list(chunk.get("choices"))[:1]:
            delta = _dict(_dict(choice).get("delta"))
            turn.text += delta.get("content") or ""
            for part in _list(delta.get("tool_calls")):
                self._call_part(turn, _dict(part))
            _finish(turn, _dict(choice).get("finish_reason"), _OPENAI_FINISH)

    def _call_part(self, turn: ImportedTurn, part: dict[str, Any]) -> None:
        call = turn.calls.setdefault(_int(part.get("index")), ImportedCall(""))
        call.call_id = part.get("id") or call.call_id
        function = _dict(part.get("function"))
        call.name += function.get("name") or ""
        call.arguments += function.get("arguments") or ""

    def _usage(self, turn: ImportedTurn, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        details = _dict(usage.get("prompt_tokens_details"))
        turn.usage = {"input_tokens": _int(usage.get("prompt_tokens")),
                      "output_tokens": _int(usage.get("completion_tokens")),
                      "cache_read_tokens": _int(details.get("cached_tokens")),
                      "cache_write_tokens": _int(details.get("cache_write_tokens"))}

    def read_body(self, turn: ImportedTurn, body: Mapping[str, Any]) -> None:
        turn.model = body.get("model")
        turn.terminal = True
        self._usage(turn, body.get("usage"))
        for choice in _list(body.get("choices"))[:1]:
            message = _dict(_dict(choice).get("message"))
            turn.text = message.get("content") or ""
            for index, call in enumerate(_list(message.get("tool_calls"))):
                function = _dict(_dict(call).get("function"))
                turn.calls[index] = ImportedCall(str(_dict(call).get("id", "")),
                                                 str(function.get("name", "")),
                                                 str(function.get("arguments", "")))
            _finish(turn, _dict(choice).get("finish_reason"), _OPENAI_FINISH)


# ------------------------------------------------------------------ Anthropic


_ANTHROPIC_FINISH: Final = {"end_turn": "stop", "stop_sequence": "stop", "tool_use":
                            "tool_calls", "max_tokens": "length", "pause_turn": "stop",
                            "refusal": "stop"}
_ANTHROPIC_EVENTS: Final = frozenset({"message_start", "content_block_start",
                                      "content_block_delta", "message_delta", "message_stop"})


class AnthropicReader:
    """Messages: ``message_start`` … ``message_stop`` events, or one ``message`` body."""

    def recognises_event(self, event: str, data: object) -> bool:
        return event in _ANTHROPIC_EVENTS or _dict(data).get("type") in _ANTHROPIC_EVENTS

    def recognises_body(self, body: Mapping[str, Any]) -> bool:
        return body.get("type") == "message"

    def read_event(self, turn: ImportedTurn, event: str, data: object) -> None:
        payload = _dict(data)
        kind = payload.get("type") or event
        if kind == "message_start":
            message = _dict(payload.get("message"))
            turn.model = message.get("model") or turn.model
            self._usage(turn, message.get("usage"))
        elif kind == "content_block_start":
            self._block(turn, _int(payload.get("index")), _dict(payload.get("content_block")))
        elif kind == "content_block_delta":
            self._delta(turn, _int(payload.get("index")), _dict(payload.get("delta")))
        elif kind == "message_delta":
            _finish(turn, _dict(payload.get("delta")).get("stop_reason"), _ANTHROPIC_FINISH)
            self._usage(turn, payload.get("usage"))
        elif kind == "message_stop":
            turn.terminal = True
        elif kind == "error":
            turn.error = _error_of(payload.get("error"), "type", "api_error")

    def _block(self, turn: ImportedTurn, index: int, block: dict[str, Any]) -> None:
        if block.get("type") == "tool_use":
            turn.calls[index] = ImportedCall(str(block.get("id", "")), str(block.get("name", "")))
        elif block.get("type") == "text":
            turn.text += block.get("text") or ""

    def _delta(self, turn: ImportedTurn, index: int, delta: dict[str, Any]) -> None:
        if delta.get("type") == "text_delta":
            turn.text += delta.get("text") or ""
        elif delta.get("type") == "input_json_delta" and index in turn.calls:
            turn.calls[index].arguments += delta.get("partial_json") or ""

    def _usage(self, turn: ImportedTurn, usage: object) -> None:
        # Anthropic's input_tokens leave the cache out; a scenario's input counts it in.
        if not isinstance(usage, dict):
            return
        merged = dict(turn.usage)
        read, write = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
        if "input_tokens" in usage:
            merged["input_tokens"] = _int(usage["input_tokens"]) + _int(read) + _int(write)
            merged["cache_read_tokens"] = _int(read)
            merged["cache_write_tokens"] = _int(write)
        if "output_tokens" in usage:
            merged["output_tokens"] = _int(usage["output_tokens"])
        turn.usage = merged

    def read_body(self, turn: ImportedTurn, body: Mapping[str, Any]) -> None:
        turn.model = body.get("model")
        turn.terminal = True
        self._usage(turn, body.get("usage"))
        for index, item in enumerate(_list(body.get("content"))):
            block = _dict(item)
            self._block(turn, index, block)
            if block.get("type") == "tool_use":
                turn.calls[index].arguments = _compact(block.get("input"))
        _finish(turn, body.get("stop_reason"), _ANTHROPIC_FINISH)


def _compact(value: object) -> str:
    import json

    return json.dumps(value if value is not None else {}, separators=(",", ":"),
                      ensure_ascii=False)


# ------------------------------------------------------------------ OpenAI Responses


class ResponsesReader:
    """Responses: typed ``response.*`` events ending in ``response.completed``, or one
    ``response`` object."""

    def recognises_event(self, event: str, data: object) -> bool:
        kind = _dict(data).get("type")
        return event.startswith("response.") or (isinstance(kind, str)
                                                 and kind.startswith("response."))

    def recognises_body(self, body: Mapping[str, Any]) -> bool:
        return body.get("object") == "response"

    def read_event(self, turn: ImportedTurn, event: str, data: object) -> None:
        payload = _dict(data)
        kind = payload.get("type") or event
        if kind in ("response.created", "response.in_progress"):
            turn.model = _dict(payload.get("response")).get("model") or turn.model
        elif kind == "response.output_item.added":
            self._item(turn, _int(payload.get("output_index")), _dict(payload.get("item")))
        elif kind == "response.output_text.delta":
            turn.text += str(payload.get("delta") or "")
        elif kind == "response.function_call_arguments.delta":
            call = turn.calls.get(_int(payload.get("output_index")))
            if call is not None:
                call.arguments += str(payload.get("delta") or "")
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._end(turn, _dict(payload.get("response")))
        elif kind == "error":
            turn.error = (str(payload.get("code") or "server_error"),
                          str(payload.get("message") or "error"))

    def _item(self, turn: ImportedTurn, index: int, item: dict[str, Any]) -> None:
        if item.get("type") == "function_call":
            turn.calls[index] = ImportedCall(str(item.get("call_id") or ""),
                                             str(item.get("name") or ""),
                                             str(item.get("arguments") or ""))

    def _end(self, turn: ImportedTurn, response: dict[str, Any]) -> None:
        turn.terminal = True
        turn.model = response.get("model") or turn.model
        usage = response.get("usage")
        if isinstance(usage, dict):
            turn.usage = {"input_tokens": _int(usage.get("input_tokens")),
                          "output_tokens": _int(usage.get("output_tokens")),
                          "cache_read_tokens": _int(_dict(usage.get("input_tokens_details"))
                                                    .get("cached_tokens")),
                          "cache_write_tokens": 0}
        status = response.get("status")
        if status == "failed":
            turn.error = _error_of(response.get("error"), "code", "server_error")
        reason = _dict(response.get("incomplete_details")).get("reason")
        turn.raw_finish = str(reason or status)
        turn.finish = "length" if reason == "max_output_tokens" else \
            "tool_calls" if turn.calls else "stop"

    def read_body(self, turn: ImportedTurn, body: Mapping[str, Any]) -> None:
        for index, raw in enumerate(_list(body.get("output"))):
            item = _dict(raw)
            self._item(turn, index, item)
            if item.get("type") == "message":
                turn.text += "".join(str(_dict(c).get("text") or "")
                                     for c in _list(item.get("content")))
        self._end(turn, dict(body))


# ------------------------------------------------------------------ Gemini


_GEMINI_FINISH: Final = {"STOP": "stop", "MAX_TOKENS": "length",
                         "MALFORMED_FUNCTION_CALL": "tool_calls", "SAFETY": "stop",
                         "RECITATION": "stop", "OTHER": "stop"}


class GeminiReader:
    """Gemini: ``GenerateContentResponse`` chunks (``candidates``), the last with its
    ``finishReason``, or one such object."""

    def recognises_event(self, _event: str, data: object) -> bool:
        return "candidates" in _dict(data)

    def recognises_body(self, body: Mapping[str, Any]) -> bool:
        return "candidates" in body

    def read_event(self, turn: ImportedTurn, _event: str, data: object) -> None:
        chunk = _dict(data)
        if "error" in chunk:
            turn.error = _error_of(chunk["error"], "status", "UNAVAILABLE")
            return
        turn.model = chunk.get("modelVersion") or turn.model
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            turn.usage = {"input_tokens": _int(usage.get("promptTokenCount")),
                          "output_tokens": _int(usage.get("candidatesTokenCount")),
                          "cache_read_tokens": _int(usage.get("cachedContentTokenCount")),
                          "cache_write_tokens": 0}
        for raw in _list(chunk.get("candidates"))[:1]:
            candidate = _dict(raw)
            for part in _list(_dict(candidate.get("content")).get("parts")):
                self._part(turn, _dict(part))
            reason = candidate.get("finishReason")
            if isinstance(reason, str):
                # The chunk with the finish reason is Gemini's last: its terminal event.
                turn.terminal = True
                _finish(turn, reason, _GEMINI_FINISH)
                if turn.finish == "stop" and turn.calls:
                    turn.finish = "tool_calls"  # Gemini says STOP after function calls too

    def _part(self, turn: ImportedTurn, part: dict[str, Any]) -> None:
        if isinstance(part.get("text"), str) and not part.get("thought"):
            turn.text += part["text"]
        call = part.get("functionCall")
        if isinstance(call, dict):
            name = str(call.get("name") or "")
            turn.calls[len(turn.calls)] = ImportedCall(str(call.get("id") or name), name,
                                                       _compact(call.get("args")))

    def read_body(self, turn: ImportedTurn, body: Mapping[str, Any]) -> None:
        self.read_event(turn, "", dict(body))
        turn.terminal = True


#: The reader of each dialect: ``harness import`` reads the captures of these.
READERS: Final[dict[Dialect, AnswerReader]] = {
    "openai": OpenAIReader(),
    "anthropic": AnthropicReader(),
    "openai-responses": ResponsesReader(),
    "gemini": GeminiReader(),
}
