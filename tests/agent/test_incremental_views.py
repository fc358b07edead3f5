"""The session log's incremental view and the guards over it answer as a full reading does.

The loop reads its session log back every turn; it now reads each record once
(:class:`SessionView`, :class:`GuardHistory`) instead of decoding the whole log
several times a turn. These tests hold the incremental answers to the full ones
after every record of seeded random sessions, through reloads, and check that a
record is decoded once (tests/runner/test_long_run_work.py checks a whole run).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import harness.agent._session_log as session_log
from fakes import CrashDisk, VirtualClock
from harness.agent import GuardLimits
from harness.agent._guards import (
    GuardHistory,
    argument_repairs,
    fingerprint_repeats,
    repetition_decision,
)
from harness.agent._messages import ToolCall
from harness.agent._session_log import SessionLog, calls_to_json

PATH = "/state/session.jsonl"
TOOLS = ("read", "send")
CONTENTS: tuple[Any, ...] = ({"text": "a"}, {"text": "b"}, "plain", {"error": "E"}, None)


def _open(disk: CrashDisk) -> SessionLog:
    return SessionLog.open(disk.view(), PATH, run_id="run_1", incarnation=1,
                           clock=VirtualClock(), root="/")


def _assistant(log: SessionLog, rng: random.Random, turn: str,
               previous: list[ToolCall]) -> list[ToolCall]:
    calls = [ToolCall(f"c{i}", rng.choice(TOOLS), "{}", {"n": rng.randrange(2)},
                      "bad json" if rng.random() < 0.1 else None)
             for i in range(rng.randrange(3))]
    if previous and rng.random() < 0.4:
        calls = previous  # the same calls again: a repetition
    log.append("assistant", turn, attemptId=f"a_{turn}", continuationOf=None,
               text=rng.choice(("", "thinking")), finish="tool_calls" if calls else "stop",
               rejected=rng.random() < 0.1, calls=calls_to_json(tuple(calls)))
    return calls


def _reply(log: SessionLog, turn: str, call: str, status: str) -> None:
    content = {"error": "E"} if status != "ok" else CONTENTS[hash((turn, call)) % 3]
    log.append("tool_reply", turn, callId=call, executionId=None, status=status,
               content=content, synthetic=status == "not_started")


def _random_session(log: SessionLog, rng: random.Random, turns: int):  # type: ignore[no-untyped-def]
    """Append a random session, yielding the turn after each record."""
    calls: list[ToolCall] = []
    for number in range(1, turns + 1):
        turn = f"t{rng.randrange(1, number + 1)}" if rng.random() < 0.1 else f"t{number}"
        log.append("turn_start", turn, turn=number)
        yield turn
        if rng.random() < 0.2:
            log.append("user", turn, text="a reminder", source="guard")
            yield turn
        if rng.random() < 0.1:  # a foreign reply, to a call not made yet
            _reply(log, f"t{number + 1}", "c0", "error")
            yield turn
        calls = _assistant(log, rng, turn, calls)
        yield turn
        lost = rng.random() < 0.2  # a crash kept every call from starting
        for call in calls:
            if rng.random() < 0.9:  # a crash may have lost a reply
                status = "not_started" if lost else rng.choice(("ok", "error", "timeout"))
                _reply(log, rng.choice((turn, turn, f"t{max(1, number - 1)}")), call.call_id,
                       status)
                yield turn
        if rng.random() < 0.3:
            log.append("attempt", turn, attemptId=f"a_{turn}", attemptKind="request",
                       status="ok", usage=None, startedAt=0.0, endedAt=1.0, error=None)
            yield turn


@pytest.mark.parametrize("seed", range(20))
def test_the_guards_answer_as_a_full_reading_of_the_log_after_every_record(seed: int) -> None:
    rng = random.Random(seed)
    disk = CrashDisk()
    log = _open(disk)
    limits = GuardLimits(repetitions_before_stop=rng.randrange(2, 5),
                         fingerprint_repeats_before_stop=rng.randrange(2, 5))
    history = GuardHistory(log)
    for turn in _random_session(log, rng, 40):
        if rng.random() < 0.05:  # a restart reloads the log: a new view, read from its start
            log = _open(disk)
        if history.log is not log:
            history = GuardHistory(log)
        entries = log.entries()
        asked = rng.choice((turn, f"t{rng.randrange(1, 40)}"))
        assert history.repetition_decision(limits) == repetition_decision(entries, limits)
        assert history.fingerprint_repeats(asked) == fingerprint_repeats(entries, asked)
        assert history.argument_repairs() == argument_repairs(log.assistants())


@pytest.mark.parametrize("seed", range(4))
def test_the_view_kept_while_appending_is_the_view_of_the_reloaded_log(seed: int) -> None:
    rng = random.Random(seed)
    disk = CrashDisk()
    log = _open(disk)
    for _ in _random_session(log, rng, 30):
        pass
    again = _open(disk)
    assert again.records == log.records
    assert again.entries() == log.entries()
    assert again.assistants() == log.assistants()
    assert again.replies() == log.replies()
    assert again.attempts() == log.attempts()
    assert again.last_entry() == log.entries()[-1]
    for kind in ("turn_start", "assistant", "tool_reply", "user", "stop"):
        assert again.count(kind) == len(log.of_kind(kind))
        assert again.last(kind) == (log.of_kind(kind) or [None])[-1]


def test_each_record_is_decoded_once_however_often_the_log_is_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []
    decode = session_log._decode_body

    def counted(record: session_log.SessionRecord) -> object:
        decoded.append(record.kind)
        return decode(record)

    monkeypatch.setattr(session_log, "_decode_body", counted)
    log = _open(CrashDisk())
    for number in range(1, 21):
        log.append("user", f"t{number}", text="go", source="task")
        for _ in range(5):  # the loop reads the log back several times a turn
            log.entries()
            log.assistants()
            log.last_entry()
    assert len(decoded) == 20


def _call(log: SessionLog, turn: str, tool: str) -> None:
    call = ToolCall("c0", tool, "{}", {})
    log.append("assistant", turn, attemptId=f"a_{turn}", continuationOf=None, text="",
               finish="tool_calls", rejected=False, calls=calls_to_json((call,)))


def _error(log: SessionLog, turn: str) -> None:
    log.append("tool_reply", turn, callId="c0", executionId=None, status="error",
               content={"error": "E"}, synthetic=False)


def _both(log: SessionLog, history: GuardHistory, turn: str) -> tuple[object, object]:
    return history.fingerprint_repeats(turn), fingerprint_repeats(log.entries(), turn)


def test_an_error_reply_read_before_its_call_counts_once_the_call_is_known() -> None:
    log = _open(CrashDisk())
    history = GuardHistory(log)
    _call(log, "t1", "send")
    _error(log, "t1")
    _error(log, "t3")  # a foreign line: the reply before its call
    assert history.fingerprint_repeats("t2") == {}
    _call(log, "t3", "send")
    _call(log, "t4", "send")
    _error(log, "t4")
    assert _both(log, history, "t4") == ({"E|send|{}": 3}, {"E|send|{}": 3})


def test_a_call_named_again_with_another_tool_counts_as_the_later_one() -> None:
    log = _open(CrashDisk())
    history = GuardHistory(log)
    _call(log, "t1", "send")
    _error(log, "t1")
    assert history.fingerprint_repeats("t2") == {}
    _call(log, "t1", "read")  # the same turn and call id: the later message wins
    _call(log, "t4", "read")
    _error(log, "t4")
    assert _both(log, history, "t4") == ({"E|read|{}": 2}, {"E|read|{}": 2})
