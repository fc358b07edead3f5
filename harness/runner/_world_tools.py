"""The world's tools as an incarnation holds them, and the clock they wait on.

Every invocation an agent makes, through the ports or through an intercepted function,
runs a :class:`RecordingTool`: it notes the call in the world's log when it starts (a
call the agent walks away from is still seen running) and settles the record when it
ends. A tool called from blocking code runs to its end without an event loop, its waits
moving the virtual clock at once (:class:`JumpClock`).

Example::

    tool = RecordingTool(world, world.tools["mail"])
    result = await tool.run({"to": "a@example.com"}, context)
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from types import FrameType
from typing import Any, Protocol

import fakes
from fakes import BEHAVIOURS, LOOP_BOUND_BEHAVIOURS, Incarnations, VirtualClock, WorldTool
from harness._errors import AgentEntryError
from harness.ports import PassThroughTool, ToolContext
from harness.runner._child_env import child_environment_record
from harness.trace import ChildEnvironment, InvocationOutcome, InvocationRecord

PURE_KINDS = fakes.PURE_TOOL_KINDS


class ToolWorld(Protocol):
    """What a recording tool reads and writes of its world (:class:`harness.runner.World`)."""

    clock: VirtualClock
    incarnations: Incarnations
    invocations: list[InvocationRecord]
    returned: bool  # the current incarnation's run() has returned
    on_tool_settled: Callable[[], None] | None

    def goal_tick(self) -> None: ...

    def next_invocation_seq(self) -> int: ...

    def disk_error_raised(self) -> bool: ...

    def effect_applied(self, tool: str) -> None: ...

    def note_child_environment(self, record: ChildEnvironment) -> None: ...

    def invocation_started(self, record: InvocationRecord) -> float: ...

    def invocation_settled(self, record: InvocationRecord, *, left: bool) -> float | None: ...


class RecordingTool(PassThroughTool[WorldTool]):
    """A world tool as one incarnation holds it: every invocation goes in the world's log."""

    def __init__(self, world: ToolWorld, tool: WorldTool) -> None:
        super().__init__(tool)
        self._world = world

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        world = self._world
        world.goal_tick()
        seq = world.next_invocation_seq()
        alive = context.incarnation == world.incarnations.current and not \
            world.incarnations.crashed
        args = json.loads(json.dumps(dict(arguments), sort_keys=True, default=str))
        outcome: InvocationOutcome = "refused"
        after_error = world.disk_error_raised()

        returned: str | None = None
        started = 0.0

        def record(ended_at: float | None, outcome: InvocationOutcome) -> InvocationRecord:
            return InvocationRecord(seq, self.inner.name, self.inner.kind,
                                    context.invocation.call_id, args, context.incarnation,
                                    started, ended_at, not alive,
                                    outcome if alive else "refused", after_error, returned)

        # Noted at the start, so a call the agent walked away from and that never
        # settles is still seen running (J7); replaced when it ends. In a sealed worker
        # the start and the end are told to the harness, and their times read as told.
        started = world.invocation_started(record(None, "running"))
        slot = len(world.invocations)
        world.invocations.append(record(None, "running"))
        self._note_child(seq, context, alive)
        try:
            result = await self.inner.run(arguments, context)
            outcome = "ok"
            returned = json.dumps(result, sort_keys=True, default=str)
            if self.inner.kind not in PURE_KINDS:
                world.effect_applied(self.inner.name)
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            # Ended only by the loop's teardown after run() returned: left running.
            left = world.returned
            settled = record(None, "abandoned" if left else outcome)
            world.invocations[slot] = replace(
                settled, ended_at=world.invocation_settled(settled, left=left))
            if world.on_tool_settled is not None:
                world.on_tool_settled()


    def _note_child(self, seq: int, context: ToolContext, alive: bool) -> None:
        """What the child of a subprocess tool is about to receive (env:children)."""
        behaviour = self.inner.behaviour
        if behaviour.kind != "subprocess" or not alive:
            return
        received = fakes.subprocess_environment(behaviour.env, context.env)
        self._world.note_child_environment(child_environment_record(
            seq, self.inner.name, context, received, behaviour.env))


def functions_on_stack() -> set[str]:
    """The names of the functions running in this thread now."""
    names: set[str] = set()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        names.add(frame.f_code.co_name)
        frame = frame.f_back
    return names


class JumpClock:
    """The world clock for tools called from blocking code: a wait moves time at once."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock

    def now(self) -> float:
        return self._clock.now()

    async def sleep(self, seconds: float) -> None:
        self._clock.advance(seconds)


def finish_without_loop(coro: Coroutine[Any, Any, Any], tool: str) -> Any:
    """Run a tool that never suspends (instant, slow, failing) to its end, with no loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AgentEntryError(loop_bound_message(tool))


def loop_bound_message(tool: str, behaviour: str | None = None) -> str:
    """Why ``tool`` cannot run (with ``behaviour``) from blocking code, and the two fixes."""
    waits = (f"has behaviour {behaviour!r}, which waits" if behaviour is not None
             else "waits")
    return (f"tool {tool!r} {waits} on the event loop, but "
            "its target is a plain function called from blocking code: make the target "
            "async, or give the tool another behaviour (one of "
            f"{', '.join(k for k in BEHAVIOURS if k not in LOOP_BOUND_BEHAVIOURS)})")
