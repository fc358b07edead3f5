"""I5:context: the goal stays in the model's view across compactions and restarts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.checks._goal_context import check_goal_in_context
from harness.mutants import Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.ports import Goal
from harness.runner._goal_seen import revisions_in
from harness.trace import GoalInRequest, Trace

SCENARIO = "scenarios/goals/goal-survives-compactions.yaml"
CRASH = "journal:fsync#5:after:unsynced_lost"


def _trace(crash: str | None = None) -> Trace:
    result = run_kill(Kill(SCENARIO, "I5:context", crash), reference())
    assert result.trace is not None
    return result.trace


@pytest.fixture(scope="module")
def uncrashed() -> Trace:
    return _trace()


def _seen(trace: Trace, changes: dict[int, tuple[int, ...]]) -> Trace:
    seen = trace.extra.goal_in_requests
    assert seen is not None
    changed = tuple(replace(g, revisions=changes.get(g.request, g.revisions)) for g in seen)
    return replace(trace, extra=replace(trace.extra, goal_in_requests=changed))


def test_the_reference_agent_keeps_the_goal_in_view_across_compactions(uncrashed: Trace) -> None:
    verdict = check_goal_in_context(uncrashed)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "across 2 compaction(s)" in verdict.message
    seen = uncrashed.extra.goal_in_requests
    assert seen is not None
    # The user's edit (revision 2) reaches the model once it lands.
    assert max(seen[-1].revisions) == 2


def test_and_across_a_restart_between_compactions() -> None:
    verdict = check_goal_in_context(_trace(CRASH))
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "1 restart(s)" in verdict.message


def test_a_request_that_lost_the_goal_fails(uncrashed: Trace) -> None:
    last = uncrashed.requests[-1].index
    verdict = check_goal_in_context(_seen(uncrashed, {last: ()}))
    assert verdict is not None
    assert verdict.status == "fail"
    assert f"request #{last}" in verdict.message


def test_a_request_behind_the_revision_its_process_declared_fails(uncrashed: Trace) -> None:
    last = uncrashed.requests[-1].index
    verdict = check_goal_in_context(_seen(uncrashed, {last: (1,)}))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "revision 1 after its process had declared revision 2" in verdict.message


def test_without_a_compaction_after_the_goal_arrived_it_is_unknown(uncrashed: Trace) -> None:
    uncompacted = tuple(replace(r, replies=()) for r in uncrashed.requests)
    verdict = check_goal_in_context(replace(uncrashed, requests=uncompacted))
    assert verdict is not None
    assert verdict.status == "unknown"


def test_an_agent_that_never_told_its_model_the_goal_whole_is_unknown(uncrashed: Trace) -> None:
    verdict = check_goal_in_context(_seen(uncrashed, {r.index: () for r in uncrashed.requests}))
    assert verdict is not None
    assert verdict.status == "unknown"


def test_other_scenarios_record_nothing_and_get_no_verdict(uncrashed: Trace) -> None:
    assert check_goal_in_context(replace(uncrashed, extra=replace(
        uncrashed.extra, goal_in_requests=None))) is None
    stall = run_kill(Kill("scenarios/goals/edited-goal-is-reverified.yaml", "I5"), reference())
    assert stall.trace is not None
    assert stall.trace.extra.goal_in_requests is None
    assert "I5:context" not in {v.invariant for v in stall.verdicts}


def test_a_revision_counts_only_with_its_objective_and_every_criterion() -> None:
    goal = Goal("g", 2, 'ship "2.0"', ("tests pass", "docs\nbuilt"))
    whole = {"messages": [{"role": "system", "content": 'ship "2.0"; tests pass; docs\nbuilt'}]}
    assert revisions_in((goal,), whole) == (2,)
    assert revisions_in((goal,), {"messages": [{"content": 'ship "2.0"; tests pass'}]}) == ()
    assert revisions_in((goal,), None) == ()
    assert GoalInRequest(1, ()).revisions == ()
