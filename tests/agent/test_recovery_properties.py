"""Crash at every persistence point with every crash class; the invariants must hold.

Seed 002 §19.6 (fault-injection suite: "crash before and after every durable
write; non-idempotent duplicates = 0") over seed 000 §2 (recovery, transcript
repair). A small driver plays both the agent loop and a careful model: it
re-issues a call whose reply says TOOL_NOT_STARTED and inspects the world
instead of repeating one whose outcome is unknown. Checked: I1 (no duplicate
non-idempotent effect), I2 (one reply per call, in order), I10 (what the model
was told is done is still recorded), I11 (recovering twice equals once).

Three deliberately broken journals must be caught by the same checker.
The benchmark ``benchmarks/bench_crash_states.py`` loads this driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes import (
    CRASH_CLASSES,
    CrashDisk,
    CrashPlan,
    Incarnations,
    SimulatedCrash,
    ToolLedger,
    VirtualClock,
    WorldTool,
    crash_class_applies,
)
from harness import DiskError
from harness.agent._journal import DurableLineFile, Execution, Outcome, ToolJournal
from harness.agent._tool_runner import ToolRunner
from harness.agent._tools import ToolReply
from harness.agent._transcript import AssistantTurn, TranscriptLog
from harness.ports import AppendFile, ToolInvocation

JOURNAL = "/state/journal.jsonl"
TRANSCRIPT = "/state/transcript.jsonl"
MAX_INCARNATIONS = 4


@dataclass(frozen=True)
class Op:
    """One thing the model wants done, with arguments unique to it."""

    index: int
    kind: str

    def arguments(self) -> dict[str, Any]:
        if self.kind == "append":
            return {"text": f"line {self.index}"}
        if self.kind == "send":
            return {"to": "ops@example.com", "subject": f"report {self.index}"}
        if self.kind == "put":
            return {"key": f"k{self.index}", "value": self.index}
        return {"op": self.index}

    def visible_in(self, world: dict[str, Any]) -> bool:
        args = self.arguments()
        if self.kind == "append":
            return bool(args["text"] in world["notes"])
        if self.kind == "send":
            return any(m.get("subject") == args["subject"] for m in world["outbox"])
        if self.kind == "put":
            return bool(args["key"] in world["store"])
        return False  # a read has no effect; re-reading is harmless


@dataclass
class Variant:
    """Which journal, runner and recovery the driver uses (the broken ones too)."""

    journal: type[ToolJournal] = ToolJournal
    runner: type[ToolRunner] = ToolRunner


@dataclass
class World:
    seed: int
    clock: VirtualClock
    incarnations: Incarnations
    disk: CrashDisk
    ledger: ToolLedger
    tools: dict[str, WorldTool]
    violations: list[str] = field(default_factory=list)
    finished: bool = False


def make_world(seed: int, plan: CrashPlan | None) -> World:
    clock = VirtualClock()
    incarnations = Incarnations()
    disk = CrashDisk(plan=plan, seed=seed, incarnations=incarnations)
    ledger = ToolLedger(clock, incarnations)
    kinds = ("append", "send", "put", "read", "inspect")
    tools = {k: WorldTool(k, ledger) for k in kinds}  # type: ignore[arg-type]
    return World(seed, clock, incarnations, disk, ledger, tools)


def _open(world: World, variant: Variant) -> tuple[ToolJournal, TranscriptLog]:
    disk = world.disk.view()
    journal = variant.journal.open(disk, JOURNAL, run_id="run", clock=world.clock, seed=world.seed)
    return journal, TranscriptLog.open(disk, TRANSCRIPT)


def _recover(world: World, variant: Variant) -> tuple[ToolJournal, TranscriptLog]:
    journal, log = _open(world, variant)
    journal.recover()
    log.repair(journal.find)
    again_journal, again_log = _open(world, variant)
    if again_journal.recover() or again_log.repair(again_journal.find):  # I11
        world.violations.append("I11: a second recovery recovered something again")
    return journal, log


def op_status(transcript_log: TranscriptLog, op: Op) -> str:
    """``done``, ``todo`` (never ran) or ``inspect`` (may have run), from the transcript."""
    replies = transcript_log.transcript.replies()
    statuses = [
        replies[c.key].status
        for c in transcript_log.transcript.calls()
        if c.tool == op.kind and c.arguments == op.arguments() and c.key in replies
    ]
    if any(s in ("ok", "error") for s in statuses):
        return "done"
    if any(s in ("unknown", "timeout") for s in statuses):
        return "inspect"
    return "todo"


async def _call(
    log: TranscriptLog, runner: ToolRunner, tool: str, args: dict[str, Any]
) -> ToolReply:
    n = sum(isinstance(e, AssistantTurn) for e in log.transcript.entries) + 1
    call = ToolInvocation(f"turn_{n}", f"call_{n}", tool, args)
    log.append_assistant(call.turn_id, [call])
    [reply] = await runner.run_batch([call])
    log.append_replies([reply])
    return reply


async def _incarnation(world: World, ops: Sequence[Op], variant: Variant, blind: bool) -> None:
    journal, log = _recover(world, variant)
    runner = variant.runner(
        journal, world.tools, clock=world.clock, incarnation=world.incarnations.current
    )
    for op in ops:
        status = op_status(log, op)
        if status == "inspect" and not blind:
            reply = await _call(log, runner, "inspect", {"for": op.index})
            if reply.status != "ok":
                return
            status = "done" if op.visible_in(reply.content) else "todo"
        if status != "done":
            await _call(log, runner, op.kind, op.arguments())
        if runner.halted is not None:
            return  # J6: the trusted log failed; stop, a restart carries on
    world.finished = True


def run_scenario(
    ops: Sequence[Op],
    plan: CrashPlan | None,
    *,
    seed: int = 0,
    variant: Variant | None = None,
    blind: bool = False,
) -> World:
    """Run ``ops`` to the end across crashes and restarts, then check the invariants."""
    variant = variant or Variant()
    world = make_world(seed, plan)
    for _ in range(MAX_INCARNATIONS):
        try:
            world.clock.run(_incarnation(world, ops, variant, blind))
        except SimulatedCrash:
            pass
        except DiskError:
            pass  # the trusted log failed outside the runner: stop, restart
        if world.finished:
            break
        world.disk.restart()
    check(world, ops, variant)
    return world


def check(world: World, ops: Sequence[Op], variant: Variant) -> None:
    if not world.finished:
        world.violations.append(f"the workload did not finish in {MAX_INCARNATIONS} incarnations")
    duplicates = world.ledger.duplicates()
    if duplicates:
        world.violations.append(f"I1: non-idempotent effects applied twice: {duplicates}")
    for op in ops:
        if op.kind in ("append", "send") and world.finished:
            count = sum(1 for detail in world.ledger.details if detail == op.arguments())
            if count != 1:
                world.violations.append(f"{op.kind} #{op.index} took effect {count} times")
    world.disk.restart()
    journal, log = _open(world, variant)
    world.violations.extend(transcript_violations(log))
    world.violations.extend(acknowledged_violations(world, journal, log))


def transcript_violations(log: TranscriptLog) -> Iterator[str]:
    """I2: every call has exactly one reply, after its turn, in the model's order."""
    entries = log.transcript.entries
    seen: dict[tuple[str, str], int] = {}
    position: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(entries):
        if isinstance(entry, AssistantTurn):
            position.update({c.key: i for c in entry.calls})
        elif isinstance(entry, ToolReply):
            seen[entry.key] = seen.get(entry.key, 0) + 1
            if entry.key not in position:
                yield f"I2: reply {entry.key} has no tool call before it"
    for call in log.transcript.calls():
        if seen.get(call.key, 0) != 1:
            yield f"I2: call {call.key} has {seen.get(call.key, 0)} replies"


def acknowledged_violations(
    world: World, journal: ToolJournal, log: TranscriptLog
) -> Iterator[str]:
    """I10: a call the model was told succeeded is in the ledger and the journal."""
    keys = {
        (detail.get("text"), detail.get("subject"), detail.get("key"))
        for detail in world.ledger.details
    }
    replies = log.transcript.replies()
    for call in log.transcript.calls():
        reply = replies.get(call.key)
        if reply is None or reply.status != "ok" or call.tool in ("read", "inspect"):
            continue
        a = call.arguments
        if (a.get("text"), a.get("subject"), a.get("key")) not in keys:
            yield f"I10: {call.key} was reported done but the ledger has no such effect"
        execution = journal.find(*call.key)
        if execution is None or execution.outcome != "returned":
            yield f"I10: {call.key} was reported done but the journal says {execution}"


def crash_plans(points: Sequence[str]) -> Iterator[CrashPlan]:
    """Every point x before/after x every crash class that can happen there."""
    for point in points:
        for when in ("before", "after"):
            for crash_class in CRASH_CLASSES:
                if crash_class_applies(crash_class, point):
                    yield CrashPlan(point, when, crash_class)  # type: ignore[arg-type]


def explore(
    ops: Sequence[Op], *, seed: int = 0, variant: Variant | None = None, blind: bool = False
) -> dict[CrashPlan, list[str]]:
    """Record the points of a clean run, then crash once per plan; violations by plan."""
    recording = run_scenario(ops, None, seed=seed, variant=variant, blind=blind)
    found: dict[CrashPlan, list[str]] = {}
    if recording.violations:
        found[CrashPlan("none:write#1")] = recording.violations
    points = [p.id for p in recording.disk.points if p.generation == 1]
    for plan in crash_plans(points):
        world = run_scenario(ops, plan, seed=seed, variant=variant, blind=blind)
        if world.violations:
            found[plan] = world.violations
    return found


# -- the property ------------------------------------------------------------

workloads = st.lists(
    st.sampled_from(["append", "send", "put", "read"]), min_size=1, max_size=3
).map(lambda kinds: [Op(i, k) for i, k in enumerate(kinds, start=1)])


@pytest.mark.system  # system tier: every crash case of generated workloads
@settings(max_examples=6, deadline=None)
@given(ops=workloads, seed=st.integers(0, 2**16))
def test_every_crash_point_and_class_keeps_the_invariants(ops: list[Op], seed: int) -> None:
    found = explore(ops, seed=seed)
    assert not found, "\n".join(f"{plan}: {v}" for plan, v in list(found.items())[:5])


def test_a_two_call_workload_reaches_the_expected_points() -> None:
    world = run_scenario([Op(1, "append")], None)
    ids = [p.id for p in world.disk.points]
    assert ids[:6] == [
        "state:mkdir#1",
        "root:fsync_dir#1",
        "transcript:create#1",
        "transcript:write#1",
        "transcript:fsync#1",
        "state:fsync_dir#1",
    ]
    assert "journal:fsync#2" in ids  # execution_started made durable before the tool ran


# -- the checker must catch broken journals ---------------------------------


class _NoFsyncFile(DurableLineFile):
    def _write(self, handle: AppendFile, line: bytes) -> None:
        handle.write(line)  # broken on purpose: never fsynced


class NoFsyncJournal(ToolJournal):
    """(a) Appends without fsync."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.file = _NoFsyncFile(self.file.disk, self.file.path, root=self.file.root)


class StartAfterRunRunner(ToolRunner):
    """(b) Writes execution_started only after the tool ran."""

    async def run(self, call: ToolInvocation) -> ToolReply:
        execution_id = self.journal.record_intent(call)
        reply, outcome, result = await self._execute(self.tools[call.tool], call, execution_id)
        self.journal.record_started(execution_id)
        self.journal.record_result(execution_id, outcome, result)
        return reply


class BlindRetryJournal(ToolJournal):
    """(c) Recovers a started call as "not started", so the model repeats it."""

    def recovered_outcome(self, execution: Execution) -> Outcome:
        return "interrupted_before_execution"


BROKEN: dict[str, Callable[[], dict[CrashPlan, list[str]]]] = {
    "no_fsync": lambda: explore(
        [Op(1, "append"), Op(2, "send")], variant=Variant(journal=NoFsyncJournal)
    ),
    "start_after_run": lambda: explore(
        [Op(1, "append"), Op(2, "send")], variant=Variant(runner=StartAfterRunRunner)
    ),
    "blind_retry": lambda: explore(
        [Op(1, "append"), Op(2, "send")], variant=Variant(journal=BlindRetryJournal)
    ),
}


def _assert_caught(name: str) -> None:
    found = BROKEN[name]()
    assert found, f"the checker passed the broken journal {name!r}"
    assert any("I1" in v for vs in found.values() for v in vs), found


def test_a_journal_without_fsync_is_caught() -> None:
    _assert_caught("no_fsync")


def test_a_start_record_written_after_the_tool_ran_is_caught() -> None:
    _assert_caught("start_after_run")


def test_blind_retry_of_unknown_outcomes_is_caught() -> None:
    _assert_caught("blind_retry")


def test_a_model_that_repeats_unknown_calls_is_caught_too() -> None:
    found = explore([Op(1, "send")], blind=True)
    assert any("I1" in v for vs in found.values() for v in vs)
