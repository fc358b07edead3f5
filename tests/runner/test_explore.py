"""Crash cases started from a recorded run, and stopped where they rejoin it, equal replays."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from long_scenarios import appends
from minimal_agent import MinimalAgent, minimal_factory

from fakes import CrashDisk
from harness.ports import AgentPorts, Task
from harness.runner import Case, CaseResult, World, plan_cases, run_case
from harness.runner import _explore as explore
from harness.runner._run import default_agent_factory
from harness.scenario import Scenario, load_scenario

# System tier (pytest --system): every case of shipped scenarios, run more than one way.
pytestmark = pytest.mark.system

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios" / "crash"
# Shipped scenarios with each kind of case (disk points in every class, world events,
# parallel calls, a budget spent across the crash), one case in STRIDE of each: the
# whole suite both ways takes minutes (`benchmarks/bench_crash_exploration.py --suite`).
REPRESENTATIVE = ("notes-and-mail-everywhere", "mail-at-every-world-event",
                  "crash-during-parallel-puts", "budget-spent-at-a-crash",
                  "unknown-send-is-inspected")
STRIDE = 40


def both_ways(scenario: Scenario, source: Path, factory: Any = None,
              stride: int = 1) -> list[tuple[CaseResult, CaseResult]]:
    cases = plan_cases(scenario, source, factory)[::stride]
    explored = [run_case(case, scenario, factory) for case in cases]
    replayed = [run_case(case, scenario, factory, replay=True) for case in cases]
    return list(zip(explored, replayed, strict=True))


@pytest.fixture(autouse=True)
def _fresh_recordings() -> None:
    explore._RECORDINGS.clear()
    explore._MADE.clear()


def test_the_shipped_crash_scenarios_give_the_same_verdicts_and_digests_both_ways() -> None:
    pairs: list[tuple[CaseResult, CaseResult]] = []
    for name in REPRESENTATIVE:
        source = SHIPPED / f"{name}.yaml"
        pairs += both_ways(load_scenario(source), source, stride=STRIDE)

    assert [(e.case.case_id, e.verdicts, e.digest) for e, _ in pairs] == \
        [(r.case.case_id, r.verdicts, r.digest) for _, r in pairs]
    assert all(r.fallback is None for r in explore._RECORDINGS.values())
    ways = {e.exploration for e, _ in pairs}
    assert "recorded" in ways, ways
    assert {r.exploration for _, r in pairs} == {"replayed"}


def test_a_case_that_reaches_the_recorded_state_again_stops_there_with_the_same_trace() -> None:
    # Attempt ids drawn per run make a restarted agent send again what the first one sent:
    # its state can equal the recorded run's, and the case rejoins it.
    factory = minimal_factory("ids_per_run")

    pairs = both_ways(appends(3), Path("appends.yaml"), factory, stride=2)

    rejoined = [(e, r) for e, r in pairs if e.exploration == "rejoined"]
    assert rejoined
    assert all(e.digest == r.digest and e.verdicts == r.verdicts for e, r in pairs)
    assert all(e.trace is not None and e.trace.final_incarnation == 2 for e, _ in rejoined)


def test_an_agent_whose_ids_change_at_a_restart_never_rejoins() -> None:
    # The rule it follows (a restarted client never reissues an attempt id) makes every
    # request after a restart differ from the recorded run's: nothing may be carried over.
    pairs = both_ways(appends(2), Path("appends.yaml"), minimal_factory(), stride=3)

    assert {e.exploration for e, _ in pairs if e.case.crash} == {"recorded"}
    assert [e.digest for e, _ in pairs] == [r.digest for _, r in pairs]


def _same_crash_state(scenario: Scenario) -> tuple[Case, Case]:
    """Two crash cases of ``scenario``, at different points, whose crashes leave the
    world in one state."""
    cases = [c for c in plan_cases(scenario, Path("appends.yaml")) if c.crash]
    recording = explore.recording_for(cases[0], scenario, default_agent_factory)
    assert recording is not None
    seen: dict[str, Case] = {}
    for case in cases:
        world = recording.crashed_world(case.crash)  # type: ignore[arg-type]
        if world is None:
            continue
        first = seen.setdefault(world.crash_state_key(), case)
        if first.crash.point_id != case.crash.point_id:  # type: ignore[union-attr]
            return first, case
    raise AssertionError("no two crashes leave the same state")


def test_crashes_that_leave_one_state_share_one_restart_and_keep_their_own_records() -> None:
    scenario = appends(2)
    first, second = _same_crash_state(scenario)

    ran, shared = run_case(first, scenario), run_case(second, scenario)
    replayed = run_case(second, scenario, replay=True)

    # Both say "recorded": which one ran first depends on what else a worker ran.
    assert (ran.exploration, shared.exploration) == ("recorded", "recorded")
    (recording,) = explore._RECORDINGS.values()
    assert recording.shared_restarts == 1
    assert (shared.verdicts, shared.digest) == (replayed.verdicts, replayed.digest)
    assert shared.trace is not None
    assert ran.trace is not None
    assert second.crash is not None
    assert shared.trace.crash.fired == second.crash.point_id != ran.trace.crash.fired
    assert shared.trace.points != ran.trace.points


@pytest.mark.parametrize("flaw", ["", "rerun_unknown", "no_fsync"])
def test_another_agent_sharing_restarts_gets_the_verdicts_a_replay_gives(flaw: str) -> None:
    # The tests' minimal agent, correct or with a recovery bug: shared restarts carry
    # its failures as faithfully as its passes.
    factory = minimal_factory(*filter(None, [flaw]))
    pairs = both_ways(appends(2), Path("appends.yaml"), factory)

    (recording,) = explore._RECORDINGS.values()
    assert recording.shared_restarts > 0
    assert recording.fallback is None
    assert [(e.verdicts, e.digest) for e, _ in pairs] == [(r.verdicts, r.digest) for _, r in pairs]
    if flaw:
        assert any(not e.passed for e, _ in pairs), "the flaw is never caught"


def test_a_crash_state_key_that_leaves_out_what_matters_is_caught_by_the_sample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Broken on purpose: every crash "leaves one state", so each case would take the
    # first one's restart. The replayed sample differs and the scenario replays.
    monkeypatch.setattr(World, "crash_state_key", lambda self: "one state")
    scenario = appends(2)
    crashes = [c for c in plan_cases(scenario, Path("appends.yaml")) if c.crash]
    cases = [crashes[0], crashes[-1], *crashes[1:-1:8]]  # the first shared one differs

    _caught_by_the_sample(scenario, cases)


def _caught_by_the_sample(scenario: Scenario, cases: list[Case]) -> None:
    """Run ``cases`` explored, the second of them sharing the first one's restart though
    its replay differs: the sample finds it, and every case's digest is its replay's."""
    results = [run_case(case, scenario) for case in cases]

    (recording,) = explore._RECORDINGS.values()
    assert recording.fallback is not None
    assert "shared case differed from its replay" in recording.fallback
    assert [r.digest for r in results] == \
        [run_case(case, scenario, replay=True).digest for case in cases]


_RUNS = {"count": 0}


class _CountsItsRuns(MinimalAgent):
    """Notes, in a file, how many runs this process made before: no two runs alike."""

    async def run(self, task: Task) -> Any:
        _RUNS["count"] += 1
        self.ports.disk.mkdir(self.ports.state_dir)
        with self.ports.disk.open_append(f"{self.ports.state_dir}/runs-{_RUNS['count']}") as f:
            f.write(b"x")
        return await super().run(task)


def test_an_agent_that_is_not_deterministic_replays_every_case_and_says_so() -> None:
    def factory(ports: AgentPorts) -> _CountsItsRuns:
        return _CountsItsRuns(ports)

    scenario = appends(2)
    cases = [c for c in plan_cases(scenario, Path("appends.yaml"), factory) if c.crash][:6]

    results = [run_case(case, scenario, factory) for case in cases]

    assert {r.exploration for r in results} == {"replayed"}
    (recording,) = explore._RECORDINGS.values()
    assert recording.fallback is not None
    assert "differed from its replay" in recording.fallback


def test_the_option_and_the_environment_variable_turn_it_off(monkeypatch) -> None:
    scenario = appends(2)
    case = [c for c in plan_cases(scenario, Path("appends.yaml")) if c.crash][3]

    assert run_case(case, scenario).exploration == "recorded"
    assert run_case(case, scenario, replay=True).exploration == "replayed"
    monkeypatch.setenv("HARNESS_REPLAY", "1")
    assert run_case(case, scenario).exploration == "replayed"


def test_a_factory_built_anew_for_each_case_is_recorded_once() -> None:
    scenario = appends(2)
    cases = [c for c in plan_cases(scenario, Path("appends.yaml")) if c.crash][:4]

    for case in cases:
        run_case(case, scenario, minimal_factory("ids_per_run"))

    assert len(explore._RECORDINGS) == 1


def test_disks_with_the_same_files_have_one_key_whatever_their_history() -> None:
    straight, detour = CrashDisk(), CrashDisk()
    for disk in (straight, detour):
        disk.view().mkdir("/state")
    detour.view().mkdir("/state/gone")  # other inode numbers from here on
    detour.view().rmdir("/state/gone")
    for disk in (straight, detour):
        with disk.view().open_append("/state/log") as f:
            f.write(b"a\n")
            f.fsync()
        disk.view().fsync_dir("/state")

    assert straight.state_key() == detour.state_key()
    with straight.view().open_append("/state/log") as f:
        f.write(b"b\n")  # the same volatile bytes below, but not durable on this one
    with detour.view().open_append("/state/log") as f:
        f.write(b"b\n")
        f.fsync()
    assert straight.state_key() != detour.state_key()


def test_a_copied_world_changes_apart_from_its_original() -> None:
    scenario = appends(1)
    recording = explore.Recording(Case(scenario.name, Path("a.yaml"), scenario.seed), scenario,
                                  minimal_factory())
    point, copy = next((key, world) for key, world in recording.copies.items() if world)
    before = copy.disk.files()

    crashed = recording.crashed_world(explore.CrashSpec(point[0], point[1], "unsynced_lost"))

    assert crashed is not None
    assert crashed.incarnations.crashed
    assert not copy.incarnations.crashed
    assert copy.disk.files() == before


def test_compaction_and_its_crash_points_give_the_same_traces_both_ways() -> None:
    # Compaction writes a file of its own and runs beside the turn's tools: its cases
    # start from copies too, and must end exactly as their replays do.
    source = SHIPPED.parent / "compaction" / "appended-during-compaction-kept.yaml"
    pairs = both_ways(load_scenario(source), source)

    assert [(e.case.case_id, e.verdicts, e.digest) for e, _ in pairs] == \
        [(r.case.case_id, r.verdicts, r.digest) for _, r in pairs]
    assert {e.exploration for e, _ in pairs} - {"replayed"}, "no case started from a copy"


@pytest.mark.parametrize(("folder", "name", "parts"), [
    ("jobs", "build-survives-a-crash", ["jobs"]),
    ("cancel", "race-and-session-cancel", ["jobs", "cancels"]),
    ("goals", "edited-goal-is-reverified", ["goal"]),
])
def test_jobs_cancels_and_goals_are_not_recorded_so_their_cases_replay(
        folder: str, name: str, parts: list[str]) -> None:
    source = SHIPPED.parent / folder / f"{name}.yaml"
    scenario = load_scenario(source)
    case = next(c for c in plan_cases(scenario, source) if c.crash)

    assert explore.unrecorded_parts(scenario) == parts
    assert run_case(case, scenario).exploration == "replayed"
    assert not explore._RECORDINGS


def test_an_async_generator_finalized_by_the_collector_does_not_stop_a_copy() -> None:
    # When the garbage collector meets an unfinished async generator (an HTTP stream the
    # agent stopped reading), the loop schedules its aclose() as a task. When that happens
    # depends on every allocation before, other tests' included: it must not decide
    # whether a persistence point can be copied.
    import gc

    async def stream() -> Any:
        yield b"chunk"
        yield b"more"

    async def finalizer_task_is_harmless() -> bool:
        opened = stream()
        await opened.__anext__()
        del opened
        gc.collect()
        await asyncio.sleep(0)
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert [type(t.get_coro()).__name__ for t in pending] == ["async_generator_athrow"]
        return not explore._other_tasks()

    assert asyncio.run(finalizer_task_is_harmless())


def test_a_task_blocked_on_the_one_at_the_point_does_not_stop_a_copy() -> None:
    # The runner's own wrapper, and a framework that runs each turn in a task of its own
    # (the OpenAI Agents SDK), wait on the task that reaches the point: they cannot act
    # before it ends, so the point is copied. A task running beside it still stops a copy.
    async def at_point() -> bool:
        return explore._other_tasks()

    async def beside() -> None:
        await asyncio.sleep(0.01)

    async def turn_in_a_task() -> bool:
        return await asyncio.create_task(at_point())

    async def nested() -> bool:
        return await asyncio.create_task(turn_in_a_task())

    async def in_parallel() -> bool:
        found, _ = await asyncio.gather(at_point(), beside())
        return found

    async def with_a_sibling() -> bool:
        sibling = asyncio.create_task(beside())
        found = await asyncio.create_task(at_point())
        await sibling
        return found

    assert (asyncio.run(nested()), asyncio.run(in_parallel()), asyncio.run(with_a_sibling())) \
        == (False, True, True)


def test_crash_states_are_kept_for_the_running_scenario_only_and_within_a_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = appends(1), appends(2)
    for case in [c for c in plan_cases(first, Path("one.yaml")) if c.crash][:6]:
        run_case(case, first)
    (one,) = explore._RECORDINGS.values()
    assert one.crash_states

    case = next(c for c in plan_cases(second, Path("two.yaml")) if c.crash)
    run_case(case, second)
    assert not one.crash_states  # the first scenario's cases are over: its traces went

    explore._RECORDINGS.clear()
    monkeypatch.setattr(explore, "_SHARED_POINTS_KEPT", 0)
    first_state, same_state = _same_crash_state(second)
    for case in (first_state, same_state):
        run_case(case, second)
    (recording,) = explore._RECORDINGS.values()
    assert recording.shared_restarts == 0


def test_a_case_with_secrets_takes_no_restart_of_another_and_looks_at_its_own_files() -> None:
    # J3's findings come from each incarnation's own files: a restart shared from a case
    # that crashed elsewhere would carry that case's findings, so none is shared.
    source = SHIPPED / "secret-arguments-stay-out.yaml"
    scenario = load_scenario(source)
    cases = [c for c in plan_cases(scenario, source) if c.crash]

    explored = [run_case(case, scenario) for case in cases]

    (recording,) = explore._RECORDINGS.values()
    assert recording.crash_states, "no restart was run from a copy"
    assert recording.shared_restarts == 0
    assert all(r.trace is not None and r.trace.secrets is not None for r in explored)
    assert [(r.verdicts, r.digest) for r in explored] == \
        [(r.verdicts, r.digest) for r in (run_case(c, scenario, replay=True) for c in cases)]


def test_a_remembered_restart_keeps_only_what_follows_the_crash(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Its records up to the crash are the recording's own; keeping them again for every
    # crash state made the memory grow with the square of a scenario's length, and the
    # budget stopped sharing half-way through a 64-turn scenario.
    scenario = appends(4)
    cases = [c for c in plan_cases(scenario, Path("four.yaml")) if c.crash]
    results = [run_case(case, scenario) for case in cases]
    longest = max(len(r.trace.points) for r in results if r.trace is not None)

    explore._RECORDINGS.clear()
    explore._MADE.clear()
    monkeypatch.setattr(explore, "_SHARED_POINTS_KEPT", 3 * longest)
    again = [run_case(case, scenario) for case in cases]
    (recording,) = explore._RECORDINGS.values()

    assert len(recording.crash_states) > 3  # three whole traces would have filled it
    assert [(r.digest, r.verdicts) for r in again] == [(r.digest, r.verdicts) for r in results]


def _from_their_start(name: str) -> tuple[Scenario, list[Case]]:
    """``name``'s crash cases whose point no copy holds (a stream open, a tool call
    running): each runs from its start until its crash."""
    source = SHIPPED / f"{name}.yaml"
    scenario = load_scenario(source)
    cases = [c for c in plan_cases(scenario, source) if c.crash]
    recording = explore.recording_for(cases[0], scenario, default_agent_factory)
    assert recording is not None
    return scenario, [c for c in cases if recording.crashed_world(c.crash) is None]


def test_cases_run_from_their_start_share_a_restart_where_their_crashes_leave_one_state(
) -> None:
    # Crashed mid-stream or inside a tool call, in every class: no copy holds those
    # points, but the crashes leave states other crashes leave too.
    scenario, cases = _from_their_start("mail-at-every-world-event")
    assert len(cases) >= 6

    explored = [run_case(case, scenario) for case in cases]
    (recording,) = explore._RECORDINGS.values()
    shared = recording.shared_restarts
    explore._RECORDINGS.clear()
    explore._MADE.clear()
    backwards = [run_case(case, scenario) for case in reversed(cases)][::-1]
    replayed = [run_case(case, scenario, replay=True) for case in cases]

    assert shared > 0
    assert recording.fallback is None
    assert [(e.verdicts, e.digest) for e in explored] == \
        [(r.verdicts, r.digest) for r in replayed] == [(b.verdicts, b.digest) for b in backwards]
    # How each says it ran does not depend on which of them ran first.
    assert [e.exploration for e in explored] == [b.exploration for b in backwards]
    assert {e.exploration for e in explored} <= {"replayed", "rejoined"}


def test_a_wrong_key_for_cases_run_from_their_start_is_caught_by_the_sample(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Broken on purpose, as above: every crash "leaves one state".
    scenario, every = _from_their_start("mail-at-every-world-event")
    cases = [every[0], every[-1], *every[1:-1]]  # the first shared one differs
    monkeypatch.setattr(World, "crash_state_key", lambda self: "one state")

    _caught_by_the_sample(scenario, cases)
