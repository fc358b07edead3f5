"""The trusted session log: durable records, torn tails, corruption, the epoch (J2, J6, L7)."""

from __future__ import annotations

import pytest

from fakes import CrashDisk, CrashPlan, SimulatedCrash, VirtualClock
from harness import DiskError, JournalCorruptError
from harness.agent._retry_log import RetryEvent
from harness.agent._session_log import (
    SessionLog,
    SessionRecord,
    StaleEpochError,
    usage_from_json,
    usage_to_json,
)
from harness.ports import Usage

PATH = "/state/session.jsonl"


def _open(disk: CrashDisk) -> SessionLog:
    return SessionLog.open(
        disk.view(),
        PATH,
        run_id="run_1",
        incarnation=disk.incarnations.current,
        clock=VirtualClock(),
        root="/",
    )


def _event(kind: str, attempt: str, previous: str | None) -> RetryEvent:
    return RetryEvent(
        kind,
        "request",
        "k",
        attempt,
        previous,
        1,
        0.0,
        2.0,
        "503",  # type: ignore[arg-type]
        1,
        600.0,
    )


def test_records_round_trip_through_the_disk() -> None:
    disk = CrashDisk()
    log = _open(disk)
    log.append("session", "", epoch=1, seed=0, dialect="openai", task={}, deadline=600.0)
    log.append("user", "t1", text="héllo", source="task")
    again = _open(disk)
    assert again.records == log.records
    assert again.epoch == 1
    assert disk.files()[PATH].startswith(b'{"seq":1,"kind":"session","runId":"run_1"')


def test_a_torn_last_line_is_dropped_and_cut_on_the_next_append() -> None:
    disk = CrashDisk()
    _open(disk).append("user", "t1", text="one", source="task")
    disk.plan = CrashPlan("session:fsync#2", "before", "torn_append_short")
    with pytest.raises(SimulatedCrash):
        _open(disk).append("user", "t1", text="two" * 20, source="task")
    disk.plan = None
    disk.restart()
    log = _open(disk)
    assert [r.body["text"] for r in log.records] == ["one"]
    log.append("user", "t1", text="three", source="task")
    assert [r.body["text"] for r in _open(disk).records] == ["one", "three"]


def test_a_bad_line_before_valid_ones_is_corruption_not_a_torn_tail() -> None:
    disk = CrashDisk()
    log = _open(disk)
    log.append("user", "t1", text="one", source="task")
    view = disk.view()
    with view.open_append(PATH) as handle:
        handle.write(b'{"seq":2,"kind":"nonsense"}\n')
    log.file._good_size = view.size(PATH)  # pretend the bad line was ours
    log.append("user", "t1", text="three", source="task")
    with pytest.raises(JournalCorruptError, match=r"^/state/session.jsonl:2: expected a session"):
        _open(disk)


def test_a_failed_append_leaves_memory_unchanged() -> None:
    disk = CrashDisk(plan=CrashPlan("session:fsync#1", "before", "eio_on_fsync"))
    log = _open(disk)
    with pytest.raises(DiskError):
        log.append("user", "t1", text="lost", source="task")
    assert log.records == []


def test_write_back_from_a_stale_epoch_is_refused() -> None:
    log = _open(CrashDisk())
    log.append("session", "", epoch=2, seed=0, dialect="openai", task={}, deadline=1.0)
    with pytest.raises(StaleEpochError, match=r"^write-back started in session epoch 1, but"):
        log.write_back(1, "stop", "t1", stopState="complete")
    log.write_back(2, "stop", "t1", stopState="complete")
    assert log.stop_record() is not None


def test_attempt_ids_include_attempts_known_only_from_retry_events() -> None:
    log = _open(CrashDisk())
    log.append(
        "attempt",
        "t1",
        attemptId="att_1",
        attemptKind="first",
        status="failed",
        usage=None,
        startedAt=0.0,
        endedAt=0.0,
        error=None,
    )
    log.append("retry", "t1", event=_event("retry_scheduled", "att_1", None).to_json())
    log.append("retry", "t1", event=_event("retry_started", "att_2", "att_1").to_json())
    assert log.attempt_ids() == ["att_1", "att_2"]
    assert [e.kind for e in log.retry_events()] == ["retry_scheduled", "retry_started"]


def test_open_turns_are_the_started_and_never_ended() -> None:
    log = _open(CrashDisk())
    log.append("turn_start", "t1", turn=1)
    log.append("turn_end", "t1", reason="continue")
    log.append("turn_start", "t2", turn=2)
    assert log.open_turns() == ["t2"]


def test_usage_keeps_not_reported_apart_from_zero() -> None:
    usage = Usage(5, 2, 0, None)
    assert usage_from_json(usage_to_json(usage)) == usage
    assert usage_from_json(None) is None


def test_a_record_missing_its_fields_is_rejected() -> None:
    with pytest.raises(ValueError, match="a user record, missing or malformed 'text'"):
        SessionRecord.from_json(
            {"seq": 1, "kind": "user", "runId": "r", "incarnation": 1, "at": 0, "turnId": "t"}
        )


def test_calls_are_logged_with_secret_and_marked_arguments_redacted() -> None:
    from harness.agent._messages import ToolCall
    from harness.agent._session_log import calls_to_json

    secret = ToolCall.parse("c1", "login", '{"user": "ann", "password": "hunter2", "pin": "4711"}')
    plain = ToolCall.parse("c2", "notes", '{"text":  "hi"}')
    cut = ToolCall.parse("c3", "login", '{"user": "ann", "pin": "4711", "passw')
    logged = calls_to_json((secret, plain, cut), {"login": ("pin",)})
    assert logged[0]["arguments"] == {"user": "ann", "password": "[redacted]", "pin": "[redacted]"}
    assert "hunter2" not in logged[0]["argumentsText"]
    assert "4711" not in logged[0]["argumentsText"]
    assert logged[1]["argumentsText"] == '{"text":  "hi"}'  # nothing secret: byte for byte
    assert logged[2]["argumentsText"] == '{"user": "ann", "pin": "[redacted]", "passw'
