"""A script may read the world's ledger: send again only when the send never happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ScenarioError
from harness.runner import ScriptedModel
from harness.runner._model import ToolResult
from harness.scenario import Scenario, load_scenario

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios/crash/inspect-then-send-once.yaml"


def script() -> Scenario:
    return Scenario(
        name="look-then-send", dialect="openai",
        tools={"mail": {"kind": "send"}, "outbox": {"kind": "inspect"}},
        model=[{"turn": 1, "calls": [{"tool": "outbox"}]},
               {"turn": 2, "when": {"tool": "outbox", "applied": {"mail": 0}},
                "calls": [{"tool": "mail", "args": {"to": "a@b"}}]},
               {"turn": 2, "text": "Already sent."},
               {"turn": 3, "text": "Sent."}],
        expect={"stop_state": "complete"})


def test_a_reply_waits_for_the_ledger_to_hold_exactly_the_counts() -> None:
    model = ScriptedModel(script())
    looked = [ToolResult("outbox", "ok")]
    assert model.choose(2, looked, {}).calls[0].tool == "mail"  # nothing sent yet
    assert model.choose(2, looked, {"mail": 1}).text == "Already sent."
    # A model that cannot see the world never takes the branch.
    assert model.choose(2, looked, None).text == "Already sent."


def test_a_tool_the_condition_counts_must_be_declared(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SHIPPED.read_text().replace("applied: {mail: 0}", "applied: {mial: 0}"))
    with pytest.raises(ScenarioError,
                       match=r"model\[\d\]\.when\.applied: tool is not declared: got 'mial'"):
        load_scenario(path)
