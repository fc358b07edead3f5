"""What a run of a framework-style agent says: a budget the agent was never told is not
held against it, and an undeclared tool's hint fits a tool without side effects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness._cli import main

ROOT = Path(__file__).resolve().parents[2]
BUDGET_SPENT = ROOT / "scenarios/crash/budget-spent-at-a-crash.yaml"

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


def cases(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]


def test_a_plain_agent_is_not_judged_against_a_budget_it_was_never_told(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The example agent gives up after its SDK's own retries (infra_paused); the scenario's
    # budget of four attempts, which would end it budget_limited, was never given to it.
    code = main(["run", str(BUDGET_SPENT), "--agent", "examples.openai_agent:main",
                 "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().out
    [case] = cases(tmp_path)
    verdicts = {v["invariant"]: v for v in case["verdicts"]}  # type: ignore[attr-defined]
    assert (verdicts["I4"]["status"], verdicts["I9"]["status"]) == ("unknown", "unknown")
    assert verdicts["I4"]["message"].endswith(
        "a plain main(prompt) agent is not told the run's budget or deadline")


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
