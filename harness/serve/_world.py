"""A scenario's world served over real HTTP: real time, and crash points that kill a process.

:class:`ServedWorld` is the runner's :class:`~harness.runner.World` with two
changes. Its clock is real time read in scenario seconds (:class:`ScaledClock`:
``--time-scale 0.01`` plays a 120 s stall in 1.2 real seconds, and the checks
still see 120 s). And a world event the case crashes at (``after_tool:mail#1``,
``mid_stream:2`` …) calls ``on_kill`` — which kills the agent's process —
before the crash propagates, so the process dies where the server stands.

Example::

    world = ServedWorld(scenario, seed=7, time_scale=0.01)
    world.clock.now()      # scenario seconds since the world began
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from typing import Final, final

from fakes import CrashClass, Fault, SimulatedCrash
from harness._errors import ConfigError
from harness.ports import CALENDAR_ORIGIN_UNIX
from harness.runner import World, WorldCrash
from harness.scenario import Scenario
from harness.serve._scale import MIN_TIME_SCALE, SCALE_REASON

#: The crash class of a real process kill: its written bytes stay, fsynced or not.
KILL_CLASS: Final[CrashClass] = "process_killed"


def check_time_scale(scale: float) -> float:
    """``scale`` when the server can keep it; else a :class:`ConfigError` with the reason.

    >>> check_time_scale(0.01)
    0.01
    """
    if not MIN_TIME_SCALE <= scale < math.inf:  # NaN fails both
        raise ConfigError("--time-scale", scale, f"a factor of at least {MIN_TIME_SCALE:g}: "
                          f"{SCALE_REASON}")
    return scale


@final
class ScaledClock:
    """Real time in scenario seconds: one scenario second lasts ``scale`` real seconds.

    >>> clock = ScaledClock(0.5)
    >>> 0.0 <= clock.now() < 1.0
    True
    """

    def __init__(self, scale: float) -> None:
        self.scale = check_time_scale(scale)
        self._begun = False
        self._anchor()

    def _anchor(self) -> None:
        self._start = time.monotonic()
        # The real calendar at the world's start: dates on the wire are real dates.
        self._start_unix = time.time()

    def begin(self) -> None:
        """Start scenario time now, at the agent's first request, if it has not yet begun.

        In process an agent's imports take no virtual time; a process's start-up (an
        interpreter, its imports: a second at most) would be a thousand scenario seconds
        at 0.001, so the first process's start-up is not counted. A restart's is: it is
        part of the run.
        """
        if not self._begun:
            self._begun = True
            self._anchor()

    def now(self) -> float:
        return (time.monotonic() - self._start) / self.scale

    def real_unix(self, virtual_unix: float) -> float:
        """The real calendar's time of a date on the world's calendar (whose day starts at
        ``CALENDAR_ORIGIN_UNIX`` and runs in scenario seconds)."""
        return self._start_unix + (virtual_unix - CALENDAR_ORIGIN_UNIX) * self.scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.scale)


class ServedWorld(World):
    """A world on real time whose crash points call ``on_kill``; see the module docstring."""

    def __init__(self, scenario: Scenario, *, seed: int, time_scale: float = 1.0,
                 kill_at: str | None = None,
                 on_kill: Callable[[str], None] | None = None) -> None:
        crash = WorldCrash(kill_at, KILL_CLASS) if kill_at else None
        clock = ScaledClock(time_scale)
        super().__init__(scenario, seed=seed, world_crash=crash, clock=clock)
        self.scaled_clock = clock
        self.time_scale = time_scale
        #: Told of the kill (the world event) before the crash propagates.
        self.on_kill = on_kill

    @property
    def fault_plan(self) -> Mapping[tuple[int, int], tuple[Fault, ...]]:
        """The faults the world's provider plays, keyed (turn, attempt)."""
        return self._faults

    def use_faults(self, faults: Mapping[tuple[int, int], tuple[Fault, ...]]) -> None:
        """Play ``faults`` from now on (the world's record and its provider alike)."""
        self._faults = faults  # type: ignore[assignment]
        self.provider.use_faults(faults)

    def arm_kill(self, event: str) -> None:
        """Kill the agent at world event ``event`` (``after_tool:mail#1``), once."""
        self._world_crash = WorldCrash(event, KILL_CLASS)

    def disarm_kill(self) -> None:
        self._world_crash = None

    @property
    def incarnation(self) -> int:
        """The agent process now alive (or the one just killed, until :meth:`restart`)."""
        return self.incarnations.current

    def reach(self, event: str) -> None:
        try:
            super().reach(event)
        except SimulatedCrash:
            if self.on_kill is not None:
                self.on_kill(event)
            raise

    def restart(self) -> int:
        """The next agent process: requests and tool calls count as its from now on."""
        self.disk.restart()
        return self.incarnations.current
