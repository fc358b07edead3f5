"""Unchanged openai-SDK agents with one bug each, caught by the shipped suite.

Each broken agent is the careful example with one edit (careful_variants.py). It runs
the careful example's scenario as well as the careful agent does, so before the shipped
scenarios below existed nothing failed it; each shipped scenario fails it on the check
named, while the careful agent, with and without idempotency keys, passes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from careful_variants import EXAMPLES, write_variant

from harness._report_text import render_failure
from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, plan_cases, run_case, sample_cases
from harness.scenario import Scenario, load_scenario

ROOT = EXAMPLES.parent
CAREFUL = "examples.openai_careful:main"


def run(entry: PlainEntry, path: Path) -> CaseResult:
    scenario = load_scenario(path)
    return run_case(Case(scenario.name, path, scenario.seed, None, agent=entry.spec),
                    scenario, entry)


def entry_of(name: str, root: Path) -> PlainEntry:
    """The careful example, its tools mapped as ``--target`` maps them, or a variant."""
    if name != "careful":
        return write_variant(name, root)
    return PlainEntry(CAREFUL).with_tool_map(tuple(
        (tool, f"examples.openai_agent.tools:{tool}")
        for tool in ("send_mail", "append_note", "read_outbox")))


BLIND_SPOTS = [
    # (broken agent, shipped scenario, the check that fails it)
    ("retries-400", "scenarios/dialects/client-error-400-openai.yaml", "S5:4xx"),
    ("uncapped-429", "scenarios/dialects/rate-limited-in-a-row-openai.yaml", "S5:429"),
    ("completion-order", "scenarios/tools/results-in-the-models-order.yaml", "L2:results"),
    ("thread-sleep", "scenarios/cancel/cancel-during-retry-wait-openai.yaml", "CANCEL:held"),
]


@pytest.mark.parametrize(("broken", "scenario", "check"), BLIND_SPOTS)
def test_the_broken_agent_runs_the_careful_scenario_as_well_as_the_careful_one(
        tmp_path: Path, broken: str, scenario: str, check: str) -> None:
    del scenario, check
    result = run(write_variant(broken, tmp_path), EXAMPLES / "scenarios/openai-careful.yaml")
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)


@pytest.mark.parametrize(("broken", "scenario", "check"), BLIND_SPOTS)
def test_a_shipped_scenario_fails_the_broken_agent(tmp_path: Path, broken: str, scenario: str,
                                                    check: str) -> None:
    result = run(write_variant(broken, tmp_path), ROOT / scenario)
    assert result.status == "fail"
    assert check in {v.invariant for v in result.failed_verdicts}, result.failed_verdicts


@pytest.mark.parametrize("careful", ["careful", "keyed"])
@pytest.mark.parametrize("scenario", sorted({s for _, s, _ in BLIND_SPOTS}))
def test_the_careful_agent_passes_the_new_scenarios(tmp_path: Path, careful: str,
                                                    scenario: str) -> None:
    result = run(entry_of(careful, tmp_path), ROOT / scenario)
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)


TORN = ROOT / "scenarios/crash/torn-log-then-crash-again.yaml"
# Incarnation 1 tears the log's line of the send's intent; the restarted agent appends that
# intent again after the torn text, sends, and the world crashes it right after the send.
TORN_CASE = CrashSpec("state:write#4", "after", "torn_append_garbage")


def run_crashed(entry: PlainEntry, scenario: Scenario, crash: CrashSpec) -> CaseResult:
    return run_case(Case(scenario.name, TORN, scenario.seed, crash, agent=entry.spec),
                    scenario, entry)


def test_an_agent_that_appends_after_a_torn_line_sends_again_at_the_second_restart(
        tmp_path: Path) -> None:
    scenario = load_scenario(TORN)
    result = run_crashed(write_variant("torn-log", tmp_path), scenario, TORN_CASE)
    assert result.trace is not None
    assert result.trace.crash.second == "after_tool:send_mail#1"
    assert {"I1", "side_effects"} <= {v.invariant for v in result.failed_verdicts}
    assert "then at after_tool:send_mail#1 (reached)" in render_failure(result, scenario)


def test_crashed_once_the_agent_that_keeps_a_torn_line_passes(tmp_path: Path) -> None:
    # What the suite saw before a case could crash twice: the torn line is never read.
    scenario = load_scenario(TORN)
    once = scenario.model_copy(update={"crash": scenario.crash.model_copy(
        update={"then": None})})
    result = run_crashed(write_variant("torn-log", tmp_path), once, TORN_CASE)
    assert result.passed, result.failed_verdicts


@pytest.mark.parametrize("careful", ["careful", "keyed"])
def test_the_careful_agent_survives_two_crashes(tmp_path: Path, careful: str) -> None:
    entry = entry_of(careful, tmp_path)
    scenario = load_scenario(TORN)
    cases = sample_cases(plan_cases(scenario, TORN, entry))
    assert any(c.crash is not None for c in cases)
    for planned in cases:
        result = run_case(replace(planned, agent=entry.spec), scenario, entry)
        assert result.passed, (planned.case_id, result.failed_verdicts)
