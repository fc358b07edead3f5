"""The timing checks on a served clock: a real process's jitter is allowed, in scenario seconds.

A served trace says its time scale (``Trace.extra.time_scale``); an in-process one
does not, and is judged to the microsecond as before (harness.checks._tolerance).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.checks import Trace, Verdict, check_i9, late_tolerance
from harness.checks._timing import check_idle_watchdog, check_retry_after
from harness.mutants import MUTANTS
from harness.runner import Case, run_case
from harness.scenario import load_scenario

STALL = Path("scenarios/streaming/stall-then-429.yaml")
BY_NAME = {m.name: m for m in MUTANTS}


def trace_of(mutant: str | None = None) -> Trace:
    scenario = load_scenario(STALL)
    factory = BY_NAME[mutant].factory if mutant else None
    result = run_case(Case(scenario.name, STALL, scenario.seed), scenario, factory)
    assert result.trace is not None
    return result.trace


def served(trace: Trace, scale: float) -> Trace:
    return replace(trace, extra=replace(trace.extra, time_scale=scale))


def silent_for(trace: Trace, seconds: float) -> Trace:
    """The trace with its stalled stream waited on for ``seconds`` of silence."""
    stalled = next(r for r in trace.requests if "stall" in r.faults)
    requests = tuple(replace(r, longest_silence=seconds) if r is stalled else r
                     for r in trace.requests)
    return replace(trace, requests=requests)


def status(verdict: Verdict | None) -> str:
    assert verdict is not None
    return verdict.status


def test_a_served_idle_watchdog_late_by_jitter_passes_s1_and_in_process_it_fails() -> None:
    # "silent for 30.0317s" against a 30 s bound: a real process at scale 1.
    jittered = silent_for(trace_of(), 30.0317)
    assert status(check_idle_watchdog(jittered)) == "fail"
    assert status(check_idle_watchdog(served(jittered, 1.0))) == "pass"
    # 0.1 real s is 10 scenario s at 0.01: a watchdog at 45 s is still late there.
    late = check_idle_watchdog(served(silent_for(trace_of(), 45.0), 0.01))
    assert status(late) == "fail"
    assert late.message.endswith("after 30s (allowing 10s for a real process)")


def test_s1_is_unknown_when_the_served_clock_cannot_time_its_bound() -> None:
    verdict = check_idle_watchdog(served(silent_for(trace_of(), 200.0), 0.001))
    assert late_tolerance(served(trace_of(), 0.001)) == 100.0
    assert (status(verdict), verdict.message) == (
        "unknown", "the served clock is exact to 100s at this time scale, not below the 30s "
        "idle bound: run at a larger --time-scale to judge it")


def test_s5_keeps_failing_an_early_retry_on_a_served_clock() -> None:
    early = trace_of("S5-ignores-retry-after")
    assert status(check_retry_after(early)) == "fail"
    # 0.005 real s at 0.001 is 5 scenario s: a retry that ignored a 60 s wait is still early.
    assert status(check_retry_after(served(early, 0.001))) == "fail"
    assert status(check_retry_after(served(trace_of(), 0.001))) == "pass"


def test_s5_judges_no_wait_shorter_than_the_served_clocks_margin() -> None:
    verdict = check_retry_after(served(trace_of("S5-ignores-retry-after"), 0.00004))
    assert (status(verdict), verdict.message) == (
        "unknown", "no answer asked for a wait of at most 60s, longer than 125s (the served "
        "clock's margin)")


def test_i9_allows_a_served_request_late_by_jitter() -> None:
    trace = trace_of()
    deadline = trace.expect.deadline_seconds
    last = trace.requests[-1]
    late = replace(trace, requests=(*trace.requests[:-1],
                                    replace(last, started_at=deadline + 0.05)))
    assert status(check_i9(late)) == "fail"
    assert status(check_i9(served(late, 1.0))) == "pass"
    assert status(check_i9(served(late, 1000.0))) == "fail"  # 0.1 ms: still late
