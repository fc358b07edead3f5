"""The official SDKs in another process see from ``harness serve`` what they see in-process.

Each case is one scenario with one fault on the first attempt. One server plays
them all, and ``sdk_probe.py``, a separate Python process, probes each of them
against it (sync and async clients, each on a fresh world); each case compares
what that process saw of its scenario with the same SDK inside a case, as an
unchanged agent runs there (intercepted transport, virtual time). One process for
all cases rather than one each: starting Python and importing both SDKs costs far
more than a probe, and a reset gives every probe a fresh world all the same.
Waits are scaled by 0.01 both for the server and the SDK's timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from harness.intercept import PROVIDER_ENVIRONMENT, intercepted_network, virtual_time
from harness.intercept._time import threads_the_clock_sees, virtual_event_loops
from harness.runner import World
from harness.scenario import Scenario, load_scenario
from harness.serve import ScaledClock, serving
from harness.serve._wire_time import wire_headers

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import sdk_probe  # noqa: E402

SCALE = 0.01
# The SDK's timeout, in scenario seconds: 3 real seconds at SCALE. A request of a loaded
# machine's probe process can wait for a CPU far longer than 0.3 s (a 30 s timeout scaled)
# and then reads as a timeout; only the stall, far longer, must meet it.
TIMEOUT = 300.0
REPLY = ("Je vérifie d'abord l'état — 日本語 ok. ", {"to": "ops@example.com", "body": "ÿ → ok"})
FAULTS: dict[str, list[dict[str, Any]]] = {
    "clean": [],
    "utf8_and_random_splits": [{"kind": "split_inside_utf8"},
                               {"kind": "random_splits", "count": 12}],
    "stall_past_the_timeout": [{"kind": "stall", "after_events": 3, "seconds": 3000}],
    "reset": [{"kind": "connection_reset", "after_events": 3}],
    "no_terminal_event": [{"kind": "no_terminal_event"}],
    "http_429_retry_after": [{"kind": "http_error", "status": 429, "retry_after": 7}],
    "error_in_stream": [{"kind": "error_in_stream", "after_events": 2}],
}


DIALECTS = ["openai", "anthropic"]


def scenario(folder: Path, dialect: str, fault: str) -> Scenario:
    listed = json.dumps([{"at": {"turn": 1, "attempt": 1}, **f} for f in FAULTS[fault]])
    text = f"""
name: served-{dialect}-{fault.replace("_", "-")}
dialect: {dialect}
seed: 5
tools: {{mail: {{kind: send}}}}
model:
  - turn: 1
    text: {json.dumps(REPLY[0])}
    calls: [{{tool: mail, args: {json.dumps(REPLY[1])}}}]
faults: {listed}
expect: {{stop_state: complete}}
"""
    path = folder / f"{dialect}-{fault}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


def _base_url(env: dict[str, str], dialect: str) -> str:
    return env["OPENAI_BASE_URL" if dialect == "openai" else "ANTHROPIC_BASE_URL"]


def in_process(loaded: Scenario, dialect: str, mode: str) -> dict[str, Any]:
    """The SDK inside a case, as an unchanged agent runs: intercepted, on virtual time."""
    world = World(loaded, seed=loaded.seed)
    with ExitStack() as stack:
        stack.enter_context(virtual_time(world.clock))
        stack.enter_context(virtual_event_loops(world.clock))
        stack.enter_context(threads_the_clock_sees())
        stack.enter_context(intercepted_network(world.route(1)))
        sdk = sdk_probe.client(dialect, mode, _base_url(PROVIDER_ENVIRONMENT, dialect), TIMEOUT)
        if mode == "sync":
            return sdk_probe.see_sync(dialect, sdk)
        return world.clock.run(sdk_probe.see_async(dialect, sdk))


class OverHttp:
    """Every case's scenario, and what the SDK in another process saw of each."""

    def __init__(self, folder: Path) -> None:
        self.scenarios = {(dialect, fault): scenario(folder, dialect, fault)
                          for dialect in DIALECTS for fault in FAULTS}
        with serving(list(self.scenarios.values()), time_scale=SCALE) as served:
            plan = {loaded.name: [dialect, _base_url(served.env, dialect)]
                    for (dialect, _), loaded in self.scenarios.items()}
            done = subprocess.run(
                [sys.executable, str(HERE / "sdk_probe.py"), "every", served.url,
                 str(TIMEOUT * SCALE)], input=json.dumps(plan),
                env={**os.environ, "HARNESS_TOKEN": served.token},
                capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        self.seen: dict[str, dict[str, Any]] = json.loads(done.stdout)


@pytest.fixture(scope="module")
def over_http(tmp_path_factory: pytest.TempPathFactory) -> OverHttp:
    """The SDK in a process of its own, sync then async, each on a fresh world."""
    return OverHttp(tmp_path_factory.mktemp("served"))


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_sdk_in_another_process_sees_what_it_sees_in_process(
        over_http: OverHttp, dialect: str, fault: str) -> None:
    loaded = over_http.scenarios[dialect, fault]
    expected = {mode: on_the_wire(in_process(loaded, dialect, mode))
                for mode in ("sync", "async")}
    assert over_http.seen[loaded.name] == expected


def on_the_wire(seen: dict[str, Any]) -> dict[str, Any]:
    """What the SDK sees over HTTP of what it saw in process: an asked wait in scaled time
    (``retry-after: 7`` is ``0.07`` at 0.01; harness.serve._wire_time)."""
    if seen.get("retry_after") is None:
        return seen
    [(_, sent)] = wire_headers([("retry-after", seen["retry_after"])], ScaledClock(SCALE))
    return {**seen, "retry_after": sent}


def test_the_faults_are_felt(tmp_path: Path) -> None:
    """The comparison above is not between two runs that both saw nothing."""
    seen = {fault: in_process(scenario(tmp_path, "openai", fault), "openai", "async")
            for fault in FAULTS}
    assert seen["clean"]["text"] == REPLY[0]
    assert seen["clean"]["error"] is None
    assert seen["utf8_and_random_splits"] == seen["clean"]
    assert seen["stall_past_the_timeout"]["error"] == "APITimeoutError"
    assert seen["reset"]["error"] == "APIConnectionError"
    assert seen["no_terminal_event"]["error"] is None
    assert seen["http_429_retry_after"][("error")] == "RateLimitError"
    assert seen["http_429_retry_after"]["retry_after"] == "7"
    assert seen["error_in_stream"]["error"] == "APIError"
