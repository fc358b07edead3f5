"""A budget the agent was never told is not judged: a plain ``main(prompt)`` is handed a
prompt only, so I4's ``budget_limited`` stop and I9's attempts and deadline are ``unknown``
for it, saying why, as I6 and I11 are; an agent on the ports is told them and judged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.checks import check_i4, check_i9
from harness.ports import StopState
from harness.runner import Case, run_case
from harness.scenario import load_scenario
from harness.trace import Trace

SOURCE = Path("scenarios/crash/budget-spent-at-a-crash.yaml")


@pytest.fixture(scope="module")
def spent() -> Trace:
    """The reference agent's uncrashed run: four 503s, then it stops budget_limited."""
    scenario = load_scenario(SOURCE)
    result = run_case(Case(scenario.name, SOURCE, scenario.seed), scenario)
    assert result.passed, result.failed_verdicts
    assert result.trace is not None
    return result.trace


def plain(trace: Trace) -> Trace:
    return replace(trace, extra=replace(trace.extra, agent="plain"))


def stopped(trace: Trace, stop: StopState) -> Trace:
    assert trace.outcome is not None
    return replace(trace, outcome=replace(trace.outcome, stop_state=stop))


def test_i4_judges_the_budget_stop_of_an_agent_told_the_budget(spent: Trace) -> None:
    verdict = check_i4(stopped(spent, "infra_paused"))
    assert (verdict.status, verdict.message) == (
        "fail", "stopped 'infra_paused', expected 'budget_limited'")


def test_i4_is_unknown_on_a_budget_stop_a_plain_agent_was_never_told(spent: Trace) -> None:
    # The plain agent gave up after its own SDK's retries: it raised, infra_paused.
    verdict = check_i4(plain(stopped(spent, "infra_paused")))
    assert (verdict.status, verdict.message) == (
        "unknown", "stopped 'infra_paused'; 'budget_limited' is the stop at the run's budget, "
        "and a plain main(prompt) agent is not told the run's budget or deadline")
    # One that does stop so still passes, and a stop no budget decides is still judged.
    assert check_i4(plain(spent)).status == "pass"
    expects_complete = replace(spent, expect=replace(spent.expect, stop_state="complete"))
    assert check_i4(plain(stopped(expects_complete, "failed"))).status == "fail"


def test_i9_judges_the_attempts_of_an_agent_told_the_budget(spent: Trace) -> None:
    tighter = replace(spent, expect=replace(spent.expect, max_attempts=2))
    verdict = check_i9(tighter)
    assert (verdict.status, verdict.message) == ("fail", "4 requests exceed the budget of 2 "
                                                 "attempts")


def test_i9_is_unknown_for_a_plain_agent_never_told_the_budget(spent: Trace) -> None:
    tighter = replace(spent, expect=replace(spent.expect, max_attempts=2))
    verdict = check_i9(plain(tighter))
    assert (verdict.status, verdict.message) == (
        "unknown", "a plain main(prompt) agent is not told the run's budget or deadline "
        "(max_attempts 2, deadline 1800s): its 4 request(s) are not judged against it")
