"""The compaction, breaker and budget checks pass on the reference agent, with evidence,
and say ``unknown`` (never ``pass``) where an agent lacks the capability."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agent import CompactionConfig, ReferenceAgent
from harness.runner import run_case
from harness.runner._results import Case, CaseResult
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def _run(path: str, **settings: object) -> CaseResult:
    scenario = load_scenario(SCENARIOS / path)
    factory = (lambda ports: ReferenceAgent(ports, **settings)) if settings else None  # type: ignore[arg-type]
    return run_case(Case(scenario.name, SCENARIOS / path, scenario.seed), scenario, factory)


def _verdict(result: CaseResult, check: str) -> tuple[str, str]:
    found = [v for v in result.verdicts if v.invariant == check]
    assert len(found) == 1, [v.invariant for v in result.verdicts]
    return found[0].status, found[0].message


@pytest.mark.parametrize(("path", "check", "message"), [
    ("compaction/overflow-compacts-and-retries.yaml", "compaction:overflow",
     "1 overflow(s), each followed by one smaller request (721→541 prompt tokens)"),
    ("compaction/overflow-compacts-and-retries.yaml", "compaction",
     "3 tool result(s) each reached the model whole before any compaction replaced them"),
    ("compaction/appended-during-compaction-kept.yaml", "compaction",
     "3 tool result(s) each reached the model whole before any compaction replaced them"),
    ("budgets/long-outage-breaker.yaml", "breaker",
     "the breaker opened 1 time(s); every request after 3 failures came 60s or more after "
     "the last one, alone"),
    ("budgets/token-budget-stops.yaml", "budget:spend",
     "no request started after the budget of 250 tokens was spent (288 tokens, $0.0000 billed)"),
    ("budgets/tool-timeout-within-deadline.yaml", "budget:tools",
     "1 tool call(s) running at the 60s deadline were stopped by it"),
    ("budgets/tool-call-cap-stops.yaml", "budget:tool-calls",
     "3 of the 4 tool calls the model asked for ran, within the cap of 3"),
])
def test_the_reference_agent_passes_each_new_check(path: str, check: str, message: str) -> None:
    result = _run(path)
    assert result.passed
    assert _verdict(result, check) == ("pass", message)


def test_an_agent_without_compaction_is_unknown_on_the_overflow_check_not_failed() -> None:
    result = _run("compaction/overflow-compacts-and-retries.yaml",
                  compaction=CompactionConfig(enabled=False))
    assert _verdict(result, "compaction:overflow")[0] == "unknown"
    assert _verdict(result, "I4")[0] == "fail"  # the stop state is where it fails


def test_without_a_context_window_the_compaction_checks_stay_silent() -> None:
    names = {v.invariant for v in _run("budgets/long-outage-breaker.yaml").verdicts}
    assert not names & {"compaction", "compaction:overflow"}


def test_the_breaker_is_judged_only_where_the_scenario_expects_one() -> None:
    names = {v.invariant for v in _run("budgets/token-budget-stops.yaml").verdicts}
    assert "breaker" not in names


def test_a_plain_agent_is_not_failed_on_a_budget_it_was_never_told() -> None:
    from dataclasses import replace

    from harness.agent import BudgetPolicy
    from harness.checks._budgets import check_spend
    from harness.runner import run_trace

    path = SCENARIOS / "budgets/token-budget-stops.yaml"
    scenario = load_scenario(path)
    policy = BudgetPolicy(cap_tokens=False)
    trace = run_trace(Case(scenario.name, path, scenario.seed), scenario,
                      lambda ports: ReferenceAgent(ports, budget_policy=policy))
    assert check_spend(trace).status == "fail"  # type: ignore[union-attr]
    plain = check_spend(replace(trace, extra=replace(trace.extra, agent="plain")))
    assert plain is not None
    assert (plain.status, plain.message) == (
        "unknown", "a plain main(prompt) agent is not told the run's budget or deadline")


@pytest.mark.parametrize("crash_class", ["unsynced_lost", "process_killed"])
def test_an_open_breaker_survives_a_restart(crash_class: str) -> None:
    from harness.runner._results import CrashSpec

    path = SCENARIOS / "budgets/long-outage-breaker.yaml"
    scenario = load_scenario(path)
    # session:fsync#13 makes the breaker's "open" record durable; the crash follows it.
    crash = CrashSpec("session:fsync#13", "after", crash_class)
    result = run_case(Case(scenario.name, path, scenario.seed, crash), scenario)
    assert result.crash_reached
    assert result.passed
    assert _verdict(result, "breaker")[0] == "pass"
