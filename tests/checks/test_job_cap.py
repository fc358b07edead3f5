"""budget:job-starts: no background job starts past the run's cap (seed 002 §19.2,
BackgroundBudget(maxJobs)), counted from the job runner's record over every incarnation."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._budgets import check_job_starts
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/jobs/job-cap-stops.yaml"
UNCAPPED = next(m for m in MUTANTS if m.name == "L4-jobs-not-capped")
PER_PROCESS = next(m for m in MUTANTS if m.name == "L4-jobs-counted-per-process")


@pytest.fixture(scope="module")
def capped() -> Trace:
    return reference_trace(SCENARIO, "budget:job-starts")


def test_the_reference_agent_starts_no_job_past_its_cap(capped: Trace) -> None:
    verdict = check_job_starts(capped)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert [j.tool for j in capped.jobs] == ["build", "test"]
    assert capped.outcome is not None
    assert capped.outcome.stop_state == "budget_limited"
    assert "cap of 2 background jobs" in capped.outcome.reason
    # The model is told the third job never started.
    [refused] = [m for m in capped.outcome.transcript
                 if m.role == "tool" and "not_started" in m.text]
    assert "BUDGET_EXHAUSTED" in refused.text
    assert "cap of 2 background jobs is used up" in refused.text


def test_an_agent_without_the_cap_fails() -> None:
    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-starts" in failed, result.failed_verdicts
    message = failed["budget:job-starts"].message
    assert message.startswith("4 background jobs started; the cap is 2: lint job ")
    assert "as job 3 of at most 2" in message


def test_a_restart_does_not_buy_a_fresh_cap() -> None:
    kill = PER_PROCESS.kills[0]
    assert kill.crash is not None
    result = run_kill(kill, PER_PROCESS.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-starts" in failed, result.failed_verdicts
    assert result.trace is not None
    # The jobs past the cap were started by the restarted incarnation.
    assert [j.incarnation for j in result.trace.jobs][:1] == [1]
    assert {j.incarnation for j in result.trace.jobs[2:]} == {2}


def test_the_per_process_count_passes_without_a_crash() -> None:
    # Why its kill needs a crash: within one process its count is right.
    result = run_kill(replace(PER_PROCESS.kills[0], crash=None), PER_PROCESS.factory)
    assert result.passed, result.failed_verdicts


def test_unknown_when_the_model_never_asked_past_the_cap(capped: Trace) -> None:
    within = replace(capped, extra=replace(capped.extra, max_jobs=5))
    verdict = check_job_starts(within)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "never more than the cap of 5" in verdict.message


def test_unknown_without_a_job_and_for_a_plain_agent(capped: Trace) -> None:
    none = check_job_starts(replace(capped, jobs=()))
    assert none is not None
    assert none.status == "unknown"
    assert "started no background job" in none.message
    plain = check_job_starts(replace(capped, extra=replace(capped.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"
    assert check_job_starts(replace(capped, extra=replace(capped.extra, max_jobs=None))) is None


def test_a_failure_report_points_at_the_cap_in_the_scenario() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("budget: {max_jobs: 2}" in line for line in marked), report
