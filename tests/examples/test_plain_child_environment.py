"""env:children for an unchanged plain agent: the environment it hands a tool's child
process is seen through the ``env`` argument of the tool function a target stands in for
(seed 000 §5). Variants of the careful example (careful_variants.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from careful_variants import run_scenario_text, write_variant

from harness.intercept import PlainEntry
from harness.runner import CaseResult

# The note tool starts a child process; the agent's function for it takes an env.
SCENARIO = """\
name: plain-child-environment
description: The note tool starts a child process with what the agent hands it.
dialect: openai
seed: 63
tools:
  append_note: {kind: append, behaviour: {kind: subprocess, argv: ["true"]}}
  send_mail: {kind: send}
  read_outbox: {kind: inspect}
model:
  - turn: 1
    calls: [{tool: append_note, args: {text: "deploy 42 approved"}}]
  - turn: 2
    text: "Noted."
expect:
  stop_state: complete
  side_effects: {append_note: 1}
"""


def run(entry: PlainEntry, root: Path) -> CaseResult:
    return run_scenario_text(entry, root, SCENARIO)


@pytest.mark.parametrize(("variant", "status"), [
    ("environ-to-children", "fail"),
    ("clean-env-to-children", "pass"),
    ("awaited-tools", "unknown"),
])
def test_what_a_plain_agent_hands_its_child(tmp_path: Path, variant: str, status: str) -> None:
    result = run(write_variant(variant, tmp_path), tmp_path)
    verdicts = {v.invariant: v for v in result.verdicts}
    assert verdicts["env:children"].status == status, verdicts["env:children"]
    # Everything else of the run is the careful agent's: the note written once, complete.
    assert [v for v in result.failed_verdicts if v.invariant != "env:children"] == []
    assert result.trace is not None
    # The env argument is the child's, not the call's: no value of it reaches the trace.
    assert all("env" not in i.arguments for i in result.trace.invocations)
    assert "sk-harness-fake-key" not in result.trace.canonical_json()
