"""The agent's clocks follow the world's virtual clock (DESIGN §3, "Virtual time").

While an incarnation runs, :func:`virtual_time` replaces ``time.time``,
``time.monotonic``, ``time.perf_counter`` (and their ``_ns`` forms) and
``time.sleep`` in the :mod:`time` module. ``asyncio`` already runs on the
virtual clock's loop, so ``asyncio.sleep`` and the loop's own time are virtual
too; a blocking ``time.sleep`` moves the clock forward by itself, as the loop
would have waited that long.

Why a patch of our own rather than a time-travel package: the case needs one
clock under all of wall time, monotonic time, sleeping and the event loop, and
it moves on every timer the loop jumps to; a package that freezes or shifts
wall time only (time-machine does not touch ``monotonic``, ``perf_counter`` or
``sleep``) would leave the SDKs' retry sleeps and timeouts on the real clock.

Code that bound ``from time import monotonic`` before the case started keeps
the real function: the agent's own modules are imported afresh inside the case
(see :mod:`harness.intercept._plain`), so theirs are virtual. ``datetime.now()``
is not patched.

A blocking ``main`` that runs its own event loop (``asyncio.run``, pydantic-ai's
``run_sync``) gets one driven by the same clock: :func:`virtual_event_loops`
makes every new loop a virtual one.

``time.time()`` starts at :data:`VIRTUAL_EPOCH` (2025-01-01T00:00:00Z), the
same instant the fake provider stamps on its responses, so an HTTP-date in a
``Retry-After`` header means a fixed offset from the start of the case.

>>> from fakes import VirtualClock
>>> import time
>>> clock = VirtualClock()
>>> with virtual_time(clock):
...     time.sleep(90)
...     (time.monotonic(), time.time() - VIRTUAL_EPOCH)
(90.0, 90.0)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from fakes import VirtualClock

#: What ``time.time()`` reads at virtual second 0.
VIRTUAL_EPOCH: Final = 1_735_689_600.0


@contextmanager
def virtual_time(clock: VirtualClock) -> Iterator[None]:
    """Put the :mod:`time` module on ``clock`` for the duration."""
    replacements = _replacements(clock)
    saved = {name: getattr(time, name) for name in replacements}
    try:
        for name, function in replacements.items():
            setattr(time, name, function)
        yield
    finally:
        for name, function in saved.items():
            setattr(time, name, function)


def _replacements(clock: VirtualClock) -> dict[str, Callable[..., Any]]:
    def monotonic() -> float:
        return clock.now()

    def monotonic_ns() -> int:
        return round(clock.now() * 1e9)

    def wall() -> float:
        return VIRTUAL_EPOCH + clock.now()

    def wall_ns() -> int:
        return round(wall() * 1e9)

    def sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        clock.advance(float(seconds))

    return {
        "time": wall, "time_ns": wall_ns, "monotonic": monotonic,
        "monotonic_ns": monotonic_ns, "perf_counter": monotonic,
        "perf_counter_ns": monotonic_ns, "sleep": sleep,
    }


@contextmanager
def virtual_event_loops(clock: VirtualClock) -> Iterator[None]:
    """Make every event loop created meanwhile (``asyncio.run`` …) run on ``clock``."""
    saved = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(_VirtualLoopPolicy(clock))
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(saved)


class _VirtualLoopPolicy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self._clock = clock

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return self._clock.new_event_loop()
