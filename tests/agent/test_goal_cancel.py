"""The goal cancel target of the reference agent (seed 002 §19.4, "goal: disarm 自动续跑").

A goal cancel sets the goal ``cancelled`` at the goal service, disarms the run (it stops
``cancelled``, no turn or verifier round follows, after a restart neither) and stops the
goal's jobs; a late completion is recorded and wakes nothing.
"""

from __future__ import annotations

from pathlib import Path

from fakes import GoalService
from harness.agent import ReferenceAgent
from harness.ports import CancelRequest
from harness.runner import World, plan_cases, run_trace, task_for
from harness.scenario import load_scenario
from harness.trace import Trace

GOAL = "scenarios/cancel/cancel-the-goal.yaml"
BUILD = "scenarios/jobs/build-survives-a-crash.yaml"


def crashed_at(label: str) -> Trace:
    scenario = load_scenario(GOAL)
    case = next(c for c in plan_cases(scenario, GOAL)
                if (c.crash.label if c.crash else "none") == label)
    return run_trace(case, scenario)


def test_the_goal_ends_cancelled_its_job_is_stopped_and_the_late_completion_wakes_nothing() \
        -> None:
    trace = crashed_at("none")
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "cancelled"
    assert trace.goal is not None
    assert trace.goal.final_status == "cancelled"
    [build] = [j for j in trace.jobs if j.tool == "build"]
    assert [s.signal for s in build.signals] == ["TERM"]
    assert (build.state, build.ended_at, build.acknowledged_by) == ("exited", 8.0, 1)
    assert [r.started_at for r in trace.requests] == [0.0]
    assert not [m for m in trace.outcome.transcript if m.role == "user" and
                "JOB_COMPLETED" in m.text]
    assert [(c.repeat, c.ack) for c in trace.cancels] == [(1, "cancelled"),
                                                         (2, "already_cancelled")]


def test_a_goal_cancel_written_before_a_crash_still_stands_after_the_restart() -> None:
    trace = crashed_at("cancels:fsync#1:after:unsynced_lost")
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "cancelled"
    assert trace.goal is not None
    cancelled = [e for e in trace.goal.events if e.kind == "status" and e.ok]
    assert [(e.status, e.incarnation) for e in cancelled] == [("cancelled", 2)]
    assert [c.ack for c in trace.cancels] == ["crashed", "cancelled", "already_cancelled"]
    assert [r.incarnation for r in trace.requests] == [1]


def test_a_goal_cancel_before_the_lease_is_held_is_applied_once_it_is() -> None:
    world = World(load_scenario(GOAL), seed=55)
    agent = ReferenceAgent(world.ports(1))
    request = CancelRequest("c-1", "goal", world.run_id)
    assert agent.cancel(request).status == "cancelled"
    outcome = world.clock.run(agent.run(task_for(world.scenario)))
    assert (outcome.stop_state, world.requests) == ("cancelled", [])
    assert isinstance(world.goals, GoalService)
    assert world.goals.status == "cancelled"
    assert agent.cancel(request).status == "already_cancelled"
    assert b'"target":"goal"' in world.disk.files()["/state/cancels.jsonl"]


def test_without_a_goal_port_the_goal_target_is_unsupported() -> None:
    world = World(load_scenario(BUILD), seed=1)
    agent = ReferenceAgent(world.ports(1))
    assert agent.cancel(CancelRequest("c-1", "goal", world.run_id)).status == "unsupported"


def test_a_goal_cancel_drops_the_request_in_flight_and_nothing_runs_after(tmp_path: Path) -> None:
    text = Path(GOAL).read_text(encoding="utf-8").replace(
        "build: {seconds: 8, output_lines: 4, ignores_term: true}",
        "build: {seconds: 2, output_lines: 4}").replace(
        "cancels:", "faults:\n  - {at: {turn: 2, attempt: 1}, kind: stall, after_events: 2, "
        "seconds: 25}\ncancels:").replace("points: all", "points: none")
    path = tmp_path / "in-flight.yaml"
    path.write_text(text, encoding="utf-8")
    scenario = load_scenario(path)
    trace = run_trace(plan_cases(scenario, str(path))[0], scenario)
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "cancelled"
    assert [(r.turn, r.ended_at) for r in trace.requests] == [(1, 0.0), (2, 5.0)]
    assert not trace.invocations  # publish never started
    assert trace.goal is not None
    assert trace.goal.final_status == "cancelled"
    assert not [e for e in trace.goal.events if e.kind == "verify"]
