"""budget:job-output: no background job goes on writing past the run's output budget (seed
002 §19.2, BackgroundBudget(maxOutput)), counted from the job's first line in the job runner's
record, so a restart that re-attaches and reads on grants no output anew."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._budgets import check_job_output
from harness.mutants import MUTANTS, Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import ReadRecord, SignalRecord, Trace

SCENARIO = "scenarios/jobs/job-output-budget-stops.yaml"
UNCAPPED = next(m for m in MUTANTS if m.name == "L4-job-output-not-capped")
PER_PROCESS = next(m for m in MUTANTS if m.name == "L4-job-output-counted-per-process")


@pytest.fixture(scope="module")
def stopped() -> Trace:
    return reference_trace(SCENARIO, "budget:job-output")


def test_the_reference_agent_stops_the_job_at_the_read_past_its_budget(stopped: Trace) -> None:
    verdict = check_job_output(stopped)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    [job] = stopped.jobs
    # A line every 2 s; the agent reads every 10 s: the read at 50 s shows 25 lines.
    [shown] = [r for r in job.reads if r.next_offset > 20][:1]
    assert (round(shown.at - job.started_at, 6), shown.next_offset) == (50.0, 25)
    assert [(s.signal, s.at) for s in job.signals] == [("TERM", shown.at)]
    assert job.state == "killed"
    assert job.lines == 25
    assert stopped.outcome is not None
    assert stopped.outcome.stop_state == "budget_limited"
    assert "output budget of 20 lines" in stopped.outcome.reason
    # The model is told the job was stopped for its output, not that the tests passed.
    [reply] = [m for m in stopped.outcome.transcript if m.role == "tool"]
    assert "past its output budget of 20 lines" in reply.text


def test_an_agent_that_lets_the_job_write_on_fails() -> None:
    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-output" in failed, result.failed_verdicts
    assert "wrote 60 lines, past its budget of 20, and was never signalled: it ran until " \
           "122.776s" in failed["budget:job-output"].message
    assert "I4" in failed  # it ends complete, not budget_limited


def test_a_restart_does_not_grant_the_output_budget_anew() -> None:
    kill = PER_PROCESS.kills[0]
    assert kill.crash is not None
    result = run_kill(kill, PER_PROCESS.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:job-output" in failed, result.failed_verdicts
    assert "was read past its budget at 52.7761s (line 25, by incarnation 2) yet first " \
           "signalled at 62.7761s (TERM, by incarnation 2)" in \
           failed["budget:job-output"].message
    # Its stop state is right: only the job runner's record shows the bug.
    assert "I4" not in failed


def test_the_per_process_count_passes_without_a_crash() -> None:
    # Why its kill needs a crash: within one process it counts from the job's first line.
    result = run_kill(replace(PER_PROCESS.kills[0], crash=None), PER_PROCESS.factory)
    assert result.passed, result.failed_verdicts


def test_a_restart_after_the_read_past_the_budget_stops_the_job_at_once() -> None:
    # The crash comes after the read that showed 25 lines was recorded, before the stop:
    # the restart reads before it waits, and signals at the same instant.
    result = run_kill(Kill(SCENARIO, "budget:job-output", "jobs:fsync#7:after:unsynced_lost"),
                      reference())
    assert result.passed, result.failed_verdicts
    assert result.trace is not None
    [job] = result.trace.jobs
    [shown] = [r for r in job.reads if r.next_offset > 20][:1]
    assert shown.incarnation == 1
    assert [(s.at, s.incarnation) for s in job.signals] == [(shown.at, 2)]


def test_a_stop_later_than_the_read_that_showed_it_fails(stopped: Trace) -> None:
    [job] = stopped.jobs
    late = replace(job, signals=(SignalRecord("TERM", job.started_at + 70, 1),),
                   ended_at=job.started_at + 70, lines=35)
    verdict = check_job_output(replace(stopped, jobs=(late,)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "was read past its budget at 52.7761s (line 25, by incarnation 1) yet first " \
           "signalled at 72.7761s" in verdict.message


def test_a_stop_not_followed_through_fails(stopped: Trace) -> None:
    [job] = stopped.jobs
    unkilled = replace(job, state="exited", exit_code=0, ended_at=job.started_at + 120,
                       lines=60)
    verdict = check_job_output(replace(stopped, jobs=(unkilled,)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "the stop was not followed through to KILL" in verdict.message


def test_a_job_never_read_and_never_stopped_fails(stopped: Trace) -> None:
    [job] = stopped.jobs
    # An agent that only waits for the exit reads nothing on the way: still over budget.
    unread = replace(job, reads=(ReadRecord(0, 60, False, job.started_at + 120, 1),),
                     signals=(), state="exited", exit_code=0, ended_at=job.started_at + 120,
                     lines=60)
    verdict = check_job_output(replace(stopped, jobs=(unread,)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "wrote 60 lines, past its budget of 20, and was never signalled" in verdict.message


def test_unknown_when_no_job_wrote_past_the_budget(stopped: Trace) -> None:
    within = replace(stopped, extra=replace(stopped.extra, max_job_output_lines=100))
    verdict = check_job_output(within)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "no background job wrote more than its output budget of 100 lines" in \
        verdict.message
    none = check_job_output(replace(stopped, jobs=()))
    assert none is not None
    assert none.status == "unknown"
    assert "started no background job" in none.message


def test_no_verdict_without_a_budget_and_unknown_for_a_plain_agent(stopped: Trace) -> None:
    assert check_job_output(replace(stopped, extra=replace(stopped.extra,
                                                           max_job_output_lines=None))) is None
    plain = check_job_output(replace(stopped, extra=replace(stopped.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"


def test_a_failure_report_points_at_the_budget_in_the_scenario() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("budget: {max_job_output_lines: 20}" in line for line in marked), report


def test_i4_is_unknown_for_an_agent_that_runs_no_job(stopped: Trace) -> None:
    from harness.checks._invariants import check_i4

    assert stopped.outcome is not None
    completed = replace(stopped, jobs=(),
                        outcome=replace(stopped.outcome, stop_state="failed", reason="gave up"))
    verdict = check_i4(completed)
    assert verdict.status == "unknown", verdict
    assert "started no job through the job port" in verdict.message
    ran = check_i4(replace(completed, jobs=stopped.jobs))
    assert ran.status == "fail", ran
