"""A case's result is the one it has alone, whatever its worker process ran before it.

The runner keeps recordings per process (:mod:`harness.runner._explore`); how a case
ran (``exploration``), its trace and its verdicts must not depend on which other cases,
of which agents, came first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from long_scenarios import appends
from minimal_agent import minimal_factory

from harness.ports import Agent, AgentFactory, AgentPorts
from harness.runner import Case, CaseResult, plan_cases, run_case
from harness.runner import _explore as explore
from harness.scenario import Scenario

SOURCE = Path("appends.yaml")


def _forget() -> None:
    explore._RECORDINGS.clear()
    explore._MADE.clear()


@pytest.fixture(autouse=True)
def _fresh_process() -> Iterator[None]:
    _forget()
    yield
    _forget()


def _crash_case(scenario: Scenario) -> Case:
    return [c for c in plan_cases(scenario, SOURCE) if c.crash][3]


def _seen(result: CaseResult) -> tuple[object, ...]:
    assert result.trace is not None
    return result.exploration, result.digest, result.verdicts, result.trace.extra


def test_a_case_after_other_agents_ran_its_scenario_is_the_case_alone() -> None:
    scenario = appends(2)
    case = _crash_case(scenario)
    alone = run_case(case, scenario)
    assert alone.exploration == "recorded"
    _forget()

    # Three other agents ran the same scenario in this worker first (mutants, say).
    for flaw in ("rerun_unknown", "double_usage", "drop_reply"):
        run_case(Case(scenario.name, SOURCE, scenario.seed), scenario, minimal_factory(flaw))
    after = run_case(case, scenario)

    assert _seen(after) == _seen(alone)


def test_a_factory_built_anew_for_each_case_is_still_recorded_at_most_a_few_times() -> None:
    # The bound the per-process store keeps: such a factory is one agent, built again.
    scenario = appends(2)
    for case in [c for c in plan_cases(scenario, SOURCE) if c.crash][:6]:
        run_case(case, scenario, _unhashable_factory())

    assert sum(explore._MADE.values()) == explore._REMADE_AT_MOST


def _unhashable_factory() -> AgentFactory:
    flaws: list[str] = []  # a list in its closure: the factory cannot be keyed by value
    build = minimal_factory()

    def factory(ports: AgentPorts) -> Agent:
        assert not flaws
        return build(ports)

    factory.dialects = ("openai",)  # type: ignore[attr-defined]
    return factory
