"""A two-tool scenario to fuzz, and a way to run the command line on it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.scenario import Scenario, parse_scenario

# Mail the CFO; after a crash, inspect the outbox when the send's outcome is unknown, and
# send again only when the agent says the send never started.
TWO_TOOLS = """\
name: mail-once
dialect: openai
seed: 7
tools:
  mail: {kind: send}
  outbox: {kind: inspect}
model:
  - turn: 1
    calls: [{tool: mail, args: {to: "cfo@example.com", body: "invoice 7"}}]
  - turn: 2
    when: {tool: mail, outcome: unknown_after_restart}
    calls: [{tool: outbox, args: {}}]
  - turn: 2
    when: {tool: mail, outcome: interrupted_before_execution}
    calls: [{tool: mail, args: {to: "cfo@example.com", body: "invoice 7"}}]
  - turn: 2
    text: "Sent."
  - turn: 3
    text: "The outbox shows the mail; not sending it again."
crash:
  points: [after_tool:mail#1]
expect:
  stop_state: complete
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "mail-once.yaml"
    path.write_text(TWO_TOOLS, encoding="utf-8")
    return path


@pytest.fixture
def fuzz(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``fuzz(*args)`` runs ``harness fuzz ARGS``: exit code, stdout, stderr."""
    from harness._cli import main

    def run(*args: object) -> tuple[int, str, str]:
        code = main(["fuzz", *map(str, args)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def scenario_text() -> str:
    return TWO_TOOLS


@pytest.fixture
def base() -> Scenario:
    return parse_scenario(TWO_TOOLS.encode(), "mail-once.yaml")
