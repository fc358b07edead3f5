"""The scenario format names faults, behaviours and crash classes exactly as the fakes do.

A scenario fault becomes a fake with ``fakes.FAULT_KINDS[kind](**fields)`` and
nothing else, so the two vocabularies must never drift apart.
"""

from __future__ import annotations

from pathlib import Path

import fakes
from fakes._tools import BEHAVIOURS
from harness.scenario import (
    BEHAVIOUR_KINDS,
    CRASH_CLASSES,
    FAULT_KINDS,
    TOOL_KINDS,
    load_scenario,
)

GOOD = Path(__file__).parent / "data" / "good"


def test_fault_kinds_are_the_fakes_kinds_in_the_same_order() -> None:
    assert list(FAULT_KINDS) == list(fakes.FAULT_KINDS)


def test_behaviour_tool_and_crash_class_names_are_the_fakes_names() -> None:
    assert list(BEHAVIOUR_KINDS) == list(BEHAVIOURS)
    assert list(TOOL_KINDS) == list(fakes.TOOL_KINDS)
    assert list(CRASH_CLASSES) == list(fakes.CRASH_CLASSES)


def test_every_example_fault_translates_to_the_fake_of_its_kind() -> None:
    scenario = load_scenario(GOOD / "every-fault.yaml")
    for fault in scenario.faults:
        fake = fakes.FAULT_KINDS[fault.kind](**fault.fake_fields())
        assert fake.kind == fault.kind


def test_every_example_behaviour_translates_to_a_fake_behaviour() -> None:
    scenario = load_scenario(GOOD / "every-fault.yaml")
    for spec in scenario.tools.values():
        if spec.behaviour is not None:
            behaviour = fakes.Behaviour(spec.behaviour.kind, **spec.behaviour.fake_fields())
            assert behaviour.kind == spec.behaviour.kind
