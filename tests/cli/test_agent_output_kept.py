"""An agent's stdout and stderr stay out of the run's output; their tail is in its report."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness._cli import main

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios/tools/repeated-error-stops.yaml"

CHATTY = '''
import ctypes
import os
import sys

from harness.agent import ReferenceAgent
from minimal_agent import minimal_factory

_minimal = minimal_factory()


def _chatter(ports):
    print("FILLER " * 20_000)  # 140 kB: more than a case keeps
    print("PRINTED by the agent")
    sys.stdout.write("BUFFERED without a newline")
    os.write(2, b"\\nWRITTEN to fd 2 by the agent\\n")
    # C code writing to fd 1 (a child process, the other way past Python's streams, is
    # refused inside a case now).
    line = b"WRITTEN by C code\\n"
    ctypes.CDLL(None).write(1, line, len(line))


def failing(ports):
    _chatter(ports)
    return _minimal(ports)


def passing(ports):
    _chatter(ports)
    return ReferenceAgent(ports)
'''
MARKS = ("PRINTED by the agent", "BUFFERED without a newline", "WRITTEN to fd 2 by the agent",
         "WRITTEN by C code")


@pytest.fixture
def chatty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "chatty_agents.py").write_text(CHATTY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "tests/runner"))
    yield
    sys.modules.pop("chatty_agents", None)


def test_the_output_of_a_failing_case_is_in_its_report_only(
        chatty: None, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(SCENARIO), "--agent", "chatty_agents:failing",
                 "--out", str(tmp_path / "out")]) == 1
    out, err = capfd.readouterr()

    report, summary = out.split("\nreplay: ", 1)
    assert re.search(r"\nthe agent's output \(stdout and stderr\): its last \d+ line\(s\) of "
                     r"[\d,]+ bytes\n", report)
    for mark in MARKS:
        assert report.count(mark) == 1, mark
    assert not any(mark in summary + err for mark in (*MARKS, "FILLER"))
    assert report.count("FILLER") <= 20 * 100  # the tail's lines, cut to a screen's width
    assert "[1/1] 1 failed  repeated-error-stops" in err  # the harness's progress


def test_the_output_of_a_passing_case_is_shown_nowhere(
        chatty: None, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(SCENARIO), "--agent", "chatty_agents:passing",
                 "--out", str(tmp_path / "out")]) == 0
    out, err = capfd.readouterr()

    assert not any(mark in out + err for mark in (*MARKS, "FILLER"))
    assert "[1/1] 0 failed  repeated-error-stops" in err


def test_a_failing_case_row_keeps_the_output_tail_redacted_and_capped(
        chatty: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness._output import OUTPUT_ROW_CHARS

    secret = "tok-0123456789abcdef"
    monkeypatch.setenv("CHATTY_API_TOKEN", secret)  # a secret of the harness's environment
    monkeypatch.setenv("CHATTY_LEAK", secret)  # the agent is handed it by another name
    monkeypatch.setenv("HARNESS_PASS_ENV", "CHATTY_LEAK")
    _changed(tmp_path, ('print("PRINTED by the agent")',
                                'print("PRINTED by the agent", os.environ.get("CHATTY_LEAK"))'))
    out = tmp_path / "out"
    assert main(["run", str(SCENARIO), "--agent", "chatty_agents:failing",
                 "--out", str(out)]) == 1

    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))
    output = row["agent_output"]
    assert output["written"] > 140_000
    assert output["cut"] is True
    assert len(output["tail"]) <= OUTPUT_ROW_CHARS
    for mark in MARKS[:3]:
        assert mark in output["tail"], mark
    assert secret not in output["tail"]
    assert "[redacted]" in output["tail"]


def test_a_passing_case_row_has_no_output(chatty: None, tmp_path: Path) -> None:

    out = tmp_path / "out"
    assert main(["run", str(SCENARIO), "--agent", "chatty_agents:passing",
                 "--out", str(out)]) == 0

    row = json.loads((out / "cases.jsonl").read_text(encoding="utf-8"))
    assert row["agent_output"] is None


def _changed(folder: Path, *changes: tuple[str, str]) -> None:
    """The chatty agents with ``changes`` made to their code."""
    agent = folder / "chatty_agents.py"
    code = agent.read_text(encoding="utf-8")
    for old, new in changes:
        assert old in code
        code = code.replace(old, new)
    agent.write_text(code, encoding="utf-8")
