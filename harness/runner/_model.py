"""The scenario's reactive scripted model: it answers a request from what the request says.

DESIGN §3: a restarted agent re-sends requests the provider already answered,
so the reply is chosen from the request itself — the turn (1 + the number of
assistant messages) and the LAST tool results (the replies after the last
assistant message) — never from a counter. Call ids are derived from the turn
and the call's index, so a re-sent request gets the same ids.

Choice within a turn: the first reply whose ``when`` matches one of the last
tool results (tool name and outcome); else the turn's reply without ``when``;
else the turn's first reply. A turn past the script gets a short ``stop``
answer marked unscripted.

Example::

    model = ScriptedModel(scenario)
    provider = FakeProvider(scenario.dialect, model.respond)
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

from fakes import ProviderRequest, ScriptedResponse, ScriptedUsage, Text, ToolUse
from harness.ports import ToolOutcome, classify_reply, family_of
from harness.runner._text_calls import (
    failed_calls_told_as_text,
    failed_calls_told_in_the_prompt,
    keeps_calls_as_text,
    with_text_tool_calls,
)
from harness.scenario import Reply, Scenario

# Built once: json.dumps builds a new encoder per call, and every request needs one.
_SORTED = json.JSONEncoder(sort_keys=True, ensure_ascii=False)

UNSCRIPTED_TEXT = "(the script has no reply for this turn)"


@dataclass(frozen=True)
class ToolResult:
    """One tool result of a request: which tool, and what happened to it."""

    tool: str
    outcome: str


#: How each API begins its tool-call ids (Anthropic's are ``toolu_…``; the others ``call_…``).
CALL_ID_PREFIXES: dict[str, str] = {"anthropic": "toolu_"}


def call_id(turn: int, index: int, dialect: str = "openai") -> str:
    """The id of the ``index``-th call of ``turn``'s reply, with the dialect's prefix.

    >>> call_id(2, 0), call_id(2, 0, "anthropic")
    ('call_t2_0', 'toolu_t2_0')
    """
    return f"{CALL_ID_PREFIXES.get(dialect, 'call_')}t{turn}_{index}"


def fresh_call_id(turn: int, index: int, used: set[str], dialect: str = "openai") -> str:
    """:func:`call_id`, made unique against the ids the conversation already holds.

    A continuation (S6) joins two provider turns into one assistant message, so the
    turn a request counts can come round again; a model never reuses a call's id.

    >>> fresh_call_id(2, 0, {"call_t2_0"})
    'call_t2_0_r1'
    """
    candidate, again = call_id(turn, index, dialect), 0
    while candidate in used:
        again += 1
        candidate = f"{call_id(turn, index, dialect)}_r{again}"
    return candidate


def _call_ids_in(body: Mapping[str, object]) -> set[str]:
    """The ids of the calls in a request's conversation (Chat Completions or Messages shape)."""
    messages = body.get("messages")
    ids: set[str] = set()
    for message in messages if isinstance(messages, list) else ():
        ids |= _message_call_ids(message)
    return ids


def _message_call_ids(message: object) -> set[str]:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return set()
    calls = message.get("tool_calls") or []
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return {str(c.get("id")) for c in [*calls, *blocks]
            if isinstance(c, dict) and (c.get("type") in ("function", "tool_use"))}


@final
class _ReadSoFar:
    """What the model read of the last conversation, so the next is read from where it ended.

    Every request carries the whole conversation again; reading each from its
    start made a long run's model cost grow with the square of its turns. The
    provider points a repeated message at the previous request's object, so a
    conversation that begins with the very messages read last time is read only
    from there. Any other conversation is read whole.
    """

    def __init__(self) -> None:
        self._messages: list[object] = []
        self.call_ids: set[str] = set()  # the ids of the calls the conversation holds
        self.text_calls = False  # whether it holds calls kept as text (smolagents)

    def read(self, messages: Sequence[object]) -> None:
        known = len(self._messages)
        # C speed: a pointer comparison per message, none of their contents read.
        if known > len(messages) or not all(map(operator.is_, messages[:known],
                                                 self._messages)):
            known, self.call_ids, self.text_calls = 0, set(), False
        for message in messages[known:]:
            self.call_ids |= _message_call_ids(message)
            self.text_calls = self.text_calls or keeps_calls_as_text(message)
        self._messages = list(messages)


def classify_result(content: str, *, is_error: bool = False) -> ToolOutcome:
    """The scenario outcome a tool reply's content stands for (:func:`harness.ports.classify_reply`,
    which the checkers read replies with too).

    >>> classify_result('{"error": "TOOL_OUTCOME_UNKNOWN", "message": "..."}')
    'unknown_after_restart'
    >>> classify_result('{"sent": true}')
    'ok'
    """
    return classify_reply(content, is_error=is_error)


def last_tool_results(dialect: str, messages: Sequence[Any]) -> list[ToolResult]:
    """The tool results after the request's last assistant message, with tool names."""
    # From the end: the last assistant message is near it, however long the conversation.
    last = next((i for i in range(len(messages) - 1, -1, -1)
                 if _role(messages[i]) == "assistant"), -1)
    if last < 0:
        # No assistant message: a conversation held in its user messages, where a call
        # that failed before it was made is told as text (smolagents drops the model's
        # cut call and writes the error after the task); asked as the next turn.
        if family_of(dialect) == "openai":
            return [ToolResult(tool, classify_result(reply))
                    for tool, reply in failed_calls_told_in_the_prompt(messages)]
        return []
    names = _call_names(dialect, messages[last])
    if family_of(dialect) == "openai":
        results = [_openai_result(m, names) for m in messages[last + 1 :] if _role(m) == "tool"]
        if results or names:
            return results
        return [ToolResult(tool, classify_result(reply))
                for tool, reply in failed_calls_told_as_text(messages[last + 1 :])]
    blocks = [
        block
        for m in messages[last + 1 :] if _role(m) == "user" and isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    return [_anthropic_result(block, names) for block in blocks]


def _role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


def _call_names(dialect: str, message: Mapping[str, Any]) -> dict[str, str]:
    if family_of(dialect) == "openai":
        calls = message.get("tool_calls") or []
        return {
            str(c.get("id")): str((c.get("function") or {}).get("name"))
            for c in calls if isinstance(c, dict)
        }
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return {
        str(b.get("id")): str(b.get("name"))
        for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
    }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return _SORTED.encode(content)


def _openai_result(message: Mapping[str, Any], names: Mapping[str, str]) -> ToolResult:
    name = names.get(str(message.get("tool_call_id")), "")
    return ToolResult(name, classify_result(_text_of(message.get("content"))))


def _anthropic_result(block: Mapping[str, Any], names: Mapping[str, str]) -> ToolResult:
    name = names.get(str(block.get("tool_use_id")), "")
    is_error = block.get("is_error") is True
    return ToolResult(name, classify_result(_text_of(block.get("content")), is_error=is_error))


class ScriptedModel:
    """Chooses and renders the scenario's replies; see the module docstring."""

    def __init__(self, scenario: Scenario,
                 applied: Callable[[], Mapping[str, int]] | None = None,
                 ran_before: Callable[[], set[str]] | None = None,
                 answered_before: Callable[[], Mapping[str, Sequence[Sequence[object]]]]
                 | None = None) -> None:
        self.scenario = scenario
        self._applied = applied
        # The ids of the calls an earlier incarnation ran: the client may still hold them.
        self._ran_before = ran_before
        # The ids of the calls an earlier incarnation got whole, each with the
        # conversations it answered: the client may hold those too (see respond).
        self._answered_before = answered_before
        self._by_turn: dict[int, list[Reply]] = {}
        for reply in scenario.model:
            self._by_turn.setdefault(reply.turn, []).append(reply)
        self._read = _ReadSoFar()

    def choose(self, turn: int, results: Sequence[ToolResult],
               applied: Mapping[str, int] | None = None) -> Reply | None:
        """The reply for ``turn`` given the request's last tool results (None: unscripted).

        ``applied`` is the ledger's count of side effects per tool, for a ``when``
        that reads the world (``applied``); absent, such a condition never holds.
        """
        replies = self._by_turn.get(turn, [])
        for reply in replies:
            if reply.when is not None and _condition_met(reply, results, applied):
                return reply
        default = [reply for reply in replies if reply.when is None]
        chosen = default or replies
        return chosen[0] if chosen else None

    def respond(self, request: ProviderRequest) -> ScriptedResponse:
        """The :data:`fakes.Responder`: pick the reply and render it."""
        # The conversation as its family reads it: two shapes for every dialect.
        body = request.chat or request.json or {}
        messages = body.get("messages")
        messages = messages if isinstance(messages, list) else []
        self._read.read(messages)
        if family_of(self.scenario.dialect) == "openai":
            # smolagents keeps calls as text; other conversations need no rewriting.
            messages = with_text_tool_calls(messages) if self._read.text_calls \
                else list(messages)
        applied = self._applied() if self._applied is not None else None
        reply = self.choose(request.turn, last_tool_results(self.scenario.dialect, messages),
                            applied)
        if reply is None:
            return ScriptedResponse((Text(UNSCRIPTED_TEXT),), "stop", _derived_usage(body, 8))
        used = self._read.call_ids
        if self._ran_before is not None:
            # A call an earlier incarnation ran is the client's even when this request
            # leaves it out (Google ADK keeps it in its session and drops it, unanswered,
            # from every request it builds): a new call with its id would be paired with
            # the old one, a clash no real model brings about. The new id keeps the old
            # one as its stem (``call_t1_0_r1``), so I3 still sees the same call again.
            used = used | self._ran_before()
        if self._answered_before is not None and reply.calls:
            used = used | taken_by_another_question(
                self._answered_before(), body.get("messages"),
                {call_id(request.turn, i, self.scenario.dialect)
                 for i in range(len(reply.calls))})
        return render(reply, request.turn, body, used, self.scenario.dialect)


def taken_by_another_question(answered: Mapping[str, Sequence[Sequence[object]]],
                              messages: object, stems: set[str]) -> set[str]:
    """The ids among ``answered`` (each with the conversations an earlier incarnation got
    it whole for) that are not this request's own: got for other conversations only.

    The scripted ids repeat where a real model's never would (:func:`call_id`): only a
    request sent again, word for word, may get its answer again under the same ids.
    A restart that asks the same turn with another conversation asks a new question;
    a real model answers it with ids it never gave before, and the client, which may
    hold the first answer's calls where the request does not show them (Google ADK
    keeps them in its session and leaves the unanswered ones out of every request it
    builds), would otherwise hold two calls under one id. Only the ids of this turn's
    calls are looked at (``stems``, and their ``_rN`` ids).

    >>> first = [{"role": "user", "content": "Mail ops."}]
    >>> answered = {"call_t1_0": [first]}
    >>> taken_by_another_question(answered, first, {"call_t1_0"})
    set()
    >>> taken_by_another_question(answered, [*first, *first], {"call_t1_0"})
    {'call_t1_0'}
    """
    return {id_ for id_, conversations in answered.items()
            if _of_turn(id_, stems)
            and not any(conversation == messages for conversation in conversations)}


def _of_turn(id_: str, stems: set[str]) -> bool:
    stem, again, number = id_.rpartition("_r")
    return id_ in stems or (bool(again) and number.isdigit() and stem in stems)


def _condition_met(reply: Reply, results: Sequence[ToolResult],
                   applied: Mapping[str, int] | None) -> bool:
    when = reply.when
    assert when is not None
    if when.applied:
        if applied is None:
            return False
        if any(applied.get(tool, 0) != count for tool, count in when.applied.items()):
            return False
        if when.tool is None and when.outcome is None:
            return True
    return any(_matches(reply, r) for r in results)


def _matches(reply: Reply, result: ToolResult) -> bool:
    when = reply.when
    assert when is not None
    tool_ok = when.tool is None or when.tool == result.tool
    outcome_ok = when.outcome is None or when.outcome == result.outcome
    return tool_ok and outcome_ok


def render(reply: Reply, turn: int, body: Mapping[str, object],
           used: set[str] | None = None, dialect: str = "openai") -> ScriptedResponse:
    """A scripted reply as the fake provider's :class:`~fakes.ScriptedResponse`.

    ``used`` are the ids of the calls in ``body``'s conversation, when already known.
    """
    parts: list[Text | ToolUse] = [Text(reply.text)] if reply.text else []
    used = _call_ids_in(body) if used is None else used
    parts += [ToolUse(fresh_call_id(turn, i, used, dialect), c.tool, dict(c.args))
              for i, c in enumerate(reply.calls)]
    if reply.usage is not None:
        u = reply.usage
        usage = ScriptedUsage(u.input_tokens, u.output_tokens, u.cache_read_tokens,
                              u.cache_write_tokens)
    else:
        said = (reply.text or "") + "".join(json.dumps(c.args) for c in reply.calls)
        usage = _derived_usage(body, len(said))
    return ScriptedResponse(tuple(parts), reply.finish_reason, usage)


def _derived_usage(body: Mapping[str, object], said_chars: int) -> ScriptedUsage:
    # About four characters a token; only needs to be deterministic and plausible.
    sent = _SORTED.encode(body.get("messages", []))
    return ScriptedUsage(max(1, len(sent) // 4), max(1, said_chars // 4))
