"""A fault that cannot fit the stream it meets is bad input, reported on its own YAML line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ScenarioError
from harness._cli import main
from harness.runner import plan_cases, run_case
from harness.scenario import load_scenario

SPLIT_PAST_THE_END = """\
name: split-past-the-end
dialect: openai
model:
  - turn: 1
    text: Hello.
faults:
  - {at: {turn: 1}, kind: split_at, offsets: [5, 100000]}
expect:
  stop_state: complete
"""

THIRD_OF_A_RETRY = """\
name: third-of-a-retry
dialect: anthropic
model:
  - turn: 1
    text: Hello.
faults:
  - {at: {turn: 1, attempt: 1}, kind: stall, after_events: 2, seconds: 100}
  - {at: {turn: 1, attempt: 2}, kind: inject_comments}
  - {at: {turn: 1, attempt: 2}, kind: error_in_stream, after_events: 400}
expect:
  stop_state: complete
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


def test_a_split_past_the_end_points_at_the_offsets(tmp_path: Path) -> None:
    path = _write(tmp_path, SPLIT_PAST_THE_END)
    (case,) = plan_cases(load_scenario(path), path)
    with pytest.raises(ScenarioError, match=(
        rf"^{path}:7:46: faults\[0\]\.offsets: the 'split_at' fault does not fit the stream it "
        r"met at turn 1, attempt 1: got 100000; expected an offset in \[1, \d+\] \(the stream "
        r"is \d+ bytes\)$")):
        run_case(case)


def test_the_refused_fault_is_found_among_those_of_its_turn_and_attempt(tmp_path: Path) -> None:
    path = _write(tmp_path, THIRD_OF_A_RETRY)
    (case,) = plan_cases(load_scenario(path), path)
    with pytest.raises(ScenarioError, match=(
        rf"^{path}:9:70: faults\[2\]\.after_events: the 'error_in_stream' fault does not fit "
        r"the stream it met at turn 1, attempt 2: got 400; expected at most \d+ \(the stream "
        r"has \d+ events\)$")):
        run_case(case)


def test_the_command_line_reports_it_as_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, SPLIT_PAST_THE_END)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness: error: {path}:7:46: faults[0].offsets: the 'split_at'")
    assert "Traceback" not in err


def test_under_pytest_it_fails_with_the_location_and_no_traceback(
    pytester: pytest.Pytester, strict_ini: str,
) -> None:
    pytester.makeini(strict_ini)
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "split.yaml").write_text(SPLIT_PAST_THE_END)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines([r"^scenarios/split\.yaml:7:46: faults\[0\]\.offsets: "
                                  r"the 'split_at' fault does not fit"])
    assert "Traceback" not in result.stdout.str()
    assert "_run.py" not in result.stdout.str()
