"""Unchanged openai-SDK agents with one bug each, caught by the shipped suite.

Each broken agent is the careful example with one edit (careful_variants.py). It runs
the careful example's scenario as well as the careful agent does, so before the shipped
scenarios below existed nothing failed it; each shipped scenario fails it on the check
named, while the careful agent, with and without idempotency keys, passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from careful_variants import EXAMPLES, write_variant

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, run_case
from harness.scenario import load_scenario

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
