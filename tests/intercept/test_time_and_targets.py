"""The agent's clocks follow the world's; the functions a scenario names become counting tools."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from fakes import VirtualClock
from harness import AgentEntryError
from harness.intercept import VIRTUAL_EPOCH, Target, replaced_targets, stand_in, virtual_time
from harness.intercept._time import virtual_event_loops

from .conftest import AgentPackages


def test_every_clock_of_the_time_module_reads_the_virtual_one() -> None:
    clock = VirtualClock(start=12.5)
    with virtual_time(clock):
        time.sleep(30)
        readings = (time.monotonic(), time.perf_counter(), time.time() - VIRTUAL_EPOCH,
                    time.monotonic_ns())
    assert readings == (42.5, 42.5, 42.5, 42_500_000_000)
    assert clock.now() == 42.5
    assert time.monotonic() != 42.5  # restored


def test_a_negative_sleep_is_refused_as_the_real_one_refuses_it() -> None:
    with virtual_time(VirtualClock()), pytest.raises(ValueError, match="non-negative"):
        time.sleep(-1)


def test_a_loop_the_agent_starts_itself_runs_on_the_same_clock() -> None:
    clock = VirtualClock()

    async def wait() -> float:
        await asyncio.sleep(600)
        return time.monotonic()

    with virtual_time(clock), virtual_event_loops(clock):
        assert asyncio.run(wait()) == 600.0
    assert clock.now() == 600.0


def _recorder() -> tuple[list[tuple[str, dict[str, Any]]], Any, Any]:
    calls: list[tuple[str, dict[str, Any]]] = []

    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        calls.append((tool, arguments))
        return {"sent": True}

    def call_blocking(tool: str, arguments: dict[str, Any]) -> Any:
        calls.append((tool, arguments))
        return {"sent": True}

    return calls, call, call_blocking


def test_a_stand_in_keeps_the_shape_and_names_the_arguments() -> None:
    calls, call, call_blocking = _recorder()

    def send_mail(to: str, body: str, *, cc: str = "", **headers: str) -> dict[str, Any]:
        raise AssertionError("never called")

    async def send_async(to: str) -> dict[str, Any]:
        raise AssertionError("never called")

    blocking = stand_in("mail", send_mail, call, call_blocking)
    assert blocking("a@b", "hi", priority="high") == {"sent": True}
    assert blocking.__name__ == "send_mail"
    assert asyncio.run(stand_in("mail", send_async, call, call_blocking)("c@d")) == {"sent": True}
    assert calls == [("mail", {"to": "a@b", "body": "hi", "priority": "high"}),
                     ("mail", {"to": "c@d"})]


def test_a_call_the_real_function_would_refuse_is_refused_and_counts_nothing() -> None:
    calls, call, call_blocking = _recorder()

    def send_mail(to: str, subject: str, body: str) -> dict[str, Any]:
        raise AssertionError("never called")

    blocking = stand_in("mail", send_mail, call, call_blocking)
    with pytest.raises(TypeError, match="send_mail\\(\\) missing a required argument: 'subject'"):
        blocking(to="a@b", body="hi")  # a framework passing what the model gave, cut
    with pytest.raises(TypeError, match="too many positional arguments"):
        blocking("a", "b", "c", "d")
    assert calls == []


def test_targets_are_replaced_for_the_duration_then_restored(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"tools": "def send_mail(to):\n    return 'real'\n"})
    calls, call, call_blocking = _recorder()
    module = __import__(f"{package}.tools", fromlist=["send_mail"])

    with replaced_targets((Target("mail", f"{package}.tools:send_mail"),), call, call_blocking):
        assert module.send_mail("x@y") == {"sent": True}
    assert module.send_mail("x@y") == "real"
    assert calls == [("mail", {"to": "x@y"})]


@pytest.mark.parametrize(("spec", "message"), [
    ("no_such_module_at_all:send", r"^tool 'mail': target 'no_such_module_at_all:send': cannot "
                                   r"import 'no_such_module_at_all' \(ModuleNotFoundError: "
                                   r"No module named "),
    ("json:no_such_function", r"^tool 'mail': target 'json:no_such_function': 'json' has no "
                              r"function 'no_such_function'$"),
])
def test_a_target_that_cannot_be_found_says_which_tool_and_why(spec: str, message: str) -> None:
    _, call, call_blocking = _recorder()
    with pytest.raises(AgentEntryError, match=message), \
            replaced_targets((Target("mail", spec),), call, call_blocking):
        pass
