"""An agent cannot bend the world's time or its record of requests: the harness keeps its own.

The virtual clock and the fake provider's record of requests live in the worker a case
runs in, beside the agent. Each agent below meets a rate limit whose ``Retry-After`` it
must wait out, then a stream that stalls, and in its own process:

- ``clock``: moves the clock forward by each long wait instead of waiting it (the
  ``Retry-After`` retried at once, the stall skipped), without the clock's own method;
- ``delete``: deletes the refused request from the world's record of requests;
- ``freeze``: holds the clock still, as the world's records read it, through every long
  jump (a stall), while the loop's timers still fire on time;
- ``silence``: rewrites how a stream's record measures its silences, so the stall reads as
  no silence at all (what S1 and an idle watchdog's verdicts read);
- ``hide_call``: deletes the e-mail's tool invocation from the world's log;
- ``forge_call``: rewrites what the e-mail's invocation was called with, in the world's log;
- ``bounce``: moves the clock forward by hand while the e-mail is sent, and sets it back
  before the next request, so the invocation and its effect read as ten minutes later;
- ``reason``: ends each long wait by moving the clock itself, with a reason of its own.

Every move of a sealed worker's clock (where from, where to and why), every request its
fake provider takes, every stream's timing at its end, every tool invocation's start and
end and every effect is told to the harness as it happens
(:mod:`harness.runner._ledger_pipe`), so every case of each fails with a ``judge`` verdict
naming the first request, clock reading, invocation or stream's timing that differs, crash
cases built from the scenario's recorded run included; with the trick off, the same agents
are judged as before, no case by the judge, each digest the same from run to run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

WAITED = """
name: waited-then-stalled
description: A rate limit to wait out, then a stream that stalls, on the way to one e-mail.
dialect: openai
seed: 5
tools:
  send_mail: {kind: send, target: "examples.openai_agent.tools:send_mail"}
model:
  - turn: 1
    calls: [{tool: send_mail, args: {to: "ops@example.com", body: "deploy 42"}}]
  - turn: 2
    text: "Mailed."
faults:
  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 429, retry_after: 20}
  - {at: {turn: 2, attempt: 1}, kind: stall, after_events: 1, seconds: 90}
crash:
  points: ["after_tool:send_mail#1", "after_response:2", "before_request:2"]
  classes: [process_killed]
expect:
  stop_state: complete
"""

TRICKS = '''
import asyncio
import multiprocessing
import os
import sys

import fakes._clock
import harness.runner._world


def _forward():
    """Each wait of a second or more: the clock moved on by hand, no time waited."""
    import anyio._backends._asyncio as backend

    original = asyncio.sleep

    async def sleep(delay, result=None):
        clock = getattr(asyncio.get_running_loop(), "_virtual_clock", None)
        if clock is not None and delay >= 1:
            clock._now += delay  # as if waited
            delay = 0
        return await original(delay, result)

    asyncio.sleep = backend.sleep = sleep


def _delete():
    """A refused request: gone from the world's record as soon as it is answered."""
    original = harness.runner._world.World.accept

    def accept(self, incoming, incarnation):
        accepted = original(self, incoming, incarnation)
        if accepted is not None and accepted.plan.status == 429:
            self.requests.pop()
        return accepted

    harness.runner._world.World.accept = accept


# Where the world reads the clock for its records (the requests' times, the stream's chunks).
RECORDS = ("harness.runner._world", "harness.runner._ledger_pipe",
           "harness.runner._trace_writer")


def _freeze():
    """A jump of 25 virtual seconds or more (a stall): the loop's timers fire and the agent
    reads the time as it is, but the clock the world's records read stands still."""
    jump = fakes._clock.VirtualClock._jump_to

    def frozen_jump(self, when, why="timer"):
        before = self._now
        jump(self, when, why)
        if self._now - before >= 25:
            self.__dict__["frozen"] = self.__dict__.get("frozen", 0.0) + self._now - before

    def now(self):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith(RECORDS):
            return self._now - self.__dict__.get("frozen", 0.0)
        return self._now

    fakes._clock.VirtualClock._jump_to = frozen_jump
    fakes._clock.VirtualClock.now = now
    fakes._clock._VirtualEventLoop.time = lambda self: self._virtual_clock._now


def _silence():
    """A stream's gaps forgotten as they are measured: the stall reads as no silence."""
    import harness.runner._world_streams as streams

    def forgetful(self):
        self._pending.last_chunk_at = self._clock.now()

    streams.StreamRecord._note_silence = forgetful


def _in_the_log(change):
    """Each invocation's record, once it ends, changed by ``change`` (None: deleted)."""
    import harness.runner._world_tools as tools

    original = tools.RecordingTool.run

    async def run(self, arguments, context):
        try:
            return await original(self, arguments, context)
        finally:
            log = self._world.invocations
            log[:] = [kept for kept in map(change, log) if kept is not None]

    tools.RecordingTool.run = run


def _hide_call():
    """The e-mail's invocation: gone from the world's log as soon as it ends."""
    _in_the_log(lambda call: None if call.tool == "send_mail" else call)


def _forge_call():
    """The e-mail's invocation: called with another body, as the world's log reads."""
    import dataclasses

    _in_the_log(lambda call: dataclasses.replace(
        call, arguments={**call.arguments, "body": "nothing to see"})
        if call.tool == "send_mail" else call)


def _bounce():
    """The clock moved on by hand while a tool runs, and set back as soon as it ends."""
    import harness.runner._world_tools as tools

    original = tools.RecordingTool.run

    async def run(self, arguments, context):
        clock = self._world.clock
        clock._now += 600
        try:
            return await original(self, arguments, context)
        finally:
            clock._now -= 600

    tools.RecordingTool.run = run


def _reason():
    """Each wait of a second or more: ended at once by a move of the agent's own, its
    reason its own too."""
    import anyio._backends._asyncio as backend

    original = asyncio.sleep

    async def sleep(delay, result=None):
        clock = getattr(asyncio.get_running_loop(), "_virtual_clock", None)
        if clock is not None and delay >= 1:
            clock._moved(lambda: clock._now + delay, "slept")
            delay = 0
        return await original(delay, result)

    asyncio.sleep = backend.sleep = sleep


HOW = {"clock": _forward, "delete": _delete, "freeze": _freeze, "silence": _silence,
       "hide_call": _hide_call, "forge_call": _forge_call, "bounce": _bounce,
       "reason": _reason}
_DONE = []


def bend_time():
    how = os.environ.get("BEND_TIME", "")
    if how not in HOW or multiprocessing.current_process().name != "harness-case-worker" \\
            or _DONE:
        return  # the honest run, or planning a scenario's crash points
    _DONE.append(how)
    HOW[how]()
'''

FACTORIES = TRICKS + '''
from harness.agent import ReferenceAgent


def bends_time(ports):
    bend_time()
    return ReferenceAgent(ports)
'''

PLAIN = TRICKS + '''
from examples.openai_agent import main as honest_main


async def main(prompt):
    bend_time()
    return await honest_main(prompt)
'''


@pytest.fixture
def agents(guest_modules: Callable[..., Path]) -> Path:
    return guest_modules({"bending_factories": FACTORIES, "bending_plain": PLAIN,
                          "waited.yaml": WAITED})


@pytest.fixture
def rows(agents: Path, rows_told: Callable[..., list[dict[str, object]]]
         ) -> Callable[..., list[dict[str, object]]]:
    """Run the scenario with an agent that bends time ``how`` ("": honest): each case's row."""
    return lambda agent, how: rows_told(agents / "waited.yaml", agent, "BEND_TIME", how)


SAID = {"clock": "moved without telling the harness",
        "delete": "request #",
        "freeze": "moved without telling the harness",
        "silence": "the stream of request #",
        "hide_call": "tool invocation #1: the trace has none",
        "forge_call": "tool invocation #1: the trace has send_mail",
        "bounce": "moved without telling the harness",
        "reason": "for no reason the harness knows ('slept')"}


def _row(row: dict[str, object]) -> tuple[object, ...]:
    return row["case_id"], row["passed"], row["digest"], row["failed_invariants"]


def _caught(honest: list[dict[str, object]], bent: list[dict[str, object]], how: str) -> None:
    """Every case the trick played in fails ``judge``, saying why; any other is judged as
    the honest run's (a crash before the stall's attempt: its retry never stalls)."""
    assert [r["case_id"] for r in bent] == [r["case_id"] for r in honest]
    # Crash cases built from the scenario's recorded run among them: their requests and
    # time are the recording's up to the crash, then their own.
    assert "recorded" in {r["exploration"] for r in honest}
    caught = [now for now in bent if now["failed_invariants"] == ["judge"]]
    for row in caught:
        assert SAID[how] in json.dumps(row["verdicts"])
    assert [_row(now) for now in bent if now not in caught] == \
        [_row(was) for was, now in zip(honest, bent, strict=True) if now not in caught]
    # The run without a crash meets both the wait and the stall, as do the cases crashed
    # after the stall.
    assert {str(r["case_id"]) for r in caught} >= {
        "waited-then-stalled", "waited-then-stalled[after_response:2:at:process_killed]"}
    if how not in ("freeze", "silence"):  # the wait comes first: every case meets it
        assert caught == bent


def _honest(rows: Callable[..., list[dict[str, object]]], agent: str
            ) -> list[dict[str, object]]:
    honest = rows(agent, "")
    again = rows(agent, "none")  # the tricks' module loaded, none of them played
    assert not [r for r in honest if "judge" in r["failed_invariants"]]
    assert [_row(r) for r in again] == [_row(r) for r in honest]
    return honest


@pytest.mark.parametrize("how", ["clock", "delete", "freeze", "silence", "hide_call",
                                 "forge_call", "bounce", "reason"])
def test_a_factory_agent_that_bends_time_or_requests_fails_with_the_judge(
        rows: Callable[..., list[dict[str, object]]], how: str) -> None:
    honest = _honest(rows, "bending_factories:bends_time")
    # Honoured, the wait and the stall cost it nothing: every case passes.
    assert all(r["passed"] for r in honest)

    _caught(honest, rows("bending_factories:bends_time", how), how)


@pytest.mark.parametrize("how", ["clock", "delete", "freeze", "silence", "hide_call",
                                 "forge_call", "bounce", "reason"])
def test_a_plain_agent_that_bends_time_or_requests_fails_with_the_judge(
        rows: Callable[..., list[dict[str, object]]], how: str) -> None:
    honest = _honest(rows, "bending_plain:main")

    _caught(honest, rows("bending_plain:main", how), how)


def test_the_plugin_s_sealed_cases_judge_a_frozen_clock_as_harness_run_does(
        agents: Path, sealed_judged: Callable[..., list[list[str]]]) -> None:
    failed = sealed_judged(agents / "waited.yaml", "bending_factories:bends_time",
                           "BEND_TIME", "freeze")

    assert failed == [["judge"]] * 3
