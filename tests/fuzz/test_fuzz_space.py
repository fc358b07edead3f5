"""The schedule space: every declared fault kind drawn valid, and what a schedule changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import find, given, settings
from hypothesis.errors import NoSuchExample

from harness.fuzz import Schedule, schedule_space, scheduled_scenario, violations
from harness.fuzz._space import FuzzBounds, fault_strategy
from harness.runner import Case, run_case
from harness.scenario import FAULT_KINDS, Scenario


@pytest.mark.parametrize("kind", list(FAULT_KINDS))
def test_every_declared_fault_kind_is_drawn_valid(kind: str, base: Scenario) -> None:
    valid: list[Scenario] = []

    @settings(max_examples=15, database=None, derandomize=True)
    @given(fault_strategy([kind], base.last_turn, FuzzBounds()))
    def draw(fault: dict[str, object]) -> None:
        scenario = scheduled_scenario(base, Schedule(faults=(fault,)))
        if scenario is not None:
            valid.append(scenario)

    draw()

    assert valid, f"no valid {kind} fault in 15 draws"
    assert all(s.faults[0].kind == kind for s in valid)


def test_a_stop_state_the_schedule_changes_is_no_violation(base: Scenario) -> None:
    unauthorized = {"kind": "http_error", "at": {"turn": 1}, "status": 401}
    scenario = scheduled_scenario(base, Schedule(faults=(unauthorized,)))
    assert scenario is not None

    result = run_case(Case(base.name, Path("mail-once.yaml"), base.seed), scenario)

    assert result.stop_state == "blocked"
    assert "I4" not in scenario.expect.invariants
    assert violations(result) == ()


def test_a_schedule_replaces_a_tools_behaviour_and_keeps_its_kind(base: Scenario) -> None:
    slow = {"behaviour": {"kind": "slow", "seconds": 5.0}, "timeout_seconds": 9.0}

    scenario = scheduled_scenario(base, Schedule(tools=(("mail", slow),)))

    assert scenario is not None
    assert scenario.tools["mail"].kind == "send"
    assert scenario.tools["mail"].timeout_seconds == 9.0


REPEATS_A_FAILING_CALL = """\
name: repeats
dialect: openai
tools:
  deploy: {kind: send, behaviour: {kind: failing}}
model:
  - {turn: 1, calls: [{tool: deploy, args: {to: prod}}]}
  - {turn: 2, calls: [{tool: deploy, args: {to: prod}}]}
  - {turn: 3, text: Giving up.}
expect: {stop_state: failed}
"""


def test_a_declared_behaviour_is_the_scenarios_world_and_stays(tmp_path) -> None:
    # Made to succeed, the failing tool this script keeps calling would send twice by
    # design; a search that changed it would blame the agent for the script.
    from harness.fuzz import fuzz_scenario
    from harness.scenario import parse_scenario

    scenario = parse_scenario(REPEATS_A_FAILING_CALL.encode(), "repeats.yaml")

    outcome = fuzz_scenario(scenario, "repeats.yaml", budget=30, seed=0, out=None)

    assert outcome.found is None


@pytest.mark.system  # system tier: a whole search
def test_a_scenario_that_never_crashes_is_fuzzed_without_crashes(base: Scenario) -> None:
    # Its script is written for a run without restarts: a model that repeats a call
    # whatever it is told would repeat one of unknown outcome too, and I3 would blame
    # the agent for it (scenarios/tools/repeated-error-stops.yaml did).
    never = base.model_copy(update={"crash": base.crash.model_copy(update={"points": "none"})})

    with pytest.raises(NoSuchExample):
        find(schedule_space(never), lambda s: s.crash is not None,
             settings=settings(database=None, max_examples=50))
    assert find(schedule_space(base), lambda s: s.crash is not None,
                settings=settings(database=None, max_examples=50)).crash is not None
