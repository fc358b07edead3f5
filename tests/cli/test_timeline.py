"""A failure shows its timeline: per attempt, virtual time, status, bytes, fault, agent retry."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import runner
from harness._report_text import render_failure
from harness.intercept import PlainEntry
from harness.scenario import Scenario, load_scenario
from harness.trace import request_turn

SCENARIO = """\
name: stall-timeline
dialect: openai
model:
  - turn: 1
    text: "Hi."
faults:
  - {at: {turn: 1, attempt: 1}, kind: stall, after_events: 2, seconds: 120}
  - {at: {turn: 1, attempt: 2}, kind: http_error, status: 429, retry_after: 3}
expect:
  stop_state: blocked
"""


def test_a_failure_shows_which_fault_hit_which_attempt(tmp_path: Path) -> None:
    path = tmp_path / "stall.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(path)
    case = next(iter(runner.plan_cases(scenario, path)))
    text = render_failure(runner.run_case(case, scenario=scenario), scenario)
    start = text.index("timeline (virtual seconds; one line per request attempt)")
    assert text[start:].splitlines()[1:4] == [
        "      0.000s  run 1  turn 1 attempt 1  status 200  543/1229 bytes  partial  "
        "fault: stall",
        "     31.623s  run 1  turn 1 attempt 2  status 429  140/140 bytes  http_error  "
        "fault: http_error  agent: a transport retry",
        "     34.623s  run 1  turn 1 attempt 3  status 200  1229/1229 bytes  complete  "
        "fault: none  agent: a request retry",
    ]


# An agent that forgets to answer its tool call: the provider refuses its next request.
FORGETFUL_AGENT = '''
import os

import httpx


def main(prompt: str) -> str:
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    messages = [{"role": "user", "content": prompt}]
    tools = [{"type": "function", "function": {"name": "mail", "parameters": {}}}]
    first = httpx.post(url, timeout=60, json={"model": "m", "messages": messages,
                                              "tools": tools}).json()
    messages.append(first["choices"][0]["message"])  # its tool call, never answered
    second = httpx.post(url, timeout=60, json={"model": "m", "messages": messages,
                                               "tools": tools})
    return f"gave up ({second.status_code})"
'''

TOOL_CALL = """\
name: forgotten-call
dialect: openai
tools:
  mail: {kind: send}
model:
  - turn: 1
    calls: [{tool: mail, args: {to: "cfo@example.com"}}]
  - turn: 2
    text: "Sent."
expect:
  stop_state: complete
"""


def run_forgotten_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
                       ) -> tuple[Scenario, runner.CaseResult]:
    """``agent`` (a module's source) run on the scenario of a call it leaves unanswered."""
    (tmp_path / "forgetful_agent.py").write_text(agent, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "forgotten.yaml"
    path.write_text(TOOL_CALL, encoding="utf-8")
    scenario = load_scenario(path)
    entry = "forgetful_agent:main"
    case = runner.Case(scenario.name, path, scenario.seed, agent=entry)
    return scenario, runner.run_case(case, scenario, PlainEntry(entry))


def test_a_request_refused_for_an_unanswered_call_is_named_by_its_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario, result = run_forgotten_call(tmp_path, monkeypatch, FORGETFUL_AGENT)
    assert result.trace is not None
    assert result.trace.extra.final_answer == "gave up (400)"

    text = render_failure(result, scenario)
    start = text.index("timeline (virtual seconds; one line per request attempt)")
    lines = text[start:].splitlines()[1:3]
    assert "turn 1 attempt 1  status 200" in lines[0]
    # The refused request was the agent's try at turn 2, never "turn 0 attempt 0".
    assert "turn 2 attempt 1 (refused before the model, not counted)  status 400" in lines[1]


def test_a_check_names_a_refused_request_by_its_turn_as_the_timeline_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The forgetful agent, sending its refused request a second time: S5:4xx fails on it.
    agent = FORGETFUL_AGENT.replace(
        "    return f\"gave up", "    second = httpx.post(url, timeout=60, json={\"model\": "
        "\"m\", \"messages\": messages, \"tools\": tools})\n    return f\"gave up")
    _, result = run_forgotten_call(tmp_path, monkeypatch, agent)
    [verdict] = [v for v in result.verdicts if v.invariant == "S5:4xx"]
    assert verdict.status == "fail"
    refused = "turn 2 attempt 1 (refused before the model, not counted)"
    assert verdict.message == (f"request #3 ({refused}, incarnation 1) retried "
                               f"request #2 ({refused}, incarnation 1), which was answered 400")
    assert "turn 0" not in " ".join(verdict.evidence)
    assert result.trace is not None
    first, second = result.trace.requests[:2]
    assert [request_turn(result.trace, r, attempt=False) for r in (first, second)] == \
        ["turn 1", "turn 2 (refused before the model)"]
