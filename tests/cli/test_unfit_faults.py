"""A stream fault the agent's request cannot take is one case's `unknown`, never the run's end.

An agent that asks for a whole answer (no ``stream: true``) gives a stream with no SSE
frames to split; a shorter answer than the scenario's gives fewer events to stall after.
Such a fault is left out and named; the other cases of the run go on as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness._cli import main

WHOLE_ANSWER_AGENT = '''
import os

import httpx


def main(prompt: str) -> str:
    base = os.environ["OPENAI_BASE_URL"]
    answer = httpx.post(f"{base}/chat/completions", timeout=600,
                        json={"model": "fake-model",
                              "messages": [{"role": "user", "content": prompt}]})
    return answer.json()["choices"][0]["message"]["content"] or ""
'''

SPLIT_FRAMES = """\
name: split-frames
dialect: openai
seed: 3
model:
  - turn: 1
    text: "Hello there, this is a longer answer."
faults:
  - {at: {turn: 1, attempt: 1}, kind: split_inside_data_field, occurrence: 2}
expect:
  stop_state: complete
"""

PLAIN = """\
name: plain
dialect: openai
seed: 4
model:
  - turn: 1
    text: "Hello."
expect:
  stop_state: complete
"""


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "whole_answer_agent.py").write_text(WHOLE_ANSWER_AGENT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return scenario_folder(tmp_path / "suite", {"a-split-frames": SPLIT_FRAMES, "b-plain": PLAIN})


def scenario_folder(folder: Path, scenarios: dict[str, str]) -> Path:
    """``folder`` made, holding each scenario text as ``NAME.yaml``."""
    folder.mkdir()
    for name, text in scenarios.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    """The run's case rows, by scenario name."""
    lines = (out / "cases.jsonl").read_text().splitlines()
    return {row["scenario"]: row for row in map(json.loads, lines)}


def _faults_verdict(row: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in row["verdicts"] if v["invariant"] == "faults")


def test_a_fault_the_agents_request_cannot_take_is_unknown_and_the_run_goes_on(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results"

    code = main(["run", str(suite), "--agent", "whole_answer_agent:main", "--out", str(out)])

    assert code == 0  # nothing failed; one case proves nothing, and says so
    rows = _rows(out)
    assert rows["plain"]["passed"] is True
    split = rows["split-frames"]
    assert (split["passed"], split["error"], split["failed_invariants"]) == (False, None, [])
    assert "faults" in split["unknown_invariants"]
    verdict = _faults_verdict(split)
    assert verdict["message"].startswith("turn 1 attempt 1 split_inside_data_field (left out: ")
    assert "the agent asked for a whole answer, not a stream" in verdict["message"]
    printed = capsys.readouterr().err
    assert "UNKNOWN split-frames: the fault turn 1 attempt 1 split_inside_data_field (left " \
        "out: " in printed


ERROR_IN_STREAM = """\
name: error-in-stream
dialect: openai
seed: 5
model:
  - turn: 1
    text: "Hello there."
faults:
  - {at: {turn: 1, attempt: 1}, kind: error_in_stream, after_events: 1}
expect:
  stop_state: complete
"""


def test_a_frame_fault_on_a_whole_answer_is_not_counted_as_met(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A whole (non-streaming) answer has no SSE frames: the fault never happened, so an
    # agent that never streams must not pass a scenario written about it.
    (suite / "a-split-frames.yaml").unlink()
    (suite / "c-error-in-stream.yaml").write_text(ERROR_IN_STREAM, encoding="utf-8")
    out = tmp_path / "results"

    assert main(["run", str(suite), "--agent", "whole_answer_agent:main", "--out",
                 str(out)]) == 0

    rows = _rows(out)
    case = rows["error-in-stream"]
    assert case["passed"] is False
    assert "faults" in case["unknown_invariants"]
    verdict = _faults_verdict(case)
    assert verdict["message"].startswith(
        "turn 1 attempt 1 error_in_stream (left out: a whole answer has no SSE frames")
    capsys.readouterr()


CRLF_SPLIT = """\
name: crlf-split
dialect: openai
seed: 6
model:
  - turn: 1
    text: "Hello there, this is a longer answer."
faults:
  - {at: {turn: 1, attempt: 1}, kind: line_endings, style: crlf}
  - {at: {turn: 1, attempt: 1}, kind: split_between_cr_lf, occurrence: 2}
expect:
  stop_state: complete
"""


def test_a_fault_that_fits_only_beside_the_attempts_other_faults_is_left_out_too(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A split between CR and LF needs the CRLF lines the attempt's line_endings makes: the
    # scenario is right (validate passes it), and a whole answer has no lines. It once
    # ended the whole run with exit 2 as the scenario's mistake.
    (suite / "a-split-frames.yaml").unlink()
    (suite / "d-crlf-split.yaml").write_text(CRLF_SPLIT, encoding="utf-8")
    out = tmp_path / "results"

    assert main(["validate", str(suite / "d-crlf-split.yaml")]) == 0
    assert main(["run", str(suite), "--agent", "whole_answer_agent:main", "--out",
                 str(out)]) == 0

    rows = _rows(out)
    assert rows["plain"]["passed"] is True
    case = rows["crlf-split"]
    assert (case["passed"], case["error"], case["failed_invariants"]) == (False, None, [])
    assert "faults" in case["unknown_invariants"]  # proves nothing, and says so
    verdict = _faults_verdict(case)
    assert "split_between_cr_lf (left out: " in verdict["message"]
    assert "the agent asked for a whole answer, not a stream" in verdict["message"]
    capsys.readouterr()


STALL_MID_STREAM = """\
name: stall-mid-stream
dialect: openai
seed: 7
model:
  - turn: 1
    text: "Hello there, this is a longer answer."
faults:
  - {at: {turn: 1, attempt: 1}, kind: stall, after_events: 3, seconds: 120}
expect:
  stop_state: complete
"""


def test_validate_with_the_agent_says_what_run_reports_of_a_fault_it_cannot_take(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A stall after the third event needs a stream; an agent asking for whole answers
    # never meets it. run reports the case unknown; validate, asked about that agent,
    # says so too, on the fault's line and in run's words.
    path = suite / "e-stall.yaml"
    path.write_text(STALL_MID_STREAM, encoding="utf-8")
    out = tmp_path / "results"
    assert main(["run", str(path), "--agent", "whole_answer_agent:main", "--out",
                 str(out)]) == 0
    reported = _faults_verdict(_rows(out)["stall-mid-stream"])["message"]
    capsys.readouterr()

    assert main(["validate", str(path)]) == 0  # the file is right for a streaming agent
    capsys.readouterr()
    assert main(["validate", str(path), "--agent", "whole_answer_agent:main"]) == 1

    printed = capsys.readouterr()
    assert printed.out == f"{path}:8:5: faults[0]: {reported}\n"
    assert "(the agent asked for a whole answer, not a stream)" in reported
    assert printed.err == "harness: 1 error(s) in 1 of 1 file(s)\n"
    assert main(["validate", str(suite / "b-plain.yaml"), "--agent",
                 "whole_answer_agent:main"]) == 0  # and a scenario it can play passes


EVERY_POINT = """\
name: every-point
dialect: openai
seed: 8
model:
  - turn: 1
    text: "Hello."
crash:
  points: all
  classes: [unsynced_lost]
expect:
  stop_state: complete
"""


def test_validate_with_the_agent_says_what_run_reports_of_points_all_it_never_reaches(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The agent keeps no file: 'points: all' makes no crash case, which run reports
    # (and --strict fails); validate says it of the same line, in the same words.
    path = suite / "f-every-point.yaml"
    path.write_text(EVERY_POINT, encoding="utf-8")
    out = tmp_path / "results"
    assert main(["run", str(path), "--agent", "whole_answer_agent:main", "--out",
                 str(out)]) == 0
    [verdict] = [v for v in _rows(out)["every-point"]["verdicts"]
                 if v["invariant"] == "crash:cases"]
    assert verdict["status"] == "unknown"
    capsys.readouterr()

    assert main(["validate", str(path), "--agent", "whole_answer_agent:main"]) == 1

    assert capsys.readouterr().out == f"{path}:8:11: crash.points: {verdict['message']}\n"


OTHER_TOOLS_AGENT = '''
import os

import httpx


def main(prompt: str) -> str:
    base = os.environ["OPENAI_BASE_URL"]
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {}}}}]
    answer = httpx.post(f"{base}/chat/completions", timeout=600,
                        json={"model": "fake-model", "tools": tools,
                              "messages": [{"role": "user", "content": prompt}]})
    return answer.json()["choices"][0]["message"]["content"] or ""
'''

CALLS_NOTES = """\
name: calls-notes
dialect: openai
seed: 9
tools:
  notes: {kind: append}
model:
  - turn: 1
    calls: [{tool: notes, args: {text: hi}}]
  - turn: 2
    text: "Done."
expect:
  stop_state: complete
"""


def test_validate_with_the_agent_says_what_run_reports_of_a_tool_it_never_offers(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "other_tools_agent.py").write_text(OTHER_TOOLS_AGENT, encoding="utf-8")
    path = suite / "g-calls-notes.yaml"
    path.write_text(CALLS_NOTES, encoding="utf-8")
    out = tmp_path / "results"
    assert main(["run", str(path), "--agent", "other_tools_agent:main", "--out",
                 str(out)]) == 0
    [verdict] = [v for v in _rows(out)["calls-notes"]["verdicts"] if v["invariant"] == "tools"]
    assert verdict["status"] == "unknown"
    capsys.readouterr()

    assert main(["validate", str(path), "--agent", "other_tools_agent:main"]) == 1

    printed = capsys.readouterr().out
    assert printed.startswith(f"{path}:8:20: model[0].calls[0].tool: {verdict['message']}; ")
    assert printed.endswith("; leave the scenario out of the run, or name its tools (and their "
                            "arguments) after the agent's, each with a target: naming the "
                            "agent's function\n")
