"""What a run of a framework-style agent says it proved: a scenario asking for crash cases
the agent gives none says so (and fails ``--strict``), a budget the agent was never told is
not held against it, and an undeclared tool's hint fits a tool without side effects."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness._cli import main

ROOT = Path(__file__).resolve().parents[2]
BUDGET_SPENT = ROOT / "scenarios/crash/budget-spent-at-a-crash.yaml"

# A plain agent with nothing on disk: a crash-free run reaches no persistence point.
STATELESS = '''
from openai import AsyncOpenAI


async def main(prompt: str) -> str:
    client = AsyncOpenAI(max_retries=0)
    stream = await client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": prompt}], stream=True)
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream
                    if chunk.choices])
'''

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


@pytest.fixture
def stateless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The stateless agent on the path, and the scenario that crashes it everywhere."""
    (tmp_path / "stateless_agent.py").write_text(STATELESS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = tmp_path / "crash-everywhere.yaml"
    scenario.write_text(CRASH_EVERYWHERE, encoding="utf-8")
    yield scenario
    sys.modules.pop("stateless_agent", None)


def cases(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]


def test_points_all_that_made_no_crash_case_says_so_and_fails_strict(
        stateless: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ["run", str(stateless), "--agent", "stateless_agent:main"]
    assert main([*run, "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    # The uncrashed case keeps its own verdict; the scenario's missing crash cases are told.
    [case] = cases(tmp_path / "out")
    assert (case["case_id"], case["passed"]) == ("crash-everywhere", True)
    assert ("UNKNOWN crash-everywhere: the agent reached no persistence point of its own (no "
            "file written, synced or committed) in its uncrashed run, so 'points: all' made no "
            "crash case: the run proves nothing of how it survives a crash") in said.err

    assert main([*run, "--strict", "--out", str(tmp_path / "strict")]) == 1
    said = capsys.readouterr()
    assert "harness run --strict: 1 thing(s) no case reached" in said.err
    assert "  crash-everywhere: the agent reached no persistence point of its own" in said.err


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
