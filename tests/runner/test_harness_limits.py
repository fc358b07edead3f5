"""A case past a harness limit is one failed case with a ``harness_limit`` verdict, never a crash.

The limits (``fakes.MAX_DISK_BYTES`` written to the crash disk, ``fakes.MAX_REQUESTS``
model requests, which also caps the turns: each turn is at least one request) stop a
runaway agent long before it eats the machine. Under ``harness run`` the worker reports
it (tests/cli/test_containment.py); here the library and the pytest plugin's path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import (
    FakeProvider,
    HarnessLimitExceeded,
    IncomingRequest,
    ScriptedResponse,
    ScriptedUsage,
    Text,
)
from fakes._crashdisk import MAX_DISK_BYTES
from harness.agent import ReferenceAgent
from harness.ports import Agent, AgentPorts
from harness.runner import plan_cases, run_case, run_case_twice
from harness.scenario import Scenario

SCENARIO = Scenario.model_validate({
    "name": "hello", "dialect": "openai", "seed": 1,
    "model": [{"turn": 1, "text": "Hello."}], "expect": {"stop_state": "complete"}})


class _DiskHog(ReferenceAgent):
    """Writes a megabyte at a time to one file, for ever: a log nobody rotates."""

    def __init__(self, ports: AgentPorts) -> None:
        super().__init__(ports)
        self.disk = ports.disk

    async def run(self, task: object) -> object:  # type: ignore[override]
        with self.disk.open_append("/hog.bin") as out:
            while True:
                out.write(b"x" * (1 << 20))


def disk_hog(ports: AgentPorts) -> Agent:
    return _DiskHog(ports)


@pytest.mark.parametrize("run", [run_case, run_case_twice])
def test_an_agent_that_fills_the_disk_gets_a_harness_limit_verdict(run) -> None:  # type: ignore[no-untyped-def]
    case = next(c for c in plan_cases(SCENARIO, Path("hello.yaml"), disk_hog) if not c.crash)
    result = run(case, SCENARIO, disk_hog)
    reason = (f"the agent wrote {MAX_DISK_BYTES + (1 << 20):,} bytes to the "
              f"crash disk, more than the {MAX_DISK_BYTES:,} a case may write")
    assert result.status == "fail"
    assert result.error is None  # the agent's doing, not the harness's
    assert result.stop_reason == "stopped at a harness limit"
    assert [(v.invariant, v.status, v.message, v.evidence) for v in result.verdicts] == [
        ("harness_limit", "fail", reason, ("limit: disk_bytes",))]
    assert "bound what one run writes" in result.verdicts[0].advice


def test_the_request_cap_also_caps_the_turns() -> None:
    reply = ScriptedResponse((Text("again"),), "stop", ScriptedUsage(10, 2))
    provider = FakeProvider("openai", reply, max_requests=3)
    for turn in (1, 2, 3):
        provider.plan(_request(provider, turn))
    with pytest.raises(HarnessLimitExceeded, match="more than 3 requests") as stopped:
        provider.plan(_request(provider, 4))
    assert stopped.value.limit == "requests"
    assert len(provider.requests) == 3


def _request(provider: FakeProvider, turn: int) -> IncomingRequest:
    messages: list[dict[str, str]] = [{"role": "user", "content": "go"}]
    messages += [{"role": "assistant", "content": "again"}] * (turn - 1)
    body = json.dumps({"model": "m", "stream": True, "messages": messages}).encode()
    return IncomingRequest("POST", provider.endpoint, {}, body)
