"""``points`` and ``fuzz`` refuse to build on a run the agent broke off by raising.

Both record the agent's crash-free run first. When the agent raises there, otherwise than
the scenario expects, the points after the raise are never reached: ``points`` used to
print the short list and exit 0, and ``fuzz`` searched schedules that all ended at the
same raise and reported "no invariant violated". Now both say what the agent raised and
exit 2. A raise the scenario expects (an authentication error the run stops ``blocked``
on) is how a plain agent stops, and changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main

HELLO = """\
name: hello
dialect: openai
crash:
  points: all
  classes: [unsynced_lost]
tools:
  notes: {kind: append}
model:
  - turn: 1
    calls: [{tool: notes, args: {text: "a line"}}]
  - turn: 2
    text: Noted.
expect:
  stop_state: complete
"""
REFUSED = """\
name: refused
dialect: openai
model:
  - turn: 1
    text: Hello.
faults:
  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 401}
expect:
  stop_state: blocked
"""
# It saves its state, asks the model once, then breaks on its own code.
BREAKS_AFTER_ITS_FIRST_ANSWER = """\
import os

import openai


def main(prompt):
    with open("state.json", "w") as state:
        state.write("{}")
        state.flush()
        os.fsync(state.fileno())
    openai.OpenAI().chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}])
    raise KeyError("tool_calls")
"""
# It lets the SDK's error out, as most plain agents do.
LETS_THE_SDK_ERROR_OUT = """\
import openai


def main(prompt):
    reply = openai.OpenAI().chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the current folder and on the path, with the scenarios."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hello.yaml").write_text(HELLO)
    (tmp_path / "refused.yaml").write_text(REFUSED)
    return tmp_path


def _agent(folder: Path, module: str, source: str) -> str:
    (folder / f"{module}.py").write_text(source)
    return f"{module}:main"


def test_points_lists_what_was_reached_and_exits_2_naming_the_raise(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = _agent(folder, "breaks_points", BREAKS_AFTER_ITS_FIRST_ANSWER)

    code = main(["points", "hello.yaml", "--agent", agent])

    said = capsys.readouterr()
    assert code == 2, said.err
    # The points before the raise are listed: they are real, and they show where it stopped.
    assert [line.split()[0] for line in said.out.splitlines()] == [
        "state:create#1", "state:write#1", "state:fsync#1",
        "before_request:1", "mid_stream:1", "after_response:1"]
    assert said.err == (
        "harness points: error: the agent raised KeyError: 'tool_calls', so the list above "
        "stops there (the scenario expects 'complete'); see why with "
        f"'harness run hello.yaml --agent {agent}'\n")


def test_fuzz_refuses_an_agent_that_breaks_without_any_fault(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = _agent(folder, "breaks_fuzz", BREAKS_AFTER_ITS_FIRST_ANSWER)

    code = main(["fuzz", "hello.yaml", "--budget", "3", "--out", "fuzz", "--agent", agent])

    said = capsys.readouterr()
    assert code == 2, said.err
    assert "no invariant violated" not in said.out
    assert said.err.startswith(
        "harness: error: the agent raised KeyError: 'tool_calls' in its run without faults "
        "or crashes (the scenario expects 'complete'), so no schedule could prove anything")


def test_an_expected_raise_is_how_a_plain_agent_stops(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = _agent(folder, "lets_out", LETS_THE_SDK_ERROR_OUT)

    code = main(["points", "refused.yaml", "--agent", agent])

    said = capsys.readouterr()
    assert code == 0, said.err
    assert said.err == ""
    assert "before_request:1" in said.out
