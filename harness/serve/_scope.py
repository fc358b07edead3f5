"""What one test sees of a shared server: its world, its agent processes, its faults.

Two tests may share one ``harness serve``. Each names itself with a test id: the
agent sends it in the :data:`TEST_HEADER` of its provider and tool requests, the
test in ``"test"`` (or ``?test=``) of its control calls. Every test id gets a
:class:`Scope` of its own, made on first use from the active scenario: a fresh
world (turns, ledger, requests), the agent processes it marked, the faults it
armed. Requests without the header, and control calls without a test id, use the
default scope (the one ``--exec`` and the ``harness_server`` fixture use).

Faults armed at run time (:class:`RuntimeFaults`) join the scenario's own, keyed
(turn, attempt) like them; a seeded rate strikes each (turn, attempt) with its
probability, drawn from the world's seed, the test id and the key alone, so one
seed gives the same faults in every run.

Example::

    scope = Scope(world)
    scope.faults.arm((2, 1), (fakes.HttpError(503),))
    scope.faults.get((2, 1))     # the scenario's faults of turn 2, then the 503
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final

import fakes
from fakes import check_faults
from harness._errors import got_expected
from harness.ports import rng_stream
from harness.runner import Case, CrashSpec
from harness.serve._trace import ProcessRun
from harness.serve._world import KILL_CLASS, ServedWorld

#: The header an agent's requests name their test with (two tests sharing one server).
TEST_HEADER: Final = "x-harness-test"
_TEST_ID = re.compile(r"[A-Za-z0-9._:/-]{1,128}")

FaultKey = tuple[int, int]


def check_test_id(value: object, where: str) -> str | None:
    """``value`` as a test id (None: the default scope); a ``ValueError`` saying why not.

    >>> check_test_id("tests/test_mail.py::test_once", "the body's 'test'")
    'tests/test_mail.py::test_once'
    """
    if value is None:
        return None
    if not isinstance(value, str) or not _TEST_ID.fullmatch(value):
        raise ValueError(got_expected(where, got=repr(value),
                                      expected="a test id: 1 to 128 of the characters A-Z a-z "
                                               "0-9 . _ : / - (such as 'test_mail_once')"))
    return value


@dataclass(frozen=True)
class Rate:
    """A fault that strikes each (turn, attempt) from ``from_turn`` with probability ``rate``."""

    rate: float
    fault: fakes.Fault
    from_turn: int = 1


@final
class RuntimeFaults(Mapping[FaultKey, tuple[fakes.Fault, ...]]):
    """The scenario's fault plan, plus the faults and rates armed over the control API.

    The world and its provider read the same object, so the record names exactly the
    faults the provider played.
    """

    def __init__(self, scripted: Mapping[FaultKey, tuple[fakes.Fault, ...]], seed: int,
                 test: str | None) -> None:
        self._scripted = dict(scripted)
        self._seed, self._test = seed, test
        self.armed: dict[FaultKey, tuple[fakes.Fault, ...]] = {}
        self.rates: list[Rate] = []

    def arm(self, key: FaultKey, faults: tuple[fakes.Fault, ...]) -> None:
        check_faults((*self.armed.get(key, ()), *faults))
        self.armed[key] = (*self.armed.get(key, ()), *faults)

    def add_rate(self, rate: Rate) -> None:
        self.rates.append(rate)

    def clear(self) -> None:
        """Switch every armed fault and rate off (the scenario's own stay)."""
        self.armed.clear()
        self.rates.clear()

    def __getitem__(self, key: FaultKey) -> tuple[fakes.Fault, ...]:
        found = (*self._scripted.get(key, ()), *self.armed.get(key, ()), *self._rated(key))
        if not found:
            raise KeyError(key)
        return found

    def _rated(self, key: FaultKey) -> tuple[fakes.Fault, ...]:
        turn, attempt = key
        struck = []
        for index, rate in enumerate(self.rates):
            # One draw per (rate, turn, attempt): a retry of the turn draws anew.
            draw = rng_stream(self._seed, f"serve.rate:{self._test}:{index}:{turn}:{attempt}")
            if turn >= rate.from_turn and draw.random() < rate.rate:
                struck.append(rate.fault)
        return tuple(struck)

    def __iter__(self) -> Iterator[FaultKey]:
        return iter(dict.fromkeys((*self._scripted, *self.armed)))

    def __len__(self) -> int:
        return len(dict.fromkeys((*self._scripted, *self.armed)))


@final
class Scope:
    """One test's world, the agent processes it marked, its armed faults and kill."""

    def __init__(self, world: ServedWorld, test: str | None = None) -> None:
        self.world, self.test = world, test
        self.runs: list[ProcessRun] = []
        self.limit: str | None = None
        self.kill_at: str | None = None
        self.pid: int | None = None
        self.group = False
        self.faults = RuntimeFaults(world.fault_plan, world.seed, test)
        world.use_faults(self.faults)
        if world.on_kill is None:  # --exec kills its own process; a served test says its pid
            world.on_kill = self.killed

    def case(self) -> Case:
        scenario = self.world.scenario
        crash = None if self.kill_at is None else CrashSpec(self.kill_at, "at", KILL_CLASS)
        return Case(scenario.name, Path(f"<served {scenario.name}>"), self.world.seed, crash=crash)

    def killed(self, event: str) -> None:
        """The world reached the armed kill: the agent's process dies there (if it said its pid)."""
        run = self.current()
        run.killed_at = event
        run.ended_at = self.world.clock.now()
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if self.group:
                    os.killpg(self.pid, signal.SIGKILL)
                else:
                    os.kill(self.pid, signal.SIGKILL)

    def current(self) -> ProcessRun:
        """The agent process now running; the first one begins with the first request."""
        if not self.runs:
            self.runs.append(ProcessRun(self.world.incarnation))
        return self.runs[-1]
