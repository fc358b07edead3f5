"""The reference agent spends exactly its attempt budget whatever crash comes (S8, I9)."""

from __future__ import annotations

from pathlib import Path

from harness.mutants._run import crash_spec
from harness.runner import Case, run_case
from harness.scenario import load_scenario

SOURCE = Path("scenarios/crash/budget-spent-at-a-crash.yaml")


def test_a_crash_right_after_a_turns_first_request_buys_no_attempt_back() -> None:
    # session:write#4 is the retry line written after the first 503: crashing
    # before it leaves only turn_start to say that request went out.
    scenario = load_scenario(SOURCE)
    crash = crash_spec("session:write#4:before:unsynced_lost")
    result = run_case(Case(scenario.name, SOURCE, scenario.seed, crash), scenario)
    assert result.trace is not None
    live = [r for r in result.trace.requests if r.delivery != "refused"]
    assert [(r.incarnation, r.attempt) for r in live] == [(1, 1), (2, 2), (2, 3), (2, 4)]
    assert result.stop_state == "budget_limited"
    assert next(v for v in result.verdicts if v.invariant == "I9").status == "pass"
