"""Run the reference stream client once against a fake provider, on a fresh virtual clock.

Used by ``harness demo``, the benchmarks and the tests; the scenario runner
drives whole agents instead.

Example::

    run = run_stream_case("openai", reply, {(1, 1): (Stall(after_events=3, seconds=120),)})
    assert run.result.outcome == "committed" and run.virtual_seconds == 32.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakes import FakeProvider, Fault, ScriptedResponse, VirtualClock
from harness.agent import (
    Budget,
    CompletionResult,
    Dialect,
    LoopClock,
    MemoryRetryLog,
    StreamClient,
    StreamConfig,
)

MESSAGES = ({"role": "user", "content": "go"},)


@dataclass(frozen=True)
class StreamCase:
    """What one ``complete()`` call did: the result, its retry log, the world's view."""

    result: CompletionResult
    retry_log: MemoryRetryLog
    provider: FakeProvider
    virtual_seconds: float


def request_body(dialect: Dialect) -> dict[str, Any]:
    """A minimal request for ``dialect`` (Anthropic requires ``max_tokens``)."""
    body: dict[str, Any] = {"model": "fake-model", "messages": list(MESSAGES)}
    if dialect == "anthropic":
        body["max_tokens"] = 1024
    return body


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
