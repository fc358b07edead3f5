"""A careful agent that adds an idempotency key to each writer call is judged correct.

Payment and mail APIs ask for an ``idempotency_key`` argument; an agent that adds one
calls the tool with more than the model asked for. That extra argument must not make
the call "different" (I7), and the ledger's key is the one the world saw (I10).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from careful_variants import EXAMPLES, write_variant

from harness.checks import check_i7, check_i10
from harness.runner import Case, CrashSpec, plan_cases, run_case
from harness.scenario import load_scenario

SCENARIO = EXAMPLES / "scenarios/openai-careful.yaml"


@pytest.mark.parametrize("crash", [
    None,
    CrashSpec("after_tool:send_mail#1", "at", "process_killed"),
    CrashSpec("state:rename#2", "after", "unsynced_lost"),
])
def test_a_careful_agent_with_idempotency_keys_passes(tmp_path: Path,
                                                        crash: CrashSpec | None) -> None:
    entry = write_variant("keyed", tmp_path)
    scenario = load_scenario(SCENARIO)
    case = Case(scenario.name, SCENARIO, scenario.seed, crash, agent=entry.spec)
    result = run_case(case, scenario, entry)

    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.trace is not None
    sent = [i.arguments for i in result.trace.invocations if i.tool == "send_mail"]
    assert sent
    assert all(a["idempotency_key"].startswith("mail-") for a in sent)


def test_a_changed_model_argument_still_fails_i7_and_an_added_one_does_not(
        tmp_path: Path) -> None:
    entry = write_variant("keyed", tmp_path)
    scenario = load_scenario(SCENARIO)
    case = next(c for c in plan_cases(scenario, SCENARIO, entry) if c.crash is None)
    trace = run_case(case, scenario, entry).trace
    assert trace is not None
    assert check_i7(trace).status != "fail"
    assert check_i10(trace).status == "pass"

    changed = [replace(inv, arguments={**inv.arguments, "body": "other"})
               if inv.tool == "send_mail" else inv for inv in trace.invocations]
    forged = replace(trace, invocations=tuple(changed))
    verdict = check_i7(forged)
    assert verdict.status == "fail", verdict
    assert any(json.dumps("other") in line for line in verdict.evidence)


@pytest.mark.system  # system tier: a sample of every crash case of the shipped scenario
def test_the_keyed_careful_agent_passes_the_careful_scenarios_crash_cases(tmp_path: Path) -> None:
    entry = write_variant("keyed", tmp_path)
    scenario = load_scenario(SCENARIO)
    sample = plan_cases(scenario, SCENARIO, entry)[::15]
    results = [run_case(case, scenario, entry) for case in sample]
    assert [(r.case.case_id, r.failed_verdicts) for r in results if r.status != "pass"] == []
