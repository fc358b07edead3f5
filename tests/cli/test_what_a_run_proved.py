"""What a run of a framework-style agent is told: an undeclared tool's hint fits a tool without
side effects."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main

CRASH_EVERYWHERE = """\
name: crash-everywhere
dialect: openai
seed: 3
model:
  - turn: 1
    text: Done.
crash:
  points: all
expect:
  stop_state: complete
"""


def test_the_hint_for_an_undeclared_tool_fits_one_without_side_effects(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # smolagents ends a run with a call of final_answer: declared as a send, it would count
    # as a side effect.
    scenario = tmp_path / "final.yaml"
    scenario.write_text(CRASH_EVERYWHERE.replace("    text: Done.\n", (
        "    calls: [{tool: final_answer, args: {answer: Done.}}]\n")), encoding="utf-8")
    assert main(["validate", str(scenario)]) == 1
    said = capsys.readouterr()
    assert ("Declare it under 'tools': 'final_answer: {kind: read}' for a tool with no side "
            "effect (a final answer, a lookup; 'inspect' for one that looks at the real state "
            "after a crash), or a side-effect kind ('send', 'append', 'put') only when each "
            "run of it changes the world and the ledger should count it") in said.out + said.err
    assert "{kind: send}" not in said.out + said.err
