"""Scenario files for the command-line tests."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness._cli import main

ROOT = Path(__file__).resolve().parents[2]

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


@pytest.fixture
def guest_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                  ) -> Iterator[Callable[..., Path]]:
    """``guest_modules({"name": source, "x.yaml": text}, *paths)`` writes a hostile
    agent's modules and its scenario in ``tmp_path``, importable with the project and
    ``paths`` (relative to it); the modules are forgotten when the test ends."""
    written: list[str] = []

    def write(files: dict[str, str], *paths: str) -> Path:
        for name, text in files.items():
            file = name if name.endswith(".yaml") else f"{name}.py"
            (tmp_path / file).write_text(text, encoding="utf-8")
            written.extend([] if name.endswith(".yaml") else [name])
        monkeypatch.syspath_prepend(str(tmp_path))
        for path in (*paths, "."):
            monkeypatch.syspath_prepend(str((ROOT / path).resolve()))
        return tmp_path

    yield write
    for name in written:
        sys.modules.pop(name, None)


@pytest.fixture
def rows_told(tmp_path: Path, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[dict[str, object]]]:
    """``rows_told(scenario, agent, VARIABLE, value)``: ``harness run`` of ``scenario``
    with ``agent``, told ``VARIABLE=value`` (passed through the agent's allow-listed
    environment; "" is the honest run), and each case's row of ``cases.jsonl``."""
    def run(scenario: Path, agent: str, variable: str, value: str) -> list[dict[str, object]]:
        monkeypatch.setenv(variable, value)
        monkeypatch.setenv("HARNESS_PASS_ENV", variable)  # the agent's is an allow-list
        out = tmp_path / (value or "honest")
        main(["run", str(scenario), "--agent", agent, "--jobs", "2", "--out", str(out)])
        capsys.readouterr()
        return [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    return run


@pytest.fixture
def sealed_judged(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[list[str]]]:
    """``sealed_judged(scenario, agent, VARIABLE, value)``: the first three cases of
    ``scenario`` run by the pytest plugin's sealed worker (:class:`SealedCases`) with
    ``agent``, told ``VARIABLE=value``, and each case's failed invariants."""
    from harness.runner import AgentChoice, SealedCases, plan_cases
    from harness.scenario import load_scenario

    def run(source: Path, agent: str, variable: str, value: str) -> list[list[str]]:
        monkeypatch.setenv(variable, value)
        monkeypatch.setenv("HARNESS_PASS_ENV", variable)
        scenario = load_scenario(source)
        # A busy machine slows a case; the tests judge tricks, not time.
        sealed = SealedCases(AgentChoice(agent), timeout=600.0)
        try:
            results = [sealed.run(case, scenario) for case in plan_cases(scenario, source)[:3]]
        finally:
            sealed.close()
        return [[v.invariant for v in r.failed_verdicts] for r in results]
    return run
