"""The clock port: where an agent reads time and waits, and the event loop's clock.

Like every port in :mod:`harness.ports`, it is a small ``Protocol``; the fakes
(:class:`fakes.VirtualClock`) and the real implementation both satisfy it.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, final


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
