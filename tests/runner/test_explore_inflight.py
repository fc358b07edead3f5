"""Crash cases at points no copy holds (a stream open, a tool call running): the other
classes of such a point take its first class's first incarnation, and equal replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from long_scenarios import appends
from minimal_agent import MinimalAgent, minimal_factory

from fakes import CrashDisk, SimulatedCrash
from harness.ports import AgentPorts, Task
from harness.runner import Case, CaseResult, plan_cases, run_case
from harness.runner import _explore as explore
from harness.runner._run import _CaseRun
from harness.scenario import Scenario

CLASSES = ["unsynced_lost", "process_killed", "torn_append_short"]
MID_STREAM = ["mid_stream:1", "mid_stream:2", "mid_stream:3"]


@pytest.fixture(autouse=True)
def _fresh_recordings() -> None:
    explore._RECORDINGS.clear()
    explore._MADE.clear()


def _mid_stream(turns: int = 3) -> Scenario:
    """``appends(turns)`` crashed mid-stream at every turn, in three classes."""
    data = appends(turns).model_dump(mode="json", exclude_none=True)
    data["crash"] = {"points": MID_STREAM[:turns], "classes": CLASSES}
    return Scenario.model_validate(data)


def _cases(scenario: Scenario, factory: Any) -> list[Case]:
    return [c for c in plan_cases(scenario, Path("mid.yaml"), factory) if c.crash]


def _explored_and_replayed(scenario: Scenario, factory: Any
                           ) -> tuple[list[CaseResult], list[CaseResult]]:
    cases = _cases(scenario, factory)
    explored = [run_case(case, scenario, factory) for case in cases]
    replayed = [run_case(case, scenario, factory, replay=True) for case in cases]
    return explored, replayed


def _same(explored: list[CaseResult], replayed: list[CaseResult]) -> None:
    assert [(e.case.case_id, e.verdicts, e.digest) for e in explored] == \
        [(r.case.case_id, r.verdicts, r.digest) for r in replayed]


@pytest.mark.parametrize("flaw", ["", "no_fsync"])
def test_the_classes_of_an_in_flight_point_run_its_first_incarnation_once(flaw: str) -> None:
    # Correct, every class leaves one state (all it wrote was synced) and the others take
    # the first one's restart too; without fsyncs each class leaves its own and restarts
    # from it, its failures caught as a replay catches them.
    scenario = _mid_stream()
    factory = minimal_factory(*filter(None, [flaw]))

    explored, replayed = _explored_and_replayed(scenario, factory)

    (recording,) = explore._RECORDINGS.values()
    assert len(explored) == len(MID_STREAM) * len(CLASSES)
    assert all(e.trace is not None and e.trace.crash.reached for e in explored)
    # One first incarnation per point, run from the start; every other class takes it.
    assert recording.first_lives_run == len(MID_STREAM)
    assert recording.first_lives_shared == len(MID_STREAM) * (len(CLASSES) - 1)
    assert not recording.first_lives  # each was dropped once its last class took it
    assert recording.fallback is None
    states = len(recording.crash_states)
    assert states == (len(explored) if flaw else len(MID_STREAM))
    if flaw:
        assert any(not e.passed for e in explored), "the flaw is never caught"
    _same(explored, replayed)


def test_the_first_case_served_from_a_shared_first_incarnation_is_replayed_to_check_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = _mid_stream(1)
    factory = minimal_factory()
    cases = _cases(scenario, factory)
    replays: list[str] = []
    real = explore.replayed_trace

    def replayed(case: Case, *args: Any) -> Any:
        replays.append(case.case_id)
        return real(case, *args)

    monkeypatch.setattr(explore, "replayed_trace", replayed)
    explored = [run_case(case, scenario, factory) for case in cases]

    (recording,) = explore._RECORDINGS.values()
    assert recording._served.get("inflight") == len(CLASSES) - 1
    assert replays == [cases[1].case_id]  # the first served so, not the one that ran it
    assert [e.exploration for e in explored] == ["replayed"] * len(CLASSES)


def test_a_shared_first_incarnation_that_differs_from_its_replay_is_caught_by_the_sample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Broken on purpose: the classes that take a first incarnation restart on no files.
    real = CrashDisk.crashed_as

    def emptied(self: CrashDisk, crash_class: Any) -> None:
        real(self, crash_class)
        state = self._after_crash
        assert state is not None
        self._after_crash = type(state)({"/": 0}, {0: state.inodes[0]})

    monkeypatch.setattr(CrashDisk, "crashed_as", emptied)
    scenario = _mid_stream(2)
    factory = minimal_factory()
    cases = [c for c in _cases(scenario, factory) if c.crash and c.crash.point_id == MID_STREAM[1]]

    results = [run_case(case, scenario, factory) for case in cases]

    (recording,) = explore._RECORDINGS.values()
    assert recording.fallback is not None
    assert "inflight case differed from its replay" in recording.fallback
    assert [r.digest for r in results] == \
        [run_case(case, scenario, factory, replay=True).digest for case in cases]
    assert results[-1].exploration == "replayed"


class _SaysHowItDied(MinimalAgent):
    """Reads the class of the crash it meets and dies with it in its error: its unwinding
    differs from one class to the next."""

    async def run(self, task: Task) -> Any:
        try:
            return await super().run(task)
        except SimulatedCrash as crash:
            if crash.point_id:
                raise RuntimeError(f"died of {crash.crash_class}") from None
            raise


def test_an_agent_that_reads_its_crash_class_replays_each_class() -> None:
    def factory(ports: AgentPorts) -> _SaysHowItDied:
        return _SaysHowItDied(ports)

    scenario = _mid_stream(2)

    explored, replayed = _explored_and_replayed(scenario, factory)

    (recording,) = explore._RECORDINGS.values()
    errors = {r.trace.incarnations[0].error for r in replayed if r.trace is not None}
    assert len(errors) == len(CLASSES), errors  # what it did as it died names the class
    assert recording.first_lives_shared == 0
    assert recording.first_lives_run == len(explored)
    _same(explored, replayed)


def test_a_crash_names_its_point_not_its_class() -> None:
    # A dying process cannot tell a power loss from a kill: the class decides only what
    # its files hold after, and the text it reads is the same in every class.
    disk = CrashDisk()
    disk.keep_crash_source = True
    crash = disk.crash_at_event("mid_stream:1", "torn_append_short")

    assert str(crash) == "simulated crash at mid_stream:1, incarnation 1"
    assert disk.crash_source is not None
    assert not disk.crash_source.class_read
    assert crash.crash_class == "torn_append_short"
    assert disk.crash_source.class_read


def test_a_crashed_disk_takes_the_state_another_class_leaves_at_the_same_instant() -> None:
    def crashed(crash_class: Any) -> CrashDisk:
        disk = CrashDisk(seed=3)
        disk.keep_crash_source = True
        view = disk.view()
        view.mkdir("/s")
        with view.open_append("/s/log") as f:
            f.write(b"synced\n")
            f.fsync()
            f.write(b"unsynced tail\n")
        disk.crash_at_event("mid_stream:2", crash_class)
        return disk

    for crash_class in CLASSES:
        derived = crashed("unsynced_lost")
        derived.crashed_as(crash_class)
        direct = crashed(crash_class)
        assert derived.crash_state_key() == direct.crash_state_key()
        assert derived.restart().read("/s/log") == direct.restart().read("/s/log")
    assert crashed("unsynced_lost").crash_state_key() != \
        crashed("process_killed").crash_state_key()


def test_what_the_model_recalls_of_the_crashed_incarnation_is_part_of_its_crash_state(
) -> None:
    # A restart that asks a turn again in another conversation gets new call ids where the
    # crashed incarnation had read that turn's answer whole, the same ids where it had not
    # (a crash mid-stream): two such crashes must not share a restart, files alike or not.
    scenario = _mid_stream(1)
    case = _cases(scenario, minimal_factory())[0]
    run = _CaseRun(case, scenario, minimal_factory())
    keys: list[str] = []

    def at_first_crash() -> bool:
        (pending,) = run.world.requests
        assert not pending.got_whole
        keys.append(run.world.crash_state_key())
        pending.ended, pending.delivered_bytes = "eof", pending.record.planned_bytes
        keys.append(run.world.crash_state_key())
        return False

    run.at_first_crash = at_first_crash
    run.run()

    assert len(keys) == 2
    assert keys[0] != keys[1]
