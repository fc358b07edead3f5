"""Compaction's write-back (seed 000 §3.2) and its records: what arrived meanwhile is kept,
a stale result is discarded, an interrupted one is closed once."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from fakes import CrashDisk, VirtualClock
from harness.agent import CompactionConfig
from harness.agent._compaction import (
    COMPACTED_MARKER,
    Compactor,
    close_interrupted,
    compacted_entries,
    recent_turns,
)
from harness.agent._session_log import ReplyEntry, SessionLog

PATH = "/state/session.jsonl"
STORE = "/state/compaction.jsonl"


def _log(disk: CrashDisk, clock: VirtualClock, path: str = PATH) -> SessionLog:
    return SessionLog.open(disk.view(), path, run_id="run_1",
                           incarnation=disk.incarnations.current, clock=clock, root="/")


def _compactor(disk: CrashDisk, clock: VirtualClock, log: SessionLog,
               config: CompactionConfig | None = None) -> Compactor:
    return Compactor(log, _log(disk, clock, STORE), config or CompactionConfig(), clock,
                     incarnation=1)


def _turn(log: SessionLog, turn_id: str, result: str) -> None:
    call = {"callId": f"c_{turn_id}", "tool": "read", "argumentsText": "{}", "arguments": {},
            "argumentsError": None}
    log.append("assistant", turn_id, attemptId=f"a_{turn_id}", continuationOf=None,
               text=f"reading for {turn_id}", finish="tool_calls", rejected=False, calls=[call])
    log.append("tool_reply", turn_id, callId=f"c_{turn_id}", executionId=None, status="ok",
               content={"text": result}, synthetic=False)


def _session(disk: CrashDisk, clock: VirtualClock) -> SessionLog:
    log = _log(disk, clock)
    log.append("session", "", epoch=1, seed=0, dialect="openai", task={}, deadline=600.0)
    log.append("user", "t1", text="the task", source="task")
    _turn(log, "t1", "first result")
    _turn(log, "t2", "second result")
    return log


def _replies(compactor: Compactor) -> dict[str, object]:
    return {e.reply.call_id: e.reply.content
            for e in compacted_entries(compactor.log, compactor.store)
            if isinstance(e, ReplyEntry)}


def _compact(compactor: Compactor, clock: VirtualClock, keep: set[str],
             meanwhile: list[str]) -> bool:
    ticket = compactor.begin("threshold", "t2", keep)
    assert ticket is not None

    async def run() -> bool:
        summary = asyncio.ensure_future(compactor.summarise(ticket))
        await asyncio.sleep(0)
        for turn_id in meanwhile:  # history appended while the summariser runs
            _turn(compactor.log, turn_id, f"{turn_id} arrived meanwhile")
        return compactor.commit(ticket, await summary)

    return clock.run(run())


def test_a_result_replaces_only_what_it_read_and_keeps_what_arrived_meanwhile() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log)
    assert _compact(compactor, clock, recent_turns(log, 1), ["t3"])
    replies = _replies(compactor)
    assert str(replies["c_t1"]).startswith(f"{COMPACTED_MARKER} earlier result")
    assert replies["c_t2"] == {"text": "second result"}  # the newest turn read stays whole
    assert replies["c_t3"] == {"text": "t3 arrived meanwhile"}
    users = compacted_entries(log, compactor.store)
    assert [e.text for e in users if hasattr(e, "source")] == ["the task"]


def test_the_bug_of_seed_000_replaces_what_arrived_meanwhile() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log, CompactionConfig(keep_appended=False))
    assert _compact(compactor, clock, recent_turns(log, 1), ["t3"])
    assert str(_replies(compactor)["c_t3"]).startswith(COMPACTED_MARKER)


def test_a_result_from_a_stale_epoch_is_discarded_not_written_back() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log)
    ticket = compactor.begin("threshold", "t2", {"t2"})
    assert ticket is not None
    assert not compactor.commit(replace(ticket, epoch=0), ticket.cleared)
    assert not compactor.store.of_kind("compaction")
    assert "epoch" in str(compactor.store.of_kind("compaction_discarded")[0].body["reason"])
    assert _replies(compactor)["c_t1"] == {"text": "first result"}


def test_a_result_from_another_incarnation_is_discarded() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log)
    ticket = compactor.begin("context_overflow", "t2", {"t2"})
    assert ticket is not None
    assert not compactor.commit(replace(ticket, incarnation=0), ticket.cleared)
    reasons = [r.body["reason"] for r in compactor.store.of_kind("compaction_discarded")]
    assert reasons == ["started in incarnation 0"]


def test_recovery_closes_an_interrupted_compaction_once() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    assert _compactor(disk, clock, log).begin("threshold", "t2", {"t2"}) is not None
    assert len(close_interrupted(_log(disk, clock, STORE))) == 1
    restarted = _compactor(disk, clock, log)
    assert close_interrupted(restarted.store) == []
    reasons = [r.body["reason"] for r in restarted.store.of_kind("compaction_discarded")]
    assert reasons == ["interrupted_before_restart"]
    assert _replies(restarted)["c_t1"] == {"text": "first result"}  # nothing was replaced


def test_nothing_left_to_compact_begins_nothing() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log)
    assert compactor.begin("context_overflow", "t3", {"t1", "t2"}) is None
    assert not compactor.store.of_kind("compaction_start")


def test_an_overflow_is_compacted_and_retried_once_per_turn() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    log = _session(disk, clock)
    compactor = _compactor(disk, clock, log)
    assert compactor.overflow_retries_left("t3")
    compactor.begin("context_overflow", "t3", {"t2"})
    assert not compactor.overflow_retries_left("t3")
    disabled = _compactor(disk, clock, log, CompactionConfig(enabled=False))
    assert not disabled.overflow_retries_left("t4")


def test_the_threshold_is_a_share_of_the_window() -> None:
    clock, disk = VirtualClock(), CrashDisk()
    compactor = _compactor(disk, clock, _session(disk, clock), CompactionConfig(threshold=0.5))
    assert compactor.should_compact(500, 1000)
    assert not compactor.should_compact(499, 1000)
    assert not compactor.should_compact(500, None)
