"""Shared helpers: drive the reference stream client against a fake provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fakes import FakeProvider, Fault, ScriptedResponse
from harness._streamcase import MESSAGES, request_body, run_stream_case
from harness.agent import CompletionResult, MemoryRetryLog, StreamConfig
from harness.ports import Dialect

__all__ = ["MESSAGES", "request_body", "run_client"]


def run_client(
    dialect: Dialect,
    response: ScriptedResponse,
    faults: Mapping[tuple[int, int], Sequence[Fault]] | None = None,
    *,
    config: StreamConfig | None = None,
    seed: int = 0,
) -> tuple[CompletionResult, MemoryRetryLog, FakeProvider, float]:
    """One ``complete()`` call on a fresh clock; returns the result, log, provider, end time."""
    run = run_stream_case(dialect, response, faults, config=config, seed=seed)
    return run.result, run.retry_log, run.provider, run.virtual_seconds
