"""budget:job-runtime: no background job runs past the run's runtime budget (seed 002 §19.2,
BackgroundBudget(maxRuntime)), counted from the process's start the job runner recorded,
so a restart that re-attaches grants no time anew."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._budgets import check_job_runtime
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import SignalRecord, Trace

SCENARIO = "scenarios/jobs/job-runtime-budget-stops.yaml"
UNCAPPED = next(m for m in MUTANTS if m.name == "L4-job-runtime-not-capped")
FROM_RESTART = next(m for m in MUTANTS if m.name == "L4-job-runtime-counted-per-process")


@pytest.fixture(scope="module")
def stopped() -> Trace:
    return reference_trace(SCENARIO, "budget:job-runtime")


def test_the_reference_agent_stops_the_job_at_its_budget(stopped: Trace) -> None:
    verdict = check_job_runtime(stopped)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    [job] = stopped.jobs
    assert [(s.signal, s.at - job.started_at) for s in job.signals] == [("TERM", 60.0),
                                                                        ("KILL", 65.0)]
    assert job.state == "killed"
    assert stopped.outcome is not None
    assert stopped.outcome.stop_state == "budget_limited"
    assert "runtime budget of 60s" in stopped.outcome.reason


def test_an_agent_that_waits_the_job_out_fails() -> None:
    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-runtime" in failed, result.failed_verdicts
    # Only the agent's own wait timeout for one tool call (120 s) stopped the build.
    assert "was first signalled at 122.725s (TERM) and ran until 127.725s, past its " \
           "budget's end at 62.7246s" in failed["budget:job-runtime"].message
    assert "I4" in failed  # it does not end budget_limited


def test_a_restart_does_not_grant_the_budget_anew() -> None:
    kill = FROM_RESTART.kills[0]
    assert kill.crash is not None
    result = run_kill(kill, FROM_RESTART.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-runtime" in failed, result.failed_verdicts
    # The crash came at 32.7 s; the restart re-attached and gave the build 60 s more.
    assert "was first signalled at 92.7246s (TERM) and ran until 97.7246s, past its " \
           "budget's end at 62.7246s" in failed["budget:job-runtime"].message
    # Its stop state is right: only the job's recorded start shows the bug.
    assert "I4" not in failed
    assert result.trace is not None
    [job] = result.trace.jobs
    assert job.incarnation == 1
    assert {s.incarnation for s in job.signals} == {2}


def test_the_budget_timed_from_the_restart_passes_without_a_crash() -> None:
    # Why its kill needs a crash: within one process it times the job from its start.
    result = run_kill(replace(FROM_RESTART.kills[0], crash=None), FROM_RESTART.factory)
    assert result.passed, result.failed_verdicts


def test_a_stop_not_followed_through_fails(stopped: Trace) -> None:
    [job] = stopped.jobs
    term = job.signals[0]
    unkilled = replace(job, signals=(term,), state="exited", exit_code=0,
                       ended_at=job.started_at + 300)
    verdict = check_job_runtime(replace(stopped, jobs=(unkilled,)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "the stop was not followed through to KILL" in verdict.message


def test_a_signal_before_the_budget_ran_out_counts(stopped: Trace) -> None:
    [job] = stopped.jobs
    # An agent that stops early and gives a longer grace before KILL is within the rule.
    early = replace(job, signals=(SignalRecord("TERM", job.started_at + 50, 1),
                                  SignalRecord("KILL", job.started_at + 75, 1)),
                    ended_at=job.started_at + 75)
    verdict = check_job_runtime(replace(stopped, jobs=(early,)))
    assert verdict is not None
    assert verdict.status == "pass", verdict


def test_unknown_when_no_job_outran_the_budget(stopped: Trace) -> None:
    within = replace(stopped, extra=replace(stopped.extra, max_job_seconds=600))
    verdict = check_job_runtime(within)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "no background job ran longer than its runtime budget of 600s" in verdict.message
    none = check_job_runtime(replace(stopped, jobs=()))
    assert none is not None
    assert none.status == "unknown"
    assert "started no background job" in none.message


def test_no_verdict_without_a_budget_and_unknown_for_a_plain_agent(stopped: Trace) -> None:
    assert check_job_runtime(replace(stopped, extra=replace(stopped.extra,
                                                            max_job_seconds=None))) is None
    plain = check_job_runtime(replace(stopped, extra=replace(stopped.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"


def test_a_failure_report_points_at_the_budget_in_the_scenario() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("budget: {max_job_seconds: 60}" in line for line in marked), report


def test_i4_is_unknown_for_an_agent_that_runs_no_job(stopped: Trace) -> None:
    # An agent without a job port never ran the build: the budget's stop was never tested.
    from harness.checks._invariants import check_i4

    assert stopped.outcome is not None
    completed = replace(stopped, jobs=(),
                        outcome=replace(stopped.outcome, stop_state="failed", reason="gave up"))
    verdict = check_i4(completed)
    assert verdict.status == "unknown", verdict
    assert "started no job through the job port" in verdict.message
    ran = check_i4(replace(completed, jobs=stopped.jobs))
    assert ran.status == "fail", ran
