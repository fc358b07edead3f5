"""A scenario marks a tool's arguments secret; a mark that marks nothing is an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_scenario

SCENARIO = """\
name: login
dialect: openai
tools:
  login:
    kind: send
    secret: {marks}
model:
  - turn: 1
    calls: [{{tool: login, args: {{user: ann, pin: {pin}, api_key: "sk-live-1"}}}}]
  - turn: 2
    text: done
expect:
  stop_state: complete
"""


def write(tmp_path: Path, marks: str = "[pin]", pin: str = '"4711-x"') -> Path:
    path = tmp_path / "login.yaml"
    path.write_text(SCENARIO.format(marks=marks, pin=pin), encoding="utf-8")
    return path


def test_marked_and_secret_looking_values_are_the_scenarios_secrets(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path))
    assert scenario.tools["login"].secret == ["pin"]
    assert scenario.secret_values() == {"4711-x": "login.pin", "sk-live-1": "login.api_key"}


def test_a_scenario_without_marks_has_only_its_secret_looking_values(tmp_path: Path) -> None:
    assert load_scenario(write(tmp_path, marks="[]")).secret_values() == {
        "sk-live-1": "login.api_key"}


def test_a_mark_no_call_passes_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, marks="[pni]")
    expected = (f"{path}:6:14: tools.login.secret[0]: no call of the script passes this "
                "argument: got 'pni'; expected an argument a call of 'login' passes: one of "
                "'api_key', 'pin', 'user'. Did you mean 'pin'?")
    with pytest.raises(ScenarioError, match=f"^{re.escape(expected)}$"):
        load_scenario(path)


@pytest.mark.parametrize("pin", ['"12"', "4711"], ids=["short text", "a number"])
def test_a_marked_value_must_be_long_enough_to_look_for(tmp_path: Path, pin: str) -> None:
    path = write(tmp_path, pin=pin)
    with pytest.raises(ScenarioError, match=r":9:\d+: model\[0\]\.calls\[0\]\.args\.pin: "
                       "a secret too short to look for"):
        load_scenario(path)
