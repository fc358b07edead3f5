"""budget:tool-calls: no tool call runs past the run's cap (seed 002 §19.2,
ToolBudget(maxCalls)), counted over every incarnation from the world's record."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._budgets import check_tool_calls
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/budgets/tool-call-cap-stops.yaml"
UNCAPPED = next(m for m in MUTANTS if m.name == "L4-tool-calls-not-capped")
PER_PROCESS = next(m for m in MUTANTS if m.name == "L4-tool-calls-counted-per-process")


@pytest.fixture(scope="module")
def capped() -> Trace:
    return reference_trace(SCENARIO, "budget:tool-calls")


def test_the_reference_agent_stops_at_its_cap(capped: Trace) -> None:
    verdict = check_tool_calls(capped)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert [i.call_id for i in capped.invocations] == ["call_t1_0", "call_t2_0", "call_t3_0"]
    assert capped.outcome is not None
    assert capped.outcome.stop_state == "budget_limited"
    assert "tool call cap of 3" in capped.outcome.reason


def test_an_agent_without_the_cap_fails() -> None:
    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:tool-calls" in failed, result.failed_verdicts
    assert "6 tool calls ran; the cap is 3" in failed["budget:tool-calls"].message
    assert "call_t4_0 ran as call 4" in failed["budget:tool-calls"].message


def test_a_restart_does_not_buy_a_fresh_cap() -> None:
    kill = PER_PROCESS.kills[0]
    assert kill.crash is not None
    result = run_kill(kill, PER_PROCESS.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "budget:tool-calls" in failed, result.failed_verdicts
    # Its stop state is right: only the count over both incarnations shows the bug.
    assert "I4" not in failed
    assert result.trace is not None
    assert {i.incarnation for i in result.trace.invocations} == {1, 2}


def test_the_per_process_count_passes_without_a_crash() -> None:
    # Why its kill needs a crash: within one process its count is right.
    result = run_kill(replace(PER_PROCESS.kills[0], crash=None), PER_PROCESS.factory)
    assert result.passed, result.failed_verdicts


def test_a_call_run_again_after_a_restart_counts_once(capped: Trace) -> None:
    again = replace(capped.invocations[-1], incarnation=2, seq=capped.invocations[-1].seq + 100)
    verdict = check_tool_calls(replace(capped, invocations=(*capped.invocations, again)))
    assert verdict is not None
    assert verdict.status == "pass", verdict


def test_unknown_when_the_model_never_asked_past_the_cap(capped: Trace) -> None:
    within = replace(capped, extra=replace(capped.extra, max_tool_calls=10))
    verdict = check_tool_calls(within)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "never more than the cap of 10" in verdict.message


def test_no_verdict_without_a_cap_and_unknown_for_a_plain_agent(capped: Trace) -> None:
    assert check_tool_calls(replace(capped, extra=replace(capped.extra,
                                                          max_tool_calls=None))) is None
    plain = check_tool_calls(replace(capped, extra=replace(capped.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"


def test_a_failure_report_points_at_the_cap_in_the_scenario() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(UNCAPPED.kills[0], UNCAPPED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    # The scenario's line that sets the cap is marked, as the line of a broken promise.
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("budget: {max_tool_calls: 3}" in line for line in marked), report
