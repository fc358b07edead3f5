"""The reference agent's background jobs, row by row of seed 002 §19.4's reconciliation table.

Each test crashes a shipped scenario at one job record and reads what the world's job
runner saw and what the model was told.
"""

from __future__ import annotations

import json
from typing import Any

from harness.runner import plan_cases, run_trace
from harness.scenario import load_scenario
from harness.trace import JobRecord, Trace

BUILD = "scenarios/jobs/build-survives-a-crash.yaml"
ORPHAN = "scenarios/jobs/orphan-lossy-and-unknown.yaml"
CANCEL_CALL = "scenarios/cancel/cancel-the-build-call.yaml"
RACE = "scenarios/cancel/race-and-session-cancel.yaml"


def crashed_at(path: str, point: str) -> Trace:
    scenario = load_scenario(path)
    label = f"{point}:after:unsynced_lost" if point != "none" else "none"
    case = next(c for c in plan_cases(scenario, path)
                if (c.crash.label if c.crash else "none") == label)
    return run_trace(case, scenario)


def reply(trace: Trace, call_id: str) -> dict[str, Any]:
    assert trace.outcome is not None
    found = [m for m in trace.outcome.transcript if m.role == "tool" and m.call_id == call_id]
    assert len(found) == 1, found
    value = json.loads(found[0].text)
    assert isinstance(value, dict)
    return value


def own(trace: Trace, tool: str) -> list[JobRecord]:
    return [j for j in trace.jobs if j.tool == tool]


def test_a_start_that_never_reached_the_runner_is_scheduled_again() -> None:
    trace = crashed_at(BUILD, "jobs:fsync#1")  # 'starting' is durable, the runner saw nothing
    [job] = own(trace, "build")
    assert (job.incarnation, job.state) == (2, "exited")
    assert reply(trace, job.call_id)["exit_code"] == 0


def test_a_running_job_is_reattached_and_read_on_from_the_recorded_offset() -> None:
    trace = crashed_at(BUILD, "jobs:fsync#3")  # offset 2 is durable at 10 s
    [job] = own(trace, "build")
    assert job.incarnation == 1  # started once, by the incarnation that crashed
    assert [(r.offset, r.incarnation) for r in job.reads][:2] == [(0, 1), (2, 2)]
    told = reply(trace, job.call_id)
    assert told["output"] == [f"build: step {i}/5" for i in range(1, 6)]
    assert (told["exit_code"], job.claimed_by) == (0, 2)


def test_a_completed_job_is_replayed_never_run_again() -> None:
    trace = crashed_at(BUILD, "jobs:fsync#6")  # 'completed' is durable, the reply is not
    [job] = own(trace, "build")
    assert {r.incarnation for r in job.reads} == {1}
    assert reply(trace, job.call_id)["exit_code"] == 0


def test_a_vanished_process_is_orphaned_without_an_exit_code_and_lost_output_is_lossy() -> None:
    trace = crashed_at(ORPHAN, "jobs:fsync#2")
    [job] = own(trace, "test")
    told = reply(trace, job.call_id)
    assert (job.state, told["state"], told["exit_code"]) == ("vanished", "orphaned", None)
    assert (told["lossy"], told["lost_lines"]) == (True, 1)


def test_a_runner_that_cannot_be_asked_leaves_the_outcome_unknown() -> None:
    trace = crashed_at(ORPHAN, "jobs:fsync#6")  # deploy is 'running'; then the runner goes dark
    [job] = own(trace, "deploy")
    told = reply(trace, job.call_id)
    assert (told["status"], told["state"], told["exit_code"]) == ("unknown", "unknown", None)
    assert job.claimed_by is None  # the real completion stays a wake-up in the runner


def test_a_stopping_job_gets_term_then_kill_after_the_restart() -> None:
    trace = crashed_at(CANCEL_CALL, "jobs:fsync#5")  # 'stopping' is durable at 12 s
    [job] = own(trace, "build")
    assert [(s.signal, s.at, s.incarnation) for s in job.signals] == \
        [("TERM", 12.0, 2), ("KILL", 17.0, 2)]
    assert (job.state, reply(trace, job.call_id)["status"]) == ("killed", "cancelled")


def test_a_waiter_cancelled_as_its_job_completes_leaves_one_wakeup() -> None:
    trace = crashed_at(RACE, "none")
    [test] = own(trace, "test")
    assert trace.outcome is not None
    wakeups = [m for m in trace.outcome.transcript
               if m.role == "user" and f"JOB_COMPLETED {test.execution_id}" in m.text]
    assert (reply(trace, test.call_id)["status"], len(wakeups)) == ("cancelled", 1)
    assert (test.claimed_by, test.acknowledged_by) == (None, 1)


def test_a_late_completion_after_a_session_cancel_is_recorded_and_wakes_nothing() -> None:
    trace = crashed_at(RACE, "none")
    [build] = own(trace, "build")
    neighbour = [j for j in trace.jobs if j.owner_session == "other-session"]
    assert (build.state, build.ended_at, build.acknowledged_by) == ("exited", 24.0, 1)
    assert all(r.started_at <= 20.0 for r in trace.requests)
    assert neighbour
    assert not neighbour[0].signals
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "cancelled"


RUNTIME = "scenarios/jobs/job-runtime-budget-stops.yaml"
JOB_CAP = "scenarios/jobs/job-cap-stops.yaml"


def test_a_job_stopped_for_its_runtime_budget_is_stopped_anew_after_the_restart() -> None:
    # Seed 002 §19.2, BackgroundBudget(maxRuntime): 'stopping' is durable, the TERM was not
    # sent. The restart finishes the stop at the budget's end, from the recorded start.
    trace = crashed_at(RUNTIME, "jobs:fsync#6")
    [job] = own(trace, "build")
    assert job.incarnation == 1
    assert [(s.signal, round(s.at - job.started_at, 6), s.incarnation) for s in job.signals] \
        == [("TERM", 60.0, 2), ("KILL", 65.0, 2)]
    told = reply(trace, job.call_id)
    assert (job.state, told["status"], told["exit_code"]) == ("killed", "stopped", None)
    assert "runtime budget of 60s" in told["message"]
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "budget_limited"
    assert job.claimed_by == 2  # the reply delivered it: no wake-up repeats it


def test_a_restart_counts_the_jobs_started_before_it_against_the_cap() -> None:
    # Seed 002 §19.2, BackgroundBudget(maxJobs): the build's start is durable; after the
    # restart only one more job may start, and the third job call starts nothing.
    trace = crashed_at(JOB_CAP, "jobs:fsync#2")
    assert [(j.tool, j.incarnation) for j in trace.jobs] == [("build", 1), ("test", 2)]
    assert trace.outcome is not None
    refused = [m for m in trace.outcome.transcript if m.role == "tool" and m.call_id
               and reply(trace, m.call_id).get("status") == "not_started"]
    assert len(refused) == 1
    assert trace.outcome.stop_state == "budget_limited"


def test_a_reattached_job_keeps_the_runtime_budget_of_its_recorded_start() -> None:
    # A crash while the build runs: the restart re-attaches and stops it when the budget
    # from the job's recorded start runs out, not 60 s after the restart.
    trace = crashed_at(RUNTIME, "jobs:fsync#3")
    [job] = own(trace, "build")
    assert job.incarnation == 1
    assert {r.incarnation for r in job.reads} == {1, 2}
    assert [(s.signal, round(s.at - job.started_at, 6), s.incarnation) for s in job.signals] \
        == [("TERM", 60.0, 2), ("KILL", 65.0, 2)]


OUTPUT = "scenarios/jobs/job-output-budget-stops.yaml"


def test_a_job_stopped_for_its_output_budget_is_stopped_anew_after_the_restart() -> None:
    # Seed 002 §19.2, BackgroundBudget(maxOutput): the read that showed 25 lines and the
    # budget it passed are durable, the TERM was not sent. The restart finishes the stop at
    # once (no poll first), and tells the model why.
    trace = crashed_at(OUTPUT, "jobs:fsync#8")
    [job] = own(trace, "test")
    [shown] = [r for r in job.reads if r.next_offset > 20][:1]
    assert (shown.incarnation, shown.next_offset) == (1, 25)
    assert [(s.signal, s.at, s.incarnation) for s in job.signals] == [("TERM", shown.at, 2)]
    told = reply(trace, job.call_id)
    assert (job.state, told["status"], told["exit_code"]) == ("killed", "stopped", None)
    assert "past its output budget of 20 lines" in told["message"]
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "budget_limited"
    assert job.claimed_by == 2


def test_a_reattached_job_keeps_the_output_counted_from_its_first_line() -> None:
    # A crash while the tests run: the restart reads on from the recorded offset and stops
    # the job at the first read past 20 lines of the job's whole output, not 20 more.
    trace = crashed_at(OUTPUT, "jobs:fsync#3")
    [job] = own(trace, "test")
    assert {r.incarnation for r in job.reads} == {1, 2}
    assert [(round(s.at - job.started_at, 6), s.incarnation) for s in job.signals] \
        == [(50.0, 2)]
    assert job.lines == 25
