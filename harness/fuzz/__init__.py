"""Fuzzed fault schedules, shrunk to a scenario file that reproduces the failure.

Hand-written scenarios find the faults someone thought of. The fuzzer searches the
rest: Hypothesis draws fault schedules over a scenario's world (fault kinds and fields
x turn x attempt, one crash point x class, tool behaviours) within
:class:`FuzzBounds`, the runner runs each, and the first schedule that violates an
invariant is shrunk to a minimal one and written as a commented scenario file that
``harness run`` fails on::

    from harness.fuzz import fuzz_scenario, write_repro
    from harness.scenario import load_scenario

    scenario = load_scenario("scenarios/crash/unknown-send-is-inspected.yaml")
    outcome = fuzz_scenario(scenario, "…/unknown-send-is-inspected.yaml", budget=200,
                            seed=0, out=Path("fuzz"))
    if outcome.found:
        path, replay = write_repro(outcome.found, Path("fuzz"), found_by="…", agent_spec=None)
"""

from harness.fuzz._bounds import FuzzBounds
from harness.fuzz._handback import HandedBackDatabase, apply_changes, write_handed_back
from harness.fuzz._judge import SCHEDULE_DEPENDENT, scheduled_scenario, violations
from harness.fuzz._repro import Repro, flow, made_repro, repro_command, repro_text, write_repro
from harness.fuzz._search import (
    DATABASE_DIR,
    Finding,
    FuzzOutcome,
    fuzz_scenario,
    plain_tools,
    schedule_space,
)
from harness.fuzz._space import Schedule, crash_candidates, schedule_strategy

__all__ = [
    "DATABASE_DIR",
    "SCHEDULE_DEPENDENT",
    "Finding",
    "FuzzBounds",
    "FuzzOutcome",
    "HandedBackDatabase",
    "Repro",
    "Schedule",
    "apply_changes",
    "crash_candidates",
    "flow",
    "fuzz_scenario",
    "made_repro",
    "plain_tools",
    "repro_command",
    "repro_text",
    "schedule_space",
    "schedule_strategy",
    "scheduled_scenario",
    "violations",
    "write_handed_back",
    "write_repro",
]
