"""Shared helpers: drive the reference stream client against a fake provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

MESSAGES = [{"role": "user", "content": "go"}]


def request_body(dialect: Dialect) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "fake-model", "messages": MESSAGES}
    if dialect == "anthropic":
        body["max_tokens"] = 1024
    return body


def run_client(
    dialect: Dialect,
    response: ScriptedResponse,
    faults: Mapping[tuple[int, int], Sequence[Fault]] | None = None,
    *,
    config: StreamConfig | None = None,
    seed: int = 0,
) -> tuple[CompletionResult, MemoryRetryLog, FakeProvider, float]:
    """One ``complete()`` call on a fresh clock; returns the result, log, provider, end time."""
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
    return result, log, provider, clock.now()
