"""The ``jobs`` and ``cancels`` blocks: valid files load, each mistake is located."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_scenario

VALID = """\
name: t
dialect: openai
jobs:
  build: {seconds: 20, output_lines: 4, retained_lines: 2}
cancels:
  - {at_seconds: 5, target: tool_call, tool: build, times: 2}
model:
  - turn: 1
    calls: [{tool: build, args: {}}]
  - turn: 2
    text: done
expect:
  stop_state: complete
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    return str(caught.value)


def test_a_job_is_a_tool_the_model_may_call_and_a_cancel_names_it(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, VALID))
    assert scenario.jobs["build"].spec().retained_lines == 2
    assert (scenario.cancels[0].target, scenario.cancels[0].times) == ("tool_call", 2)


def test_a_tool_call_cancel_without_a_tool_is_located(tmp_path: Path) -> None:
    text = VALID.replace("target: tool_call, tool: build, times: 2", "target: tool_call")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:6:\d+: .*a tool_call cancel names no tool", message), message
    assert "Add tool: NAME beside target: tool_call" in message


def test_a_session_cancel_naming_a_tool_is_located(tmp_path: Path) -> None:
    text = VALID.replace("target: tool_call", "target: session")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:6:\d+: .*a session cancel takes no tool", message), message


def test_a_cancel_of_an_unknown_job_suggests_the_close_one(tmp_path: Path) -> None:
    text = VALID.replace("target: tool_call, tool: build", "target: job, tool: biuld")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:6:\d+: .*names no declared job", message), message
    assert "Did you mean 'build'?" in message


def test_an_unknown_target_lists_the_targets(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, VALID.replace("target: tool_call", "target: call")))
    assert re.search(r"s\.yaml:6:\d+: ", message), message
    for target in ("attempt", "tool_call", "turn", "job", "goal", "session"):
        assert target in message


def test_a_job_that_vanishes_after_its_end_is_located(tmp_path: Path) -> None:
    text = VALID.replace("retained_lines: 2}", "retained_lines: 2, vanishes_at_seconds: 30}")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:4:\d+: .*the job ends before it vanishes", message), message


def test_a_job_named_like_a_tool_is_located(tmp_path: Path) -> None:
    text = VALID.replace("jobs:\n", "tools:\n  build: {kind: read}\njobs:\n")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:6:\d+: .*a job has the name of a tool", message), message


def test_a_call_of_an_undeclared_job_is_reported(tmp_path: Path) -> None:
    text = VALID.replace("calls: [{tool: build", "calls: [{tool: buidl")
    message = error_of(write(tmp_path, text))
    assert "tool is not declared" in message
    assert "'buidl'" in message


def test_a_goal_cancel_without_a_goal_is_located(tmp_path: Path) -> None:
    text = VALID.replace("target: tool_call, tool: build, times: 2", "target: goal")
    message = error_of(write(tmp_path, text))
    assert re.search(r"s\.yaml:6:\d+: .*a goal cancel, and no goal is declared", message), \
        message
    assert "Declare the goal, or cancel another target" in message


def test_a_goal_cancel_beside_a_goal_loads() -> None:
    scenario = load_scenario(Path("scenarios/cancel/cancel-the-goal.yaml"))
    assert [(c.target, c.times) for c in scenario.cancels] == [("goal", 2)]
