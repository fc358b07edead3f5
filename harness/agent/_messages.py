"""Committed message types: what a *complete* attempt hands to the agent loop.

Nothing here is built from a partial stream (seed 002 "自建起步" ②: stream
deltas go to the UI only; the final result is the whole assistant message once
the provider's completion signal arrived). Both dialects map onto one shape so
the loop, the journal and the checkers never branch on the provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.ports import FinishReason, Usage

# Why the model stopped is harness.ports.FinishReason (OpenAI's vocabulary; Anthropic's is
# mapped onto it). Other values a provider sends are kept verbatim (``AssistantMessage.finish``
# is a str).

#: Anthropic ``stop_reason`` → :data:`FinishReason`. ``pause_turn`` means the
#: server paused a long turn; treating it as ``stop`` keeps the message committed
#: and lets the loop send it back to resume.
ANTHROPIC_STOP_REASONS: Mapping[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete tool call (seed 002 "自建起步" ④: parsed only once complete).

    ``arguments_text`` is the exact string the model produced; ``arguments`` its
    parsed JSON object. When the text is not a JSON object, ``arguments`` is empty
    and ``arguments_error`` says why, so the loop can hand the error back to the
    model instead of running the tool (seed 002 §19.1: parse failures are not
    retried, they go back to the model).

    >>> ToolCall("call_1", "search", '{"q": "x"}', {"q": "x"}).runnable
    True
    """

    call_id: str
    name: str
    arguments_text: str
    arguments: Mapping[str, Any]
    arguments_error: str | None = None

    @property
    def runnable(self) -> bool:
        """Whether the arguments parsed; a call that did not parse never runs."""
        return self.arguments_error is None

    @classmethod
    def parse(cls, call_id: str, name: str, arguments_text: str) -> ToolCall:
        """Parse the complete arguments text once; an empty text means ``{}``.

        >>> ToolCall.parse("c", "f", '{"a": 1').runnable
        False
        """
        if not arguments_text.strip():
            return cls(call_id, name, arguments_text, {})
        try:
            value = json.loads(arguments_text)
        except ValueError as exc:
            reason = getattr(exc, "msg", str(exc))
            position = getattr(exc, "pos", None)
            where = f" at char {position}" if position is not None else ""
            return cls(
                call_id, name, arguments_text, {}, f"arguments are not valid JSON: {reason}{where}"
            )
        if not isinstance(value, dict):
            kind = type(value).__name__
            return cls(
                call_id, name, arguments_text, {}, f"arguments must be a JSON object, got {kind}"
            )
        return cls(call_id, name, arguments_text, value)


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A committed assistant message: the output of exactly one complete attempt.

    The one exception is a controlled continuation of truncated plain text (S6):
    then ``continuation_of`` names the first attempt, so a checker can tell the
    sanctioned merge from an illegal join of a failed attempt's output (I8).

    >>> AssistantMessage("hi", (), "stop", None, "att_1", "m").tool_calls
    ()
    """

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish: str
    usage: Usage | None
    attempt_id: str
    model: str | None
    continuation_of: str | None = field(default=None)


def with_call_ids(calls: tuple[ToolCall, ...], attempt_id: str) -> tuple[ToolCall, ...]:
    """``calls`` with an id for each call the provider sent without one.

    Replies are matched to calls by id (J5); two id-less calls would collide, so
    each gets one derived from the attempt and its position, stable on replay.

    >>> calls = (ToolCall("", "a", "{}", {}), ToolCall("c2", "b", "{}", {}))
    >>> [c.call_id for c in with_call_ids(calls, "att_1")]
    ['att_1_call_0', 'c2']
    """
    return tuple(
        call if call.call_id else replace(call, call_id=f"{attempt_id}_call_{index}")
        for index, call in enumerate(calls)
    )
