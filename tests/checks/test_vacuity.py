"""No vacuous pass: agents that prove nothing pass no shipped scenario (DESIGN §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks import Trace
from harness.checks._vacuity import check_faults_reached
from harness.mutants import MUTANTS
from harness.runner import Case, run_case, run_trace
from harness.scenario import load_scenario

SHIPPED = sorted(Path("scenarios").rglob("*.yaml"))
LAZY = {m.name: m for m in MUTANTS if m.name in (
    "I4-claims-success-doing-nothing", "L5-no-outcome")}


@pytest.mark.system  # system tier: the whole shipped suite per agent
@pytest.mark.parametrize("name", sorted(LAZY))
def test_an_agent_that_proves_nothing_passes_no_shipped_scenario(name: str) -> None:
    passed = []
    for source in SHIPPED:
        scenario = load_scenario(source)
        result = run_case(Case(scenario.name, source, scenario.seed), scenario,
                          LAZY[name].factory)
        if result.passed:
            passed.append(scenario.name)
    assert passed == []


def test_an_outcome_of_none_fails_with_what_was_expected() -> None:
    source = Path("scenarios/streaming/stall-then-429.yaml")
    scenario = load_scenario(source)
    result = run_case(Case(scenario.name, source, scenario.seed), scenario,
                      LAZY["L5-no-outcome"].factory)
    verdict = next(v for v in result.verdicts if v.invariant == "outcome")
    assert verdict.status == "fail"
    assert verdict.message == (
        "the run gave no stop state to judge: MalformedOutcome: run() returned NoneType None; "
        "expected an AgentOutcome (harness.ports.AgentOutcome) with the run's stop state")


def _trace_with_faults(faults: tuple[tuple[int, int, str], ...]) -> Trace:
    from dataclasses import replace

    source = Path("scenarios/streaming/stall-then-429.yaml")
    scenario = load_scenario(source)
    trace = run_trace(Case(scenario.name, source, scenario.seed), scenario)
    return replace(trace, expect=replace(trace.expect, faults=faults))


def test_a_fault_no_request_met_makes_the_case_unknown_and_names_it() -> None:
    verdict = check_faults_reached(_trace_with_faults(((1, 1, "stall"), (3, 1, "http_error"))))
    assert verdict is not None
    assert verdict.status == "unknown"
    assert verdict.message == ("turn 3 attempt 1 http_error was never reached, so the case "
                               "proves nothing about it")


def test_every_reached_fault_passes() -> None:
    verdict = check_faults_reached(_trace_with_faults(((1, 1, "stall"), (1, 2, "http_error"))))
    assert verdict is not None
    assert verdict.status == "pass"


def test_a_case_with_an_unreached_fault_does_not_pass() -> None:
    from harness.runner import case_result

    trace = _trace_with_faults(((1, 1, "stall"), (3, 1, "http_error")))
    result = case_result(Case(trace.scenario, Path("x.yaml"), trace.seed), trace)
    assert not result.passed
    assert result.unreached_faults == ("turn 3 attempt 1 http_error",)
    # What the run's UNKNOWN line, pytest's skip and the failure text all say.
    assert result.unknown_reason == "the fault turn 3 attempt 1 http_error was never reached"
