"""The journal: seed 000 §6's recovery cases, torn tails, corrupt middles, failed starts."""

from __future__ import annotations

import json

import pytest

from fakes import CrashDisk, CrashPlan, ToolLedger, VirtualClock, WorldTool
from harness import JournalCorruptError
from harness.agent._journal import ToolJournal
from harness.agent._tool_runner import ToolRunner
from harness.agent._transcript import TranscriptLog
from harness.ports import ToolInvocation

PATH = "/state/journal.jsonl"


def _call(n: int, tool: str = "append") -> ToolInvocation:
    return ToolInvocation(f"turn_{n}", f"call_{n}", tool, {"text": f"line {n}"})


def _journal(disk: CrashDisk, clock: VirtualClock | None = None) -> ToolJournal:
    return ToolJournal.open(disk.view(), PATH, run_id="run", clock=clock or VirtualClock())


def _lines(disk: CrashDisk) -> list[dict[str, object]]:
    return [json.loads(line) for line in disk.files()[PATH].splitlines()]


def test_a_started_call_recovers_as_unknown_exactly_once() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    journal.record_started(journal.record_intent(_call(1)))
    disk.restart()
    first = _journal(disk).recover()
    assert [r.outcome for r in first] == ["unknown_after_restart"]
    assert _journal(disk).recover() == []  # I11
    assert [line["state"] for line in _lines(disk)] == ["intent", "execution_started", "result"]


def test_an_intent_only_call_recovers_as_not_started_and_the_transcript_is_repaired() -> None:
    disk = CrashDisk()
    log = TranscriptLog.open(disk.view(), "/state/transcript.jsonl")
    log.append_assistant("turn_1", [_call(1)])
    _journal(disk).record_intent(_call(1))
    disk.restart()
    journal = _journal(disk)
    assert [r.outcome for r in journal.recover()] == ["interrupted_before_execution"]
    log = TranscriptLog.open(disk.view(), "/state/transcript.jsonl")
    [reply] = log.repair(journal.find)
    assert (reply.key, reply.status, reply.synthetic) == (("turn_1", "call_1"), "not_started", True)
    assert reply.content["error"] == "TOOL_NOT_STARTED"


def test_parallel_results_are_recorded_in_completion_order() -> None:
    clock = VirtualClock()
    disk = CrashDisk()
    ledger = ToolLedger(clock)
    from fakes import Behaviour

    tools = {
        "slow": WorldTool("read", ledger, name="slow", behaviour=Behaviour("slow", seconds=5)),
        "fast": WorldTool("read", ledger, name="fast", behaviour=Behaviour("slow", seconds=1)),
    }
    journal = _journal(disk, clock)
    runner = ToolRunner(journal, tools, clock=clock, incarnation=1)
    calls = [ToolInvocation("t", "c1", "slow", {}), ToolInvocation("t", "c2", "fast", {})]
    replies = clock.run(runner.run_batch(calls))
    assert [r.call_id for r in replies] == ["c1", "c2"]  # the model's order
    results = [(line["callId"], line["at"]) for line in _lines(disk) if line["state"] == "result"]
    assert results == [("c2", 1.0), ("c1", 5.0)]  # completion order, virtual time


def test_a_partial_tail_is_ignored_and_seq_stays_monotonic() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    journal.record_intent(_call(1))
    with disk.view().open_append(PATH) as f:
        f.write(b'{"seq":2,"state":"execution_st' + b"x" * 100_000)  # longer than 64 KiB
    journal = _journal(disk)
    assert len(journal.executions) == 1
    journal.record_intent(_call(2))
    seqs = [line["seq"] for line in _lines(disk)]
    assert seqs == [1, 2]


def test_a_garbage_tail_with_newlines_is_cut_too() -> None:
    disk = CrashDisk()
    _journal(disk).record_intent(_call(1))
    with disk.view().open_append(PATH) as f:
        f.write(b'{"seq":2,"sta\x00\x00\n\xff\xfe\ngarb')
    journal = _journal(disk)
    journal.record_intent(_call(2))
    assert [line["seq"] for line in _lines(disk)] == [1, 2]


def test_a_corrupt_middle_line_names_its_line_number() -> None:
    disk = CrashDisk()
    _journal(disk).record_intent(_call(1))
    valid_later = _lines_bytes(disk, 0).replace(b'"seq":1', b'"seq":3')
    with disk.view().open_append(PATH) as f:
        f.write(b"not json at all\n" + valid_later)
    expected = r"^/state/journal.jsonl:2: expected a journal record, found 'not json at all'"
    with pytest.raises(JournalCorruptError, match=expected) as caught:
        _journal(disk)
    assert caught.value.line == 2


def _lines_bytes(disk: CrashDisk, index: int) -> bytes:
    return disk.files()[PATH].splitlines(keepends=True)[index]


def test_a_seq_that_goes_backwards_is_corruption() -> None:
    disk = CrashDisk()
    _journal(disk).record_intent(_call(1))
    with disk.view().open_append(PATH) as f:
        f.write(_lines_bytes(disk, 0))
    with pytest.raises(
        JournalCorruptError, match=r":2: expected increasing seq, found seq 1 after seq 1"
    ):
        _journal(disk)


def test_a_failed_start_record_means_the_tool_never_ran() -> None:
    clock = VirtualClock()
    disk = CrashDisk(plan=CrashPlan("journal:write#2", "before", "eio_on_write"))
    ledger = ToolLedger(clock)
    runner = ToolRunner(
        _journal(disk, clock), {"append": WorldTool("append", ledger)}, clock=clock, incarnation=1
    )
    reply = clock.run(runner.run(_call(1)))
    assert reply.status == "not_started"
    assert reply.content["error"] == "TOOL_NOT_STARTED"
    assert ledger.effects == []
    assert runner.halted is not None
    # J6: nothing else runs while the journal cannot be written.
    assert clock.run(runner.run(_call(2))).status == "not_started"
    assert ledger.effects == []
    states = [(line["state"], line.get("outcome")) for line in _lines(disk)]
    assert states == [("intent", None), ("result", "blocked_before_execution")]


def test_a_failed_result_record_tells_the_model_the_outcome_is_unknown() -> None:
    clock = VirtualClock()
    disk = CrashDisk(plan=CrashPlan("journal:fsync#3", "before", "eio_on_fsync"))
    ledger = ToolLedger(clock)
    runner = ToolRunner(
        _journal(disk, clock), {"append": WorldTool("append", ledger)}, clock=clock, incarnation=1
    )
    reply = clock.run(runner.run(_call(1)))
    assert (reply.status, len(ledger.effects)) == ("unknown", 1)


def test_records_hold_hashes_never_raw_values() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    secret = ToolInvocation("t", "c", "send", {"body": "password=hunter2"})
    execution = journal.record_intent(secret)
    journal.record_started(execution)
    journal.record_result(execution, "returned", {"echo": "password=hunter2"})
    raw = disk.files()[PATH]
    assert b"hunter2" not in raw
    assert set(_lines(disk)[-1]) == {
        "seq",
        "state",
        "executionId",
        "callId",
        "turnId",
        "tool",
        "runId",
        "at",
        "argsSha256",
        "outcome",
        "resultSha256",
    }


def test_recovery_crashing_midway_still_recovers_once() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    for n in (1, 2):
        journal.record_started(journal.record_intent(_call(n)))
    disk.plan = CrashPlan("journal:fsync#6", "before")  # the second terminal record
    disk.restart()
    from fakes import SimulatedCrash

    with pytest.raises(SimulatedCrash):
        _journal(disk).recover()
    disk.restart()
    assert [r.execution.call_id for r in _journal(disk).recover()] == ["call_2"]
    assert _journal(disk).recover() == []


def _decoded(line: bytes) -> tuple[str, object]:
    try:
        return "value", json.loads(line)
    except ValueError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("line", [
    b'{"a":1,"b":[true,null]}', b'{"a":"\xc3\xa9"}', b"{", b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}',
    b"{\x00\x00\x00", b"{\x00a}", b"\xef\xbb\xbf{}", b"\x00\x00\x00{", b"[1]", b"",
])
def test_a_log_line_decodes_exactly_as_json_loads_decodes_it(line: bytes) -> None:
    from harness.agent._journal import _loads_line

    try:
        got: tuple[str, object] = "value", _loads_line(line)
    except ValueError as exc:
        got = type(exc).__name__, str(exc)

    assert got == _decoded(line)


def test_a_line_whose_folder_fsync_failed_is_cut_like_any_failed_append() -> None:
    # The first append of an incarnation writes and fsyncs the line, then fsyncs the
    # folders: when that fails the name (and so the line) may not be durable, and the
    # caller was told the append failed. The line must not count as written: the next
    # record takes its seq, and the journal must still load.
    disk = CrashDisk(plan=CrashPlan("state:fsync_dir#1", "before", "eio_on_fsync"))
    journal = _journal(disk)
    from harness import DiskError

    with pytest.raises(DiskError):
        journal.record_intent(_call(1))
    journal.record_intent(_call(2))
    assert [(line["seq"], line["callId"]) for line in _lines(disk)] == [(1, "call_2")]
    assert [e.call_id for e in _journal(disk).executions] == ["call_2"]


def test_a_failed_intent_does_not_let_a_later_incarnation_reuse_an_execution_id() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:write#1", "before", "eio_on_write"))
    journal = _journal(disk)
    from harness import DiskError

    with pytest.raises(DiskError):
        journal.record_intent(_call(1))
    first = journal.record_intent(_call(2))
    disk.restart()
    again = _journal(disk)
    second = again.record_intent(_call(3))
    assert first != second
    assert [e.call_id for e in _journal(disk).executions] == ["call_2", "call_3"]


def test_find_gives_each_calls_latest_execution_before_and_after_a_reload() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    first = journal.record_intent(_call(1))
    other = journal.record_intent(_call(2))
    again = journal.record_intent(_call(1))  # the same call scheduled once more
    journal.record_started(first)  # a later record of the first keeps its place
    for reader in (journal, _journal(disk)):
        found = reader.find("turn_1", "call_1")
        assert found is not None
        assert found.execution_id == again
        assert reader.find("turn_2", "call_2").execution_id == other  # type: ignore[union-attr]
        assert reader.find("turn_3", "call_3") is None


def test_a_foreign_line_moving_an_execution_to_another_call_is_found_there() -> None:
    disk = CrashDisk()
    journal = _journal(disk)
    moved = journal.record_intent(_call(1))
    lines = _lines(disk)
    foreign = {**lines[0], "seq": 2, "state": "execution_started", "callId": "call_9",
               "turnId": "turn_9"}
    with disk.view().open_append(PATH) as f:
        f.write(json.dumps(foreign).encode() + b"\n")
    reloaded = _journal(disk)
    assert reloaded.find("turn_1", "call_1") is None
    assert reloaded.find("turn_9", "call_9").execution_id == moved  # type: ignore[union-attr]
