"""Counting tools: kinds, idempotency, concurrency safety, and refusal after a crash."""

from __future__ import annotations

import pytest

from fakes import Behaviour, DeadIncarnationError, ToolLedger, VirtualClock, WorldTool
from harness import ConfigError
from harness.ports import ToolContext, ToolInvocation


def _context(clock: VirtualClock, incarnation: int = 1) -> ToolContext:
    return ToolContext(ToolInvocation("t", "c", "x", {}), "exec_1", "run", incarnation, clock)


@pytest.mark.parametrize(
    ("kind", "idempotent", "safe"),
    [("append", False, False), ("send", False, False), ("put", True, False), ("read", True, True)],
)
def test_each_kind_declares_idempotency_and_concurrency(
    kind: str, idempotent: bool, safe: bool
) -> None:
    tool = WorldTool(kind, ToolLedger(VirtualClock()))  # type: ignore[arg-type]
    assert (tool.idempotent, tool.concurrency_safe) == (idempotent, safe)


def test_tools_change_the_world_and_read_returns_it() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    ctx = _context(clock)
    clock.run(WorldTool("append", ledger).run({"text": "a"}, ctx))
    clock.run(WorldTool("send", ledger).run({"subject": "s"}, ctx))
    clock.run(WorldTool("put", ledger).run({"key": "k", "value": 1}, ctx))
    world = clock.run(WorldTool("inspect", ledger).run({}, ctx))
    assert world == {"notes": ["a"], "outbox": [{"subject": "s"}], "store": {"k": 1}}
    assert len(ledger.effects) == 3  # reads leave no effect


def test_a_slow_tool_applies_its_effect_at_the_end() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    tool = WorldTool("send", ledger, behaviour=Behaviour("slow", seconds=7))
    clock.run(tool.run({"subject": "s"}, _context(clock)))
    assert [e.at for e in ledger.effects] == [7.0]


def test_a_dead_incarnations_call_is_refused() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    ledger.incarnations.crash()
    with pytest.raises(DeadIncarnationError):
        clock.run(WorldTool("send", ledger).run({}, _context(clock)))
    assert ledger.effects == []


def test_bad_declarations_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"^kind: got 'delete'; expected one of 'append'"):
        WorldTool("delete", ToolLedger(VirtualClock()))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"^argv: got \(\)"):
        Behaviour("subprocess")


def test_a_tool_with_output_chars_returns_that_much_build_log_beside_its_result() -> None:
    clock = VirtualClock()
    ledger = ToolLedger(clock)
    ctx = _context(clock)
    build = WorldTool("read", ledger, output_chars=5_000)
    first = clock.run(build.run({}, ctx))
    assert set(first) == {"notes", "outbox", "store", "output"}
    assert len(first["output"]) == 5_000
    assert first["output"].startswith("line 1: step 1 of the build ok\nline 2: ")
    assert clock.run(build.run({}, ctx)) == first  # the same every time
    notes = WorldTool("append", ledger, output_chars=10)
    assert clock.run(notes.run({"text": "a"}, ctx)) == {
        "appended": True, "lines": 1, "output": "line 1: st"}
    # Without it, a tool's result is its kind's own.
    assert "output" not in clock.run(WorldTool("read", ledger).run({}, ctx))


@pytest.mark.parametrize("chars", [0, -1, 5_000_001])
def test_output_chars_out_of_bounds_is_a_config_error(chars: int) -> None:
    with pytest.raises(ConfigError, match="output_chars"):
        WorldTool("read", ToolLedger(VirtualClock()), output_chars=chars)
