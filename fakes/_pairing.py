"""The APIs' 400 for a tool call without its result, in each API's own words.

(The Responses API and Gemini follow the Chat Completions rule, read in the Chat
Completions view of their requests, and word the 400 as each of them does.)

Both APIs refuse a conversation in which the model's tool calls are not answered
before it goes on: OpenAI Chat Completions wants every ``tool_calls[].id`` of an
assistant message answered by a ``role: tool`` message with that ``tool_call_id``
among the messages right after it; Anthropic Messages wants every ``tool_use``
block answered by a ``tool_result`` block in the next (user) message. An agent that
drops a reply after a crash (seed 000 §2.2: "需要有对应的工具回复") meets this 400
in production, so the fake provider answers it too, with the bodies the APIs send.

    >>> calls = {"role": "assistant", "tool_calls": [{"id": "call_1"}]}
    >>> b'"param":"messages.[0].role"' in unpaired_calls_body("openai", [calls], "req_1")
    True
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import final

from fakes._wire import compact_json

__all__ = ["PairingCheck", "unpaired_calls_body"]

# The 400 body for the assistant message at an index whose calls lack results, else None.
_Check = Callable[[Sequence[object], int, str], "bytes | None"]


def unpaired_calls_body(dialect: str, messages: Sequence[object], request_id: str
                        ) -> bytes | None:
    """The 400 body for the first assistant message whose calls lack results, else None."""
    check = _CHECKS.get(dialect, _CHECKS["openai"])
    for index, message in enumerate(messages):
        if is_assistant(message):
            body = check(messages, index, request_id)
            if body is not None:
                return body
    return None


@final
class PairingCheck:
    """:func:`unpaired_calls_body` for one provider's requests in turn, each read from where
    the previous one left off.

    Every request carries the whole conversation again, so checking each from its
    start cost a long run time with the square of its turns. Whether an assistant
    message's calls are answered depends only on the messages up to the next
    assistant message; so when a conversation begins with the very messages the
    previous one held up to its last assistant message (the provider points a
    repeated message at the previous request's, so the same object), the check
    starts at that message. Any other conversation is checked from its start.

    >>> check = PairingCheck("openai")
    >>> first = [{"role": "user"}, {"role": "assistant", "tool_calls": [{"id": "c1"}]}]
    >>> check.unpaired_body(first, "req_1") is not None
    True
    >>> check.unpaired_body([*first, {"role": "tool", "tool_call_id": "c1"}], "req_2")
    >>> check.assistant_messages
    1
    """

    def __init__(self, dialect: str) -> None:
        self._check = _CHECKS.get(dialect, _CHECKS["openai"])
        self._previous: Sequence[object] = ()
        self._last = 0  # the previous conversation's last assistant message checked (or 0)
        self._before = 0  # assistant messages before it
        #: Assistant messages in the last conversation that passed.
        self.assistant_messages = 0

    def unpaired_body(self, messages: Sequence[object], request_id: str) -> bytes | None:
        """The 400 body for the first assistant message whose calls lack results, else None."""
        start, counted = (self._last, self._before) if self._extends(messages) else (0, 0)
        self._previous, self._last, self._before = messages, start, counted
        for index in range(start, len(messages)):
            if not is_assistant(messages[index]):
                continue
            self._last, self._before = index, counted
            counted += 1
            body = self._check(messages, index, request_id)
            if body is not None:
                return body
        self.assistant_messages = counted
        return None

    def _extends(self, messages: Sequence[object]) -> bool:
        """Whether ``messages`` starts with the previous one's messages through ``_last``."""
        through = self._last + 1
        if through > len(self._previous) or through > len(messages):
            return False
        # C speed: a pointer comparison per message, none of their contents read.
        return all(map(operator.is_, messages[:through], self._previous[:through]))


def is_assistant(message: object) -> bool:
    """Whether ``message`` is an assistant message (the model's turn)."""
    return isinstance(message, dict) and message.get("role") == "assistant"


def _missing_tool_messages(messages: Sequence[object], index: int) -> list[str]:
    """The call ids of the assistant message at ``index`` no ``role: tool`` message after it
    answers (the Chat Completions view every dialect but Anthropic is read in)."""
    message = messages[index]
    assert isinstance(message, dict)
    calls = message.get("tool_calls") or []
    wanted = [c.get("id") for c in calls if isinstance(c, dict)]
    answered = set()
    for later in messages[index + 1:]:
        if not isinstance(later, dict) or later.get("role") != "tool":
            break
        answered.add(later.get("tool_call_id"))
    return [str(i) for i in wanted if i not in answered]


def _openai_unpaired(messages: Sequence[object], index: int, _request_id: str) -> bytes | None:
    missing = _missing_tool_messages(messages, index)
    if not missing:
        return None
    error = {"message": "An assistant message with 'tool_calls' must be followed by "
                        "tool messages responding to each 'tool_call_id'. The following "
                        f"tool_call_ids did not have response messages: "
                        f"{', '.join(missing)}",
             "type": "invalid_request_error", "param": f"messages.[{index}].role",
             "code": None}
    return compact_json({"error": error}).encode()


def _anthropic_unpaired(messages: Sequence[object], index: int, request_id: str
                        ) -> bytes | None:
    message = messages[index]
    wanted = [b.get("id") for b in _blocks(message) if b.get("type") == "tool_use"]
    following = messages[index + 1] if index + 1 < len(messages) else None
    answered = {b.get("tool_use_id") for b in _blocks(following)
                if b.get("type") == "tool_result"} \
        if isinstance(following, dict) and following.get("role") == "user" else set()
    missing = [str(i) for i in wanted if i not in answered]
    if not missing:
        return None
    text = (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
            "a corresponding `tool_result` block in the next message.")
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": text},
            "request_id": request_id}
    return compact_json(body).encode()


def _responses_unpaired(messages: Sequence[object], index: int, _request_id: str
                        ) -> bytes | None:
    """The Responses API names the first call whose ``function_call_output`` is missing."""
    missing = _missing_tool_messages(messages, index)
    if not missing:
        return None
    error = {"message": f"No tool output found for function call {missing[0]}.",
             "type": "invalid_request_error", "param": "input", "code": None}
    return compact_json({"error": error}).encode()


def _gemini_unpaired(messages: Sequence[object], index: int, _request_id: str) -> bytes | None:
    """Gemini counts parts: a ``functionCall`` turn needs as many ``functionResponse`` parts."""
    if not _missing_tool_messages(messages, index):
        return None
    text = ("Please ensure that the number of function response parts is equal to the "
            "number of function call parts of the function call turn.")
    error = {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}
    return compact_json({"error": error}).encode()


_CHECKS: dict[str, _Check] = {"openai": _openai_unpaired, "anthropic": _anthropic_unpaired,
                              "openai-responses": _responses_unpaired,
                              "gemini": _gemini_unpaired}


def _blocks(message: object) -> list[dict[str, object]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
