"""L6: the context size an agent reports is the last request's input, not the bill."""

from __future__ import annotations

from pathlib import Path

from harness.mutants import MUTANTS
from harness.runner import Case, CaseResult, run_case
from harness.scenario import load_scenario

SOURCE = Path("scenarios/tools/writers-take-turns.yaml")


def run(mutant: str | None = None) -> CaseResult:
    scenario = load_scenario(SOURCE)
    factory = next(m.factory for m in MUTANTS if m.name == mutant) if mutant else None
    return run_case(Case(scenario.name, SOURCE, scenario.seed), scenario, factory)


def test_l6_passes_the_last_requests_input_and_fails_the_billed_total() -> None:
    good = next(v for v in run().verdicts if v.invariant == "L6")
    assert good.status == "pass"
    bad_result = run("L6-context-is-billed-total")
    bad = next(v for v in bad_result.verdicts if v.invariant == "L6")
    assert bad.status == "fail"
    assert bad_result.trace is not None
    last = [r for r in bad_result.trace.requests if r.usage_reported][-1]
    assert last.usage is not None
    assert bad.message.endswith(f"is not the last request's input ({last.usage.input_tokens})")


def test_i6_counts_a_broken_attempts_usage_that_reached_the_client() -> None:
    source = Path("scenarios/streaming/cut-streams.yaml")
    scenario = load_scenario(source)
    case = Case(scenario.name, source, scenario.seed)
    good = next(v for v in run_case(case, scenario).verdicts if v.invariant == "I6")
    # No crash: the bill must equal the usage that reached the client, a broken
    # stream's (no [DONE], usage chunk delivered) included.
    assert good.status == "pass"
    assert good.evidence[1:] == ("usage that reached the final incarnation: input=50 output=42",
                                 "usage that reached any incarnation: input=50 output=42")
    factory = next(m.factory for m in MUTANTS if m.name == "L6-bills-only-finished-streams")
    bad = next(v for v in run_case(case, scenario, factory).verdicts if v.invariant == "I6")
    assert bad.status == "fail"
    assert bad.message == ("input tokens billed 25 are below the 50 that reached the client: "
                           "an attempt's usage was dropped")
