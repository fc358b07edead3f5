"""A throwaway pytest project per test, with scenario files and, when asked, a broken agent."""

from __future__ import annotations

import textwrap

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
  points: all
  classes: [unsynced_lost]
expect:
  stop_state: complete
"""

BAD = """\
name: bad
dialect: anthropic
seed: seven
model: [{turn: 1, text: hi}]
expect: {stop_state: complete}
"""

# An agent that stops at once as `failed`: invariant I4 must catch it.
GIVES_UP = """
from harness.ports import AgentOutcome, RecoveryReport


class GivesUp:
    def __init__(self, ports):
        self.ports = ports

    async def recover(self):
        return RecoveryReport()

    async def run(self, task):
        return AgentOutcome(stop_state="failed", reason="gave up", transcript=(),
                            billed_usage=None, context_tokens=None, turns=0)


def pytest_harness_agent_factory(config, scenario):
    return GivesUp
"""

# Loads, but names a crash point the recorded run never reaches: planning fails.
UNREACHED = CRASHY.replace("name: crashy", "name: unreached").replace(
    "points: all", "points: [journal:fsync#99]")

SCENARIOS = {"hello": HELLO, "crashy": CRASHY, "bad": BAD, "unreached": UNREACHED}


class Project:
    """A throwaway pytest project with an ini file and a ``scenarios/`` folder."""

    def __init__(self, pytester: pytest.Pytester, ini: str) -> None:
        self.pytester = pytester
        pytester.makeini(ini)
        pytester.mkdir("scenarios")
        pytester.makeconftest("")

    def add(self, *names: str, folder: str = "scenarios") -> None:
        """Write each named scenario of :data:`SCENARIOS` to ``<folder>/<name>.yaml``."""
        (self.pytester.path / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            path = self.pytester.path / folder / f"{name}.yaml"
            path.write_text(SCENARIOS[name], encoding="utf-8")

    def break_the_agent(self) -> None:
        """Run every scenario with :data:`GIVES_UP`, through the agent-factory hook."""
        conftest = self.pytester.path / "conftest.py"
        conftest.write_text(conftest.read_text() + textwrap.dedent(GIVES_UP))


@pytest.fixture
def project(pytester: pytest.Pytester, strict_ini: str) -> Project:
    return Project(pytester, strict_ini)
