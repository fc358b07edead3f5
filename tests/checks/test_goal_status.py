"""I5:status: a run that stops to wait leaves its goal waiting too (seed 002 §19.2)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import mutant_trace, reference_trace

from harness.checks._goal_status import check_goal_status
from harness.trace import GoalEventRecord, Trace

SCENARIO = "scenarios/goals/rate-limit-parks-the-goal.yaml"


@pytest.fixture(scope="module")
def parked() -> Trace:
    return reference_trace(SCENARIO, "I5:status")


def test_the_reference_agent_writes_the_usage_limit_onto_the_goal(parked: Trace) -> None:
    verdict = check_goal_status(parked)
    assert verdict is not None
    assert (verdict.status, verdict.message) == (
        "pass", "the run stopped usage_limited, and the goal service holds the goal "
        "usage_limited too")
    assert parked.goal is not None
    status = [e for e in parked.goal.events if e.kind == "status"]
    assert [(e.status, e.ok) for e in status] == [("usage_limited", True)]


def test_an_agent_that_leaves_the_goal_active_fails() -> None:
    verdict = check_goal_status(mutant_trace(SCENARIO, "I5:status",
                                             "I5-leaves-the-goal-active-at-a-usage-limit"))
    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message.startswith(
        "the run stopped usage_limited; goal rotate-keys is active at the goal service")


def test_a_stop_that_waits_for_nothing_is_not_judged(parked: Trace) -> None:
    assert parked.outcome is not None
    done = replace(parked, outcome=replace(parked.outcome, stop_state="complete"))
    verdict = check_goal_status(done)
    assert verdict is not None
    assert verdict.status == "unknown"


def test_a_user_edit_after_the_stop_makes_it_unjudgeable(parked: Trace) -> None:
    assert parked.goal is not None
    last = parked.goal.events[-1]
    edit = GoalEventRecord(last.seq + 1, "edit", 0, last.at, last.requests_before,
                           last.invocations_before, last.revision + 1, last.epoch, last.holder,
                           "active")
    edited = replace(parked, goal=replace(parked.goal, events=(*parked.goal.events, edit),
                                          final_status="active"))
    verdict = check_goal_status(edited)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "edited the goal" in verdict.message


def test_no_goal_no_verdict_and_an_unused_port_is_unknown(parked: Trace) -> None:
    assert check_goal_status(replace(parked, goal=None)) is None
    assert parked.goal is not None
    unused = check_goal_status(replace(parked, goal=replace(parked.goal, used=False)))
    assert unused is not None
    assert unused.status == "unknown"
