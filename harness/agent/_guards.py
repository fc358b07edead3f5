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
from typing import Any, Literal, final

from harness._errors import ConfigError
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry, SessionLog, SessionView
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
    # Seed 002 §19.1 ③ (钩子死循环防护): levels a hook may fire past the task's depth
    # bound. Only a broken agent sets it (an off-by-one guard).
    hook_depth_slack: int = 0

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
            evidence = _evidence(reply)
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


_Key = tuple[str, str]


@final
class GuardHistory:
    """The guards over one session log, each entry read once: the pure functions' answers.

    :func:`repetition_decision`, :func:`fingerprint_decision` and
    :func:`argument_repairs` read the whole transcript; the loop asks them every
    turn, so a long run paid for its whole history each turn (and re-encoded
    every earlier reply's content as evidence). This keeps what they fold over
    (the calls by key, the interrupted calls, the error streaks up to the
    replies of the turn asked about) and takes only the entries appended since
    the last question. A log that was reloaded (a new :class:`SessionView`) is
    read again from its start. Where an earlier fold would no longer hold (a
    reply of the asked-about turn was folded, or a call became known after an
    error reply to it), the fold starts over, so every answer is the pure
    function's over :meth:`SessionLog.entries`.
    """

    def __init__(self, log: SessionLog) -> None:
        self.log = log
        self._start(log.view)

    def _start(self, view: SessionView) -> None:
        self._view = view
        self._read = 0  # entries of the view taken in
        self._calls: dict[_Key, tuple[str, Mapping[str, Any]]] = {}
        self._interrupted: set[_Key] = set()
        self._assistants: list[AssistantEntry] = []
        self._repairs = 0
        self._replies: list[ToolReply] = []
        self._restart_fold()

    def _restart_fold(self) -> None:
        self._folded = 0  # replies whose streaks are in _streak
        self._streak: dict[str, int] = {}
        self._evidence: set[str] = set()
        self._folded_turns: set[str] = set()
        self._unmatched: set[_Key] = set()  # error replies folded before their call was known

    def _catch_up(self) -> None:
        view = self.log.view
        if view is not self._view:
            self._start(view)
        entries = view.entries
        for entry in entries[self._read:]:
            if isinstance(entry, AssistantEntry):
                self._take_assistant(entry)
            elif isinstance(entry, ReplyEntry):
                reply = entry.reply
                self._replies.append(reply)
                if reply.synthetic and reply.status == "not_started":
                    self._interrupted.add(reply.key)
        self._read = len(entries)

    def _take_assistant(self, entry: AssistantEntry) -> None:
        self._assistants.append(entry)
        if entry.rejected or any(not call.runnable for call in entry.calls):
            self._repairs += 1
        for call in entry.calls:
            key = (entry.turn_id, call.call_id)
            named = (call.name, call.arguments)
            if key in self._unmatched or self._calls.get(key, named) != named:
                self._restart_fold()  # a folded error reply would now read differently
            self._calls[key] = named

    # -- the answers ----------------------------------------------------------------

    def argument_repairs(self) -> int:
        """:func:`argument_repairs` of the log's assistant messages."""
        self._catch_up()
        return self._repairs

    def repetition_decision(self, limits: GuardLimits = GuardLimits()) -> GuardDecision:
        """:func:`repetition_decision` of the log's entries."""
        self._catch_up()
        run = self._repetition_run(max(limits.repetitions_before_stop, 2))
        if run >= limits.repetitions_before_stop:
            return "stop"
        return "remind" if run >= 2 else "ok"

    def _repetition_run(self, enough: int) -> int:
        """:func:`repetition_run`, counting no further than ``enough``."""
        last: tuple[tuple[str, str], ...] | None = None
        run = 0
        for entry in reversed(self._assistants):
            if entry.calls and all((entry.turn_id, call.call_id) in self._interrupted
                                   for call in entry.calls):
                continue  # a crash kept every call from starting: not a repetition
            if last is None:
                if not entry.calls:
                    return 0
                last = call_signature(entry)
            elif call_signature(entry) != last:
                break
            run += 1
            if run >= enough:
                break
        return run

    def fingerprint_decision(self, turn_id: str, limits: GuardLimits = GuardLimits()
                             ) -> GuardDecision:
        """:func:`fingerprint_decision` of the log's entries."""
        worst = max(self.fingerprint_repeats(turn_id).values(), default=0)
        if worst >= limits.fingerprint_repeats_before_stop:
            return "stop"
        return "remind" if worst == limits.fingerprint_repeats_before_stop - 1 else "ok"

    def fingerprint_repeats(self, turn_id: str) -> dict[str, int]:
        """:func:`fingerprint_repeats` of the log's entries."""
        self._catch_up()
        if turn_id in self._folded_turns:
            self._restart_fold()  # its replies were folded as another turn's
        replies = self._replies
        # Replies of other turns never count for ``turn_id``: fold them for good.
        while self._folded < len(replies) and replies[self._folded].turn_id != turn_id:
            self._fold(replies[self._folded])
            self._folded += 1
        streak = dict(self._streak)
        current: dict[str, int] = {}
        seen: set[str] = set()
        for reply in replies[self._folded:]:
            if reply.status == "ok" and reply.turn_id != turn_id:
                evidence = _evidence(reply)
                if evidence not in self._evidence and evidence not in seen:
                    seen.add(evidence)
                    streak.clear()
            elif reply.status in _ERROR_STATUSES and reply.key in self._calls:
                tool, arguments = self._calls[reply.key]
                key = fingerprint(reply, tool, arguments)
                streak[key] = streak.get(key, 0) + 1
                if reply.turn_id == turn_id:
                    current[key] = streak[key]
        return current

    def _fold(self, reply: ToolReply) -> None:
        """One reply of a turn other than the one asked about, into the lasting streaks."""
        self._folded_turns.add(reply.turn_id)
        if reply.status == "ok":
            evidence = _evidence(reply)
            if evidence not in self._evidence:
                self._evidence.add(evidence)
                self._streak.clear()
        elif reply.status in _ERROR_STATUSES:
            if reply.key not in self._calls:
                self._unmatched.add(reply.key)
                return
            tool, arguments = self._calls[reply.key]
            key = fingerprint(reply, tool, arguments)
            self._streak[key] = self._streak.get(key, 0) + 1


def _evidence(reply: ToolReply) -> str:
    return json.dumps(reply.content, sort_keys=True, default=str)
