"""The transcript as the world saw it, for agents that report none (DESIGN §4).

Every request an agent sends carries the conversation so far: the user's task,
each assistant message with its tool calls, each tool reply. The last request
of the final incarnation, followed by the answer the agent returned, is
therefore the agent's transcript, whatever it keeps internally. The checkers
read it exactly as they read a reported one.

A reply's status is read from its content with the scripted model's rules
(``TOOL_OUTCOME_UNKNOWN`` → ``unknown``, an ``error`` object → ``error``, …).

>>> body = {"messages": [
...     {"role": "user", "content": "Mail the CFO."},
...     {"role": "assistant", "content": None, "tool_calls": [
...         {"id": "call_t1_0", "type": "function",
...          "function": {"name": "mail", "arguments": "{\\"to\\": \\"cfo\\"}"}}]},
...     {"role": "tool", "tool_call_id": "call_t1_0", "content": "{\\"sent\\": true}"}]}
>>> [(m.role, m.call_id, m.status) for m in observed_transcript("openai", body)]
[('user', None, None), ('assistant', None, None), ('tool', 'call_t1_0', 'ok')]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from harness.ports import ReplyStatus, ToolCallView, ToolOutcome, TranscriptMessage, family_of
from harness.runner._model import classify_result
from harness.runner._text_calls import with_text_tool_calls

# The scripted model's outcome words, as transcript reply statuses.
_STATUS: Final[dict[ToolOutcome, ReplyStatus]] = {
    "ok": "ok", "error": "error", "timeout": "timeout", "truncated": "error",
    "cancelled": "error", "unknown_after_restart": "unknown",
    "interrupted_before_execution": "not_started",
}


def observed_transcript(dialect: str, body: Mapping[str, Any] | None
                        ) -> tuple[TranscriptMessage, ...]:
    """The conversation in ``body`` (a request's JSON, or its family's view of it)."""
    messages = body.get("messages") if body is not None else None
    messages = messages if isinstance(messages, list) else []
    if family_of(dialect) == "openai":
        messages = with_text_tool_calls(messages)  # smolagents keeps calls as text
    return tuple(_messages(dialect, messages))


def _messages(dialect: str, messages: list[Any]) -> Iterator[TranscriptMessage]:
    turn = 1
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        parse = _openai_message if family_of(dialect) == "openai" else _anthropic_message
        yield from parse(message, f"turn_{turn}")
        if role == "assistant":
            turn += 1


def _openai_message(message: dict[str, Any], turn_id: str) -> Iterator[TranscriptMessage]:
    role, content = message.get("role"), message.get("content")
    if role == "user":
        yield TranscriptMessage("user", turn_id, _text(content))
    elif role == "assistant":
        calls = tuple(_openai_call(c) for c in message.get("tool_calls") or []
                      if isinstance(c, dict))
        yield TranscriptMessage("assistant", turn_id, _text(content), calls)
    elif role == "tool":
        text = _text(content)
        yield TranscriptMessage("tool", turn_id, text, call_id=str(message.get("tool_call_id")),
                                status=_STATUS[classify_result(text)])


def _openai_call(call: dict[str, Any]) -> ToolCallView:
    function = call.get("function") or {}
    return ToolCallView(str(call.get("id")), str(function.get("name")),
                        _arguments(function.get("arguments")))


def _anthropic_message(message: dict[str, Any], turn_id: str) -> Iterator[TranscriptMessage]:
    role, content = message.get("role"), message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    blocks = [b for b in blocks if isinstance(b, dict)]
    if role == "assistant":
        calls = tuple(ToolCallView(str(b.get("id")), str(b.get("name")),
                                   _arguments(b.get("input")))
                      for b in blocks if b.get("type") == "tool_use")
        yield TranscriptMessage("assistant", turn_id, _text(blocks), calls)
        return
    if role != "user":
        return
    text = _text([b for b in blocks if b.get("type") == "text"])
    if text:
        yield TranscriptMessage("user", turn_id, text)
    for block in blocks:
        if block.get("type") == "tool_result":
            reply = _text(block.get("content"))
            outcome = classify_result(reply, is_error=block.get("is_error") is True)
            yield TranscriptMessage("tool", turn_id, reply, call_id=str(block.get("tool_use_id")),
                                    status=_STATUS[outcome])


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part.get("text")) if isinstance(part, dict) else str(part)
                       for part in content)
    return json.dumps(content, sort_keys=True)


def _arguments(value: Any) -> dict[str, Any]:
    """A call's arguments as sent back by the agent (a JSON text or an object)."""
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if isinstance(value, str) and value.strip() else {}
    except ValueError:
        return {"__unparsed__": str(value)}
    return parsed if isinstance(parsed, dict) else {"__unparsed__": str(value)}
