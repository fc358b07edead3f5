"""A long run's memory grows linearly with its turns, not with their square.

Every request carries the whole conversation again. The provider used to keep
each request's parsed body whole, so 1,000 turns held the conversation 1,000
times (about 0.8 GB). Repeated messages are now held once
(:func:`fakes._provider.share_repeated_messages`); these tests fail when a
recorded request, or anything else kept for the whole run, copies the history.
``benchmarks/bench_long_run_memory.py`` prints the figures for 100 to 1,000 turns.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from long_run import long_scenario

from fakes import FakeProvider, IncomingRequest, ScriptedResponse, ScriptedUsage, Text
from harness.ports import SPECS, Dialect
from harness.runner import plan_cases, run_case
from harness.scenario import Scenario

# System tier (pytest --system): runs of a thousand turns.
pytestmark = pytest.mark.system

REPLY = ScriptedResponse((Text("noted"),), "stop", ScriptedUsage(40, 9))


def peak_bytes(action: Callable[[], object]) -> int:
    """The most memory Python held at once while ``action`` ran (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _history(turns: int, dialect: Dialect = "openai") -> Iterator[bytes]:
    """The bodies an agent sends over ``turns`` turns: the whole conversation each time."""
    key = SPECS[dialect].conversation
    said = {"openai": "assistant", "openai-responses": "assistant", "gemini": "model"}[dialect]
    messages: list[dict[str, object]] = [_turn(dialect, "user", "Write the notes.")]
    for turn in range(1, turns + 1):
        yield json.dumps({"model": "m", "stream": True, key: messages}).encode()
        messages = [*messages, _turn(dialect, said, f"note {turn} " + "x" * 200),
                    _turn(dialect, "user", f"next {turn}")]


def _turn(dialect: Dialect, role: str, text: str) -> dict[str, object]:
    if dialect == "gemini":
        return {"role": role, "parts": [{"text": text}]}
    return {"role": role, "content": text}


def _provider_conversation(turns: int, dialect: Dialect = "openai") -> FakeProvider:
    provider = FakeProvider(dialect, REPLY)
    url = provider.endpoint.replace("{model}", "m")
    for body in _history(turns, dialect):
        provider.plan(IncomingRequest("POST", url, {}, body))
    return provider


@pytest.mark.parametrize("dialect", ["openai", "openai-responses", "gemini"])
def test_the_provider_holds_a_long_conversation_once(dialect: Dialect) -> None:
    small = peak_bytes(lambda: _provider_conversation(25, dialect))
    large = peak_bytes(lambda: _provider_conversation(100, dialect))
    # Linear: 4x the turns, about 4x the memory; the square would be about 16x.
    assert large < 5 * small, (small, large)


def test_recorded_requests_read_the_same_as_the_bodies_sent() -> None:
    provider = _provider_conversation(30)
    sent = [json.loads(body) for body in _history(30)]
    assert [request.json for request in provider.requests] == sent
    first, last = provider.requests[0].json, provider.requests[-1].json
    assert first is not None
    assert last is not None
    assert last["messages"][0] is first["messages"][0]  # type: ignore[index]


@pytest.fixture(scope="module")
def warmed() -> None:
    """One short run first, so imports and first-use caches are not counted as a run's memory."""
    scenario = long_scenario(3)
    run_case(_uncrashed(scenario), scenario, None)


def _uncrashed(scenario: Scenario):  # type: ignore[no-untyped-def]
    return next(c for c in plan_cases(scenario, Path("long.yaml"), None) if not c.crash)


def _run(turns: int) -> object:
    scenario = long_scenario(turns)
    result = run_case(_uncrashed(scenario), scenario, None)
    assert result.passed, result.verdicts
    return result


def test_a_long_run_of_the_reference_agent_grows_linearly(warmed: None) -> None:
    small = peak_bytes(lambda: _run(10))
    large = peak_bytes(lambda: _run(40))
    # Measured: 0.42 MB and 1.43 MB (3.4x); keeping each request's whole body gave 4.7x,
    # and the gap widens with the turns (8.5x at 100 against 25 turns).
    assert large < 4 * small, (small, large)
