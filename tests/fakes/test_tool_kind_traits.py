"""One description of each tool kind, read by the fakes, the scenario, the runner, the checks."""

from __future__ import annotations

import pytest

import harness.scenario
from fakes import (
    PURE_TOOL_KINDS,
    TOOL_KIND_TRAITS,
    TOOL_KINDS,
    ToolLedger,
    VirtualClock,
    WorldTool,
)
from harness.runner._world import PURE_KINDS


@pytest.mark.parametrize("kind", TOOL_KINDS)
def test_a_world_tool_has_the_traits_of_its_kind(kind: str) -> None:
    tool = WorldTool(kind, ToolLedger(VirtualClock()))  # type: ignore[arg-type]
    traits = TOOL_KIND_TRAITS[kind]  # type: ignore[index]
    assert (tool.idempotent, tool.concurrency_safe) == (traits.idempotent,
                                                        traits.concurrency_safe)


def test_a_pure_kind_is_idempotent_and_every_reader_sees_the_same_sets() -> None:
    assert all(TOOL_KIND_TRAITS[kind].idempotent for kind in PURE_TOOL_KINDS)
    assert PURE_KINDS is PURE_TOOL_KINDS
    assert harness.scenario.TOOL_KINDS is TOOL_KINDS
    assert set(harness.scenario.CONCURRENCY_SAFE_KINDS) == {"read", "inspect"}
