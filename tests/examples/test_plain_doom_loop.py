"""retry:doom-loop for an unchanged plain agent: judged from the requests it sent, so an
agent on the official SDK is held to it too (seed 002 §19.1, DoomLoop: 换法重采样).
The careful example takes a loop cut at the output limit as its answer; a variant of it
(careful_variants.py) asks again at another temperature."""

from __future__ import annotations

from pathlib import Path

import pytest
from careful_variants import run_scenario_text, write_variant

from harness.intercept import PlainEntry
from harness.runner import CaseResult

# The model loops before its first call; the second answer is the call it meant.
SCENARIO = """\
name: plain-doom-loop
description: The model says one sentence to its output limit before it writes the note.
dialect: openai
seed: 64
model:
  - turn: 1
    calls: [{tool: append_note, args: {text: "release 7 approved"}}]
  - turn: 2
    text: "The note is written."
tools:
  append_note: {kind: append}
  send_mail: {kind: send}
  read_outbox: {kind: inspect}
faults:
  - {at: {turn: 1, attempt: 1}, kind: doom_loop, phrase: "Let me think about the note."}
expect:
  stop_state: complete
  side_effects: {append_note: 1}
"""


def run(entry: PlainEntry, root: Path) -> CaseResult:
    return run_scenario_text(entry, root, SCENARIO)


def careful() -> PlainEntry:
    return PlainEntry("examples.openai_careful:main").with_tool_map(tuple(
        (tool, f"examples.openai_agent.tools:{tool}")
        for tool in ("send_mail", "append_note", "read_outbox")))


def test_the_careful_example_takes_the_loop_as_its_answer(tmp_path: Path) -> None:
    result = run(careful(), tmp_path)
    verdicts = {v.invariant: v for v in result.verdicts}
    assert verdicts["retry:doom-loop"].status == "fail", verdicts["retry:doom-loop"]
    assert verdicts["retry:doom-loop"].message.startswith("the run's final answer is the loop")
    # The note the model meant to write never was.
    assert "side_effects" in {v.invariant for v in result.failed_verdicts}


@pytest.mark.parametrize("variant", ["resamples-a-loop"])
def test_an_agent_that_resamples_a_loop_passes(tmp_path: Path, variant: str) -> None:
    result = run(write_variant(variant, tmp_path), tmp_path)
    verdicts = {v.invariant: v for v in result.verdicts}
    assert verdicts["retry:doom-loop"].status == "pass", verdicts["retry:doom-loop"]
    assert result.status == "pass", result.failed_verdicts
    assert result.trace is not None
    sampled = result.trace.extra.sampled_requests
    assert sampled is not None
    assert [s.sampling for s in sampled[:2]] == [(), ("temperature=0.8",)]
