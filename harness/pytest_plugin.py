"""The harness's pytest plugin: fixtures for deterministic, virtual-time tests.

Registered through the ``pytest11`` entry point, so installing the project is
enough. It only wires; the machinery lives in the library.
"""

from __future__ import annotations

import pytest

from fakes import VirtualClock


@pytest.fixture
def virtual_clock() -> VirtualClock:
    """A fresh :class:`fakes.VirtualClock` at t=0.

    Drive async code with ``virtual_clock.run(coro)``; every sleep, timeout and
    stall inside it runs on virtual time::

        def test_backoff(virtual_clock):
            virtual_clock.run(asyncio.sleep(60))
            assert virtual_clock.now() == 60
    """
    return VirtualClock()
