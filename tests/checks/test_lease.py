"""I5:lease: no turn or side effect runs under a lease that lapsed (seed 002 §19.3)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._lease import check_lease
from harness.mutants import Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/goals/lease-lapses-during-a-long-call.yaml"


@pytest.fixture(scope="module")
def lapsed() -> Trace:
    return reference_trace(SCENARIO, "I5:lease")


def test_the_reference_agent_takes_a_lapsed_lease_anew_before_acting(lapsed: Trace) -> None:
    verdict = check_lease(lapsed)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert lapsed.goal is not None
    acquires = [e for e in lapsed.goal.events if e.kind == "acquire"]
    # The 300 s read outlived the 120 s lease: the same process took epoch 2 at 300 s.
    assert [(e.epoch, e.incarnation, e.at) for e in acquires] == [(1, 1, 0.0), (2, 1, 300.0)]


def test_acting_after_the_lapse_without_a_new_acquire_fails(lapsed: Trace) -> None:
    assert lapsed.goal is not None
    # The same run as an agent that never re-acquired: its later declares name epoch 1.
    events = tuple(replace(e, declared_epoch=1, epoch=1) for e in lapsed.goal.events
                   if not (e.kind == "acquire" and e.epoch == 2))
    verdict = check_lease(replace(lapsed, goal=replace(lapsed.goal, events=events)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "whose lease ended at 120s" in verdict.message


def test_a_longer_lease_never_lapses_and_judges_nothing(lapsed: Trace) -> None:
    verdict = check_lease(replace(lapsed, extra=replace(lapsed.extra, lease_seconds=3600.0)))
    assert verdict is not None
    assert verdict.status == "unknown"


def test_without_a_declared_lease_or_a_goal_port_there_is_no_judgement(lapsed: Trace) -> None:
    assert check_lease(replace(lapsed, extra=replace(lapsed.extra, lease_seconds=None))) is None
    assert lapsed.goal is not None
    unused = replace(lapsed, goal=replace(lapsed.goal, used=False))
    verdict = check_lease(unused)
    assert verdict is not None
    assert verdict.status == "unknown"


def test_a_port_that_states_no_end_time_keeps_one_epoch() -> None:
    from harness.mutants._build import GoalPortWrapper, with_goals
    from harness.ports import Lease

    class NoEnd(GoalPortWrapper):
        def acquire(self) -> Lease:
            return replace(self.inner.acquire(), expires_at=0.0)

    result = run_kill(Kill(SCENARIO, "I5:lease"), with_goals(reference(), NoEnd))
    assert result.trace is not None
    assert result.trace.goal is not None
    assert [e.epoch for e in result.trace.goal.events if e.kind == "acquire"] == [1]


def test_the_failure_report_points_at_the_declared_lease() -> None:
    from pathlib import Path

    from harness._report_text import render_failure
    from harness.mutants import MUTANTS
    from harness.scenario import load_scenario

    mutant = next(m for m in MUTANTS if m.name == "I5-acts-on-a-lapsed-lease")
    result = run_kill(Kill(SCENARIO, "I5:lease"), mutant.factory)
    report = render_failure(result, load_scenario(Path(SCENARIO)))
    assert ">" in next(line for line in report.splitlines() if "lease_seconds: 120" in line)
