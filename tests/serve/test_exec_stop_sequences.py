"""I8 and the stop sequences of an agent run as a process (``harness run --exec``).

The API ends an answer before a stop sequence and leaves it out; an agent may put it
back on the text it keeps (smolagents' ``CodeAgent`` closes its code with the
``<end_code>`` it stopped at), which is still that answer's text. An agent process's
trace holds the stop sequences its requests asked for, as an agent's in the harness's
worker does, so I8 reads the text so: a process that meets a stream broken off after
some text, asks again and keeps the retry's whole text with the stop sequence put back
passes; one that keeps the broken attempt's text joined to the retry's still fails.

The agent is ``tests/serve/stop_agent.py`` (httpx, streamed, no SDK).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from harness.checks import Verdict
from harness.runner import Case, CaseResult
from harness.scenario import load_scenario
from harness.serve._exec import run_exec_case

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

AGENT = f"{sys.executable} {Path(__file__).with_name('stop_agent.py')}"
CODE = "Thought: I add the two numbers.\nCode:\n```py\nprint(2 + 2)\n```"

# Turn 1's first stream is reset after its third event: some of the answer's text, not all
# (a JSON string is a YAML one).
SCENARIO = f"""\
name: stop-put-back
dialect: openai
seed: 7
tools:
  mail: {{kind: send}}
model:
  - turn: 1
    text: {json.dumps(CODE)}
  - turn: 2
    text: "The sum is 4."
faults:
  - {{at: {{turn: 1, attempt: 1}}, kind: connection_reset, after_events: 3}}
expect:
  stop_state: complete
"""


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> CaseResult:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a failing case keeps its folder
    source = tmp_path / "stop-put-back.yaml"
    source.write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(source)
    return run_exec_case(Case(scenario.name, source, scenario.seed), scenario,
                         " ".join([AGENT, *flags]), time_scale=0.01, timeout=60)


def i8(result: CaseResult) -> Verdict:
    return next(v for v in result.verdicts if v.invariant == "I8")


def test_a_process_that_puts_the_stop_sequence_back_on_the_retrys_text_passes_i8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(tmp_path, monkeypatch)
    assert result.trace is not None
    committed = [m.text for m in result.trace.outcome.transcript if m.role == "assistant"] \
        if result.trace.outcome is not None else []
    assert committed == [CODE + "<end_code>"]  # the stop sequence is on the text it kept
    assert result.trace.extra.stop_sequences == ("<end_code>",)
    assert [(r.attempt, r.complete) for r in result.trace.requests if r.turn == 1] == \
        [(1, False), (2, True)]  # the first stream broke off; the retry was whole
    assert (i8(result).status, i8(result).message) == \
        ("pass", "1 broken attempt(s); no committed message joins them")
    assert result.passed, [v for v in result.verdicts if v.status == "fail"]


def test_a_process_that_joins_two_attempts_text_still_fails_i8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run(tmp_path, monkeypatch, "--join")
    assert result.trace is not None
    assert result.trace.extra.stop_sequences == ("<end_code>",)
    verdict = i8(result)
    assert (verdict.status, verdict.message) == \
        ("fail", "a committed message is not the text of one attempt")
    assert "(turn 1) matches no complete answer" in verdict.evidence[0]
