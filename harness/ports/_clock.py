"""The clock port: where an agent reads time and waits, and the event loop's clock.

Like every port in :mod:`harness.ports`, it is a small ``Protocol``; the fakes
(:class:`fakes.VirtualClock`) and the real implementation both satisfy it.
"""

from __future__ import annotations

import asyncio
from typing import Final, Protocol, final

#: Unix time of virtual t=0 (2026-01-01T00:00:00Z): the calendar the fakes date their
#: answers by (an HTTP-date Retry-After, Anthropic's rate-limit resets) and the agent
#: reads them by.
CALENDAR_ORIGIN_UNIX: Final = 1_767_225_600.0


class Clock(Protocol):
    """Where the agent reads time and waits.

    Under :class:`fakes.VirtualClock` both are virtual: a 120 s wait costs
    microseconds of wall time.
    """

    def now(self) -> float:
        """Seconds since the clock's epoch."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (may be cancelled)."""
        ...


@final
class LoopClock:
    """The running event loop's clock: virtual under a virtual loop, real otherwise."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
