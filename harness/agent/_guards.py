"""Loop guards: repetition, error fingerprints and per-class recovery counters (L3, L4).

Seed 002 §19.1 ③ lists the defences against an agent that loops: a turn cap;
"相邻两轮工具调用完全相同 → 注入提醒或强制中断" (identical consecutive tool calls:
a reminder, then a stop); an error fingerprint over (error type, tool,
normalised arguments, gap) that, seen again without new evidence, must not let
the same plan continue; and "四类恢复各有上限" — transport retry, argument
repair, verification rework and repetition each keep their own count, all
drawing on one goal budget (seed 002 §19.2).

Every guard here is a pure function of the trusted transcript, so a restarted
agent rebuilds the same counts from the session log without storing them
twice (S7: counters survive a restart).

>>> from harness.agent._messages import ToolCall
>>> a = AssistantEntry("t1", "a1", "", "tool_calls", (ToolCall("c", "read", "{}", {}),))
>>> b = AssistantEntry("t2", "a2", "", "tool_calls", (ToolCall("d", "read", " {} ", {}),))
>>> repetition_decision([a, b])
'remind'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness._errors import ConfigError
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry
from harness.agent._tools import ToolReply

# Built once: json.dumps builds a new encoder per call, and every call is normalised.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)

GuardDecision = Literal["ok", "remind", "stop"]
#: Reply statuses that count as the call's own failure (not_started and unknown
#: are about the harness, not about the call's arguments).
_ERROR_STATUSES = frozenset({"error", "timeout"})

REPETITION_REMINDER = (
    "You asked for exactly the same tool calls as in your previous turn, and they were "
    "run again. Repeating them will not give a different result: use what they returned, "
    "or try a different approach."
)
FINGERPRINT_REMINDER = (
    "This call failed the same way before and nothing new has been learned since. Do not "
    "repeat it unchanged: inspect the state, change the arguments, or choose another tool."
)
TRUNCATED_ARGUMENTS = (
    "arguments were cut at the output limit; not run. Send a shorter call, or split the "
    "work into several calls."
)


@dataclass(frozen=True)
class GuardLimits:
    """Caps of the loop's own recovery classes (the Budget caps them all together).

    >>> GuardLimits().max_argument_repairs
    3
    """

    # Seed 002 §19.1 ①: a truncated or malformed call goes back to the model to
    # repair; three repairs in one run mean the plan does not fit the output limit.
    max_argument_repairs: int = 3
    # Seed 002 §19.1 ③: the second identical turn gets a reminder, the third stops.
    repetitions_before_stop: int = 3
    # An error fingerprint seen this many times without new evidence stops the loop;
    # one fewer gets a "change course" reminder.
    fingerprint_repeats_before_stop: int = 3

    def __post_init__(self) -> None:
        for name in (
            "max_argument_repairs",
            "repetitions_before_stop",
            "fingerprint_repeats_before_stop",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(name, value, "an integer >= 1")


@dataclass(frozen=True)
class RecoveryCounters:
    """How often each recovery class was used in this run (L4).

    >>> RecoveryCounters(transport_retry=2).as_dict()["transport_retry"]
    2
    """

    transport_retry: int = 0
    argument_repair: int = 0
    verification_rework: int = 0
    repetition: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "transport_retry": self.transport_retry,
            "argument_repair": self.argument_repair,
            "verification_rework": self.verification_rework,
            "repetition": self.repetition,
        }


def normalise_arguments(arguments: Mapping[str, Any]) -> str:
    """Canonical JSON of ``arguments``: key order and spacing never make a call differ.

    >>> normalise_arguments({"b": 1, "a": " x "}) == normalise_arguments({"a": " x ", "b": 1})
    True
    """
    return _CANONICAL.encode(arguments)


def call_signature(entry: AssistantEntry) -> tuple[tuple[str, str], ...]:
    """The calls of one message as (tool, normalised arguments), in the model's order."""
    return tuple((call.name, normalise_arguments(call.arguments)) for call in entry.calls)


def repetition_run(history: Sequence[Entry]) -> int:
    """How many messages in a row, ending with the last, asked for the same calls.

    ``history`` is the session's entries (or only its assistant messages). A
    message whose every call a crash kept from starting is left out: asking for
    it again is what the synthetic reply invites (seed 002 §19.1, TOOL_NOT_STARTED
    "若仍需要可重新调度"), not a repetition of work that ran.

    >>> repetition_run([])
    0
    """
    assistants = _ran_or_refused(history)
    if not assistants or not assistants[-1].calls:
        return 0
    last = call_signature(assistants[-1])
    run = 0
    for entry in reversed(assistants):
        if call_signature(entry) != last:
            break
        run += 1
    return run


def _ran_or_refused(history: Sequence[Entry]) -> list[AssistantEntry]:
    """The assistant messages of ``history``, less those a crash kept from starting."""
    interrupted = {entry.reply.key for entry in history if isinstance(entry, ReplyEntry)
                   and entry.reply.synthetic and entry.reply.status == "not_started"}
    return [entry for entry in history if isinstance(entry, AssistantEntry)
            and not (entry.calls and all((entry.turn_id, call.call_id) in interrupted
                                         for call in entry.calls))]


def repetition_decision(
    history: Sequence[Entry], limits: GuardLimits = GuardLimits()
) -> GuardDecision:
    """``remind`` on the second identical turn, ``stop`` from the cap on (L3)."""
    run = repetition_run(history)
    if run >= limits.repetitions_before_stop:
        return "stop"
    return "remind" if run >= 2 else "ok"


def fingerprint(reply: ToolReply, tool: str, arguments: Mapping[str, Any]) -> str:
    """(error type, tool, normalised arguments) of an error reply (seed 002 §19.1 ③).

    >>> fingerprint(ToolReply("t", "c", "error", {"error": "E"}), "send", {})
    'E|send|{}'
    """
    content = reply.content
    kind = content.get("error") if isinstance(content, Mapping) else None
    return f"{kind or reply.status}|{tool}|{normalise_arguments(arguments)}"


def fingerprint_repeats(entries: Sequence[Entry], turn_id: str) -> dict[str, int]:
    """For each error fingerprint of ``turn_id``: its occurrences without new evidence.

    New evidence is an ``ok`` reply of an earlier turn whose content was never
    seen before: the model learned something, so a repeat may be a fair second
    try. Reading the same unchanged state again is no evidence.
    """
    calls = _calls_by_key(entries)
    streak: dict[str, int] = {}
    current: dict[str, int] = {}
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, ReplyEntry):
            continue
        reply = entry.reply
        if reply.status == "ok" and reply.turn_id != turn_id:
            evidence = json.dumps(reply.content, sort_keys=True, default=str)
            if evidence not in seen:
                seen.add(evidence)
                streak.clear()  # new evidence resets every chain
        elif reply.status in _ERROR_STATUSES and reply.key in calls:
            tool, arguments = calls[reply.key]
            key = fingerprint(reply, tool, arguments)
            streak[key] = streak.get(key, 0) + 1
            if reply.turn_id == turn_id:
                current[key] = streak[key]
    return current


def fingerprint_decision(
    entries: Sequence[Entry], turn_id: str, limits: GuardLimits = GuardLimits()
) -> GuardDecision:
    """``stop`` when a fingerprint of ``turn_id`` reached the cap, ``remind`` one before."""
    worst = max(fingerprint_repeats(entries, turn_id).values(), default=0)
    if worst >= limits.fingerprint_repeats_before_stop:
        return "stop"
    return "remind" if worst == limits.fingerprint_repeats_before_stop - 1 else "ok"


def _calls_by_key(entries: Sequence[Entry]) -> dict[tuple[str, str], tuple[str, Mapping[str, Any]]]:
    return {
        (entry.turn_id, call.call_id): (call.name, call.arguments)
        for entry in entries
        if isinstance(entry, AssistantEntry)
        for call in entry.calls
    }


def argument_repairs(assistants: Sequence[AssistantEntry]) -> int:
    """Messages whose calls were rejected (cut by truncation, or unparseable)."""
    return sum(1 for a in assistants if a.rejected or any(not call.runnable for call in a.calls))
