"""What every transport adapter shares: the request it hands in, the plan it plays.

The provider decides a whole response without I/O (:class:`ResponsePlan`); an
adapter (respx/httpx, httpx2, the runner's own transport) turns the live request
into an :class:`IncomingRequest`, asks any :class:`Planner` for the plan and plays
it. The adapters depend on this module only, never on the provider that uses them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

from fakes._wire import Emit, Hang, Pause, Reset, Step

CONNECTION_RESET = "[Errno 104] Connection reset by peer"
"""What a client's read error says when a plan resets the connection, whoever reads it."""


@dataclass(frozen=True)
class IncomingRequest:
    """An HTTP request as any transport sees it.

    >>> IncomingRequest("POST", "https://openai.fake.test/v1/chat/completions", {}, b"{}").method
    'POST'
    """

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class ResponsePlan:
    """What the connection does: wait, send the status and headers, then play ``steps``.

    ``before_headers`` holds :class:`Pause` / :class:`Hang` steps taken before
    the response headers are sent; ``before_connect`` those before the
    connection is accepted at all (a client's connect timeout governs them).
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    steps: tuple[Step, ...]
    before_headers: tuple[Step, ...] = ()
    before_connect: tuple[Step, ...] = ()
    #: A hang or reset kept bytes of the answer from the client. One that comes
    #: after the terminal event cuts nothing: the answer arrived whole (S2).
    cut_short: bool = False

    @property
    def body(self) -> bytes:
        """Every byte the client can receive."""
        return b"".join(step.data for step in self.steps if isinstance(step, Emit))


class Planner(Protocol):
    """What an adapter serves: an origin, a base URL and a plan per request."""

    @property
    def origin(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    def plan(self, request: IncomingRequest) -> ResponsePlan: ...


async def wait_before_headers(steps: tuple[Step, ...]) -> None:
    """Take the plan's pre-header pauses (virtual under a VirtualClock)."""
    for step in steps:
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Hang):
            await asyncio.Event().wait()


async def play_steps(
    steps: tuple[Step, ...], reset_error: Callable[[], Exception]
) -> AsyncIterator[bytes]:
    """Yield the plan's bytes, sleeping on pauses, forever on a hang, raising on a reset."""
    for step in steps:
        if isinstance(step, Emit):
            if step.data:
                yield step.data
        elif isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
        elif isinstance(step, Hang):
            # An Event nobody sets: the connection stays open and silent.
            await asyncio.Event().wait()
        else:
            assert isinstance(step, Reset)
            raise reset_error()


class PlanBody:
    """A response body that plays a plan's steps as the client reads.

    Each adapter mixes it into its library's byte stream and says what a reset
    raises there (``httpx.ReadError``, ``httpx2.ReadError``).
    """

    read_error: ClassVar[Callable[..., Exception]]

    def __init__(self, steps: tuple[Step, ...], request: object) -> None:
        self._steps = steps
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in play_steps(self._steps, self._reset):
            yield chunk

    def _reset(self) -> Exception:
        return self.read_error(CONNECTION_RESET, request=self._request)
