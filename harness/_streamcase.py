"""Run the reference stream client once against a fake provider, on a fresh virtual clock.

Used by ``harness demo``, the benchmarks and the tests; the scenario runner
drives whole agents instead.

Example::

    run = run_stream_case("openai", reply, {(1, 1): (Stall(after_events=3, seconds=120),)})
    assert run.result.outcome == "committed" and run.virtual_seconds == 32.0
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakes import FakeProvider, Fault, IncomingRequest, ScriptedResponse, VirtualClock
from harness.agent import (
    Budget,
    CompletionResult,
    MemoryRetryLog,
    StreamClient,
    StreamConfig,
    opening_request,
    sent_request,
)
from harness.ports import Dialect, LoopClock

MESSAGES = ({"role": "user", "content": "go"},)


@dataclass(frozen=True)
class StreamCase:
    """What one ``complete()`` call did: the result, its retry log, the world's view."""

    result: CompletionResult
    retry_log: MemoryRetryLog
    provider: FakeProvider
    virtual_seconds: float


def request_body(dialect: Dialect) -> dict[str, Any]:
    """A minimal request for ``dialect``: one user turn saying "go", as the agent builds it."""
    return opening_request(dialect, "go")


def stream_request(dialect: Dialect, endpoint: str) -> IncomingRequest:
    """The request the reference client sends for :func:`request_body`, as the fake receives it.

    >>> stream_request("gemini", "https://g.test/v1beta/models/{model}:streamGenerateContent").url
    'https://g.test/v1beta/models/fake-model:streamGenerateContent?alt=sse'
    """
    url, body = sent_request(dialect, endpoint, request_body(dialect))
    return IncomingRequest("POST", url, {}, json.dumps(body).encode())


def run_stream_case(
    dialect: Dialect,
    response: ScriptedResponse,
    faults: Mapping[tuple[int, int], Sequence[Fault]] | None = None,
    *,
    config: StreamConfig | None = None,
    seed: int = 0,
) -> StreamCase:
    """Run one ``complete()`` call; see the module docstring."""
    clock = VirtualClock()
    provider = FakeProvider(dialect, response, faults or {}, seed=seed)
    log = MemoryRetryLog()
    settings = config or StreamConfig()

    async def go() -> CompletionResult:
        async with provider.httpx_client() as http:
            client = StreamClient(
                http,
                dialect=dialect,
                endpoint=provider.endpoint,
                config=settings,
                clock=LoopClock(),
                seed=seed,
                retry_log=log,
                budget=Budget.for_run(settings, now=0.0),
            )
            return await client.complete(request_body(dialect))

    result = clock.run(go())
    return StreamCase(result, log, provider, clock.now())
