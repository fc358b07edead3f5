"""Scenario files for the command-line tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

HELLO = """\
name: hello
dialect: anthropic
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""

CRASHY = """\
name: crashy
dialect: openai
tools:
  notes: {kind: append}
model:
  - turn: 1
    calls: [{tool: notes, args: {line: hi}}]
  - turn: 2
    text: Done.
crash:
  points: [journal:fsync#1, journal:fsync#2]
  classes: [unsynced_lost]
expect:
  stop_state: complete
"""

# The reference agent completes; this scenario wrongly expects it to block.
EXPECTS_BLOCKED = HELLO.replace("name: hello", "name: expects-blocked").replace(
    "stop_state: complete", "stop_state: blocked")

MALFORMED = "name: broken\ndialect: [openai\n"

SCENARIOS = {"hello": HELLO, "crashy": CRASHY, "expects-blocked": EXPECTS_BLOCKED,
             "malformed": MALFORMED}


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """``write(name, folder=".")`` puts scenario ``name`` in ``tmp_path/folder/name.yaml``."""

    def write(name: str, folder: str = ".") -> Path:
        path = tmp_path / folder / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SCENARIOS[name])
        return path

    return write
