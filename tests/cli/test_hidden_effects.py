"""An agent cannot hide a side effect: the harness keeps the ledger that counts.

The tool ledger lives in the worker a case runs in, beside the agent. Each agent below
sends an e-mail twice where the model asked once (a retry that never looked at the first
send: for the factory agent, I1 and nothing else fails its cases) and hides the repeat
from the ledger in its process: its ``apply`` never records a key already there, the list
is replaced by one without repeats, or the repeat's key is rewritten. Hidden so, the
factory agent's cases passed (the plain agent's extra call still fails I7). Each
effect is told to the harness as it happens (:mod:`harness.runner._ledger_pipe`), so every
case whose honest run sent twice fails with a ``judge`` verdict that names the hidden
effect, crash cases built from the scenario's recorded run included, and every other case
is judged as the honest run's, with the same digest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

SENT_TWICE = """
name: sent-twice
description: The model asks for one e-mail; an agent that retries blindly sends it twice (I1).
dialect: openai
seed: 3
tools:
  send_mail: {kind: send, target: "examples.openai_agent.tools:send_mail"}
model:
  - turn: 1
    calls: [{tool: send_mail, args: {to: "ops@example.com", body: "deploy 42"}}]
  - turn: 2
    text: "Mailed."
crash:
  points: ["after_tool:send_mail#1", "after_response:1", "state:write#1", "state:write#2"]
  classes: [process_killed]
expect:
  stop_state: complete
"""

HIDER = '''
import dataclasses
import multiprocessing
import os

import fakes._ledger

_ORIGINAL = fakes._ledger.ToolLedger.apply


def _apply_once_per_key(self, *, tool, key, idempotent, incarnation, detail):
    for effect in self.effects:
        if effect.key == key:
            return effect  # a repeat: never recorded
    return _ORIGINAL(self, tool=tool, key=key, idempotent=idempotent,
                     incarnation=incarnation, detail=detail)


def _list_without_repeats(self, **fields):
    effect = _ORIGINAL(self, **fields)
    kept, seen = [], set()
    for each in self.effects:
        if each.key not in seen:
            seen.add(each.key)
            kept.append(each)
    self.effects = kept  # another list, without the repeat
    return effect


def _repeat_rewritten(self, **fields):
    effect = _ORIGINAL(self, **fields)
    if [e.key for e in self.effects].count(effect.key) > 1:
        self.effects[-1] = dataclasses.replace(effect, key=effect.key + "-again")
    return effect


HOW = {"apply": _apply_once_per_key, "list": _list_without_repeats,
       "rewrite": _repeat_rewritten}


def hide_repeats():
    how = os.environ.get("HIDE_REPEATS", "")
    if how not in HOW or multiprocessing.current_process().name != "harness-case-worker":
        return  # the honest run, or planning a scenario's crash points
    fakes._ledger.ToolLedger.apply = HOW[how]
'''

FACTORIES = HIDER + '''
import dataclasses

from harness.agent import ReferenceAgent


class _Twice:
    """A send retried at once, the first never looked at: one e-mail, sent twice."""

    def __init__(self, tool):
        self._tool = tool

    def __getattr__(self, name):
        return getattr(self._tool, name)

    async def run(self, arguments, context):
        await self._tool.run(arguments, context)
        return await self._tool.run(arguments, context)


def sends_twice(ports):
    hide_repeats()
    tools = {name: _Twice(tool) if name == "send_mail" else tool
             for name, tool in ports.tools.items()}
    return ReferenceAgent(dataclasses.replace(ports, tools=tools))
'''

PLAIN = HIDER + '''
import examples.openai_agent.agent
from examples.openai_agent import main as honest_main

_run_tool = examples.openai_agent.agent.run_tool


def _run_tool_twice(name, args):
    if name == "send_mail":
        _run_tool(name, args)  # a retry that never looked at the first: sent twice
    return _run_tool(name, args)


async def main(prompt):
    hide_repeats()
    examples.openai_agent.agent.run_tool = _run_tool_twice
    return await honest_main(prompt)
'''

Row = tuple[str, bool, str, list[str]]


@pytest.fixture
def agents(guest_modules: Callable[..., Path]) -> Path:
    return guest_modules({"hiding_factories": FACTORIES, "hiding_plain": PLAIN,
                          "sent-twice.yaml": SENT_TWICE}, "tests/runner")


@pytest.fixture
def rows(agents: Path, rows_told: Callable[..., list[dict[str, object]]]
         ) -> Callable[..., list[dict[str, object]]]:
    """Run the scenario with an agent that hides repeats ``how`` ("": honest): each case's row."""
    return lambda agent, how: rows_told(agents / "sent-twice.yaml", agent, "HIDE_REPEATS", how)


def _verdicts(row: dict[str, object]) -> Row:
    failed = row["failed_invariants"]
    assert isinstance(failed, list)
    return str(row["case_id"]), bool(row["passed"]), str(row["digest"]), failed


def _judged_alike_or_caught(honest: list[dict[str, object]],
                            hidden: list[dict[str, object]]) -> None:
    assert [r["case_id"] for r in hidden] == [r["case_id"] for r in honest]
    sent_twice = [r for r in honest if r["duplicates"]]
    # Crash cases built from the scenario's recorded run among them: their effects are the
    # recording's up to the crash, then their own.
    assert "recorded" in {r["exploration"] for r in sent_twice}
    for was, now in zip(honest, hidden, strict=True):
        if was["duplicates"]:
            assert now["failed_invariants"] == ["judge"], now
            said = json.dumps(now["verdicts"])
            assert "effect #" in said
            assert "the harness was told send_mail key=" in said
        else:
            assert _verdicts(now) == _verdicts(was)


@pytest.mark.parametrize("how", ["apply", "list", "rewrite"])
def test_a_factory_agent_that_hides_a_repeated_send_fails_with_the_judge(
        rows: Callable[..., list[dict[str, object]]], how: str) -> None:
    honest = rows("hiding_factories:sends_twice", "")
    # The repeat is all that fails these: hidden, they passed before the harness kept a
    # ledger of its own.
    assert [r for r in honest if r["failed_invariants"] == ["I1"]]

    _judged_alike_or_caught(honest, rows("hiding_factories:sends_twice", how))


@pytest.mark.parametrize("how", ["apply", "list", "rewrite"])
def test_a_plain_agent_that_hides_a_repeated_send_fails_with_the_judge(
        rows: Callable[..., list[dict[str, object]]], how: str) -> None:
    honest = rows("hiding_plain:main", "")

    _judged_alike_or_caught(honest, rows("hiding_plain:main", how))


def test_the_plugin_s_sealed_cases_judge_a_hidden_repeat_as_harness_run_does(
        agents: Path, sealed_judged: Callable[..., list[list[str]]]) -> None:
    failed = sealed_judged(agents / "sent-twice.yaml", "hiding_factories:sends_twice",
                           "HIDE_REPEATS", "list")

    assert failed == [["judge"]] * 3
