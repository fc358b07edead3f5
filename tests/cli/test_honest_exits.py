"""A run that tested nothing must not read as green: the summary's first line says how many
cases proved nothing, and ``--strict`` fails on each crash point, fault and expectation no
case reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main
from harness.runner import Case, CaseResult, CrashSpec, Unreached, Verdict, never_reached
from harness.scenario import parse_scenario
from tests.cli.conftest import CRASHY

# The command-line tests' crashy scenario, with a point its run never reaches listed first.
UNREACHED_POINT = CRASHY.replace("name: crashy", "name: badpoint").replace(
    "points: [journal:fsync#1, journal:fsync#2]", "points: [journal:fsync#9, journal:fsync#1]")


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_without_strict_the_summary_starts_with_how_many_cases_proved_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, UNREACHED_POINT)

    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0

    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("2 of 5 cases proved nothing: their crash point or fault "
                                   "was never reached")
    assert out.splitlines()[1].split()[:2] == ["scenario", "cases"]


def test_strict_fails_a_run_whose_crash_point_no_case_reached_and_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, UNREACHED_POINT)

    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--strict"]) == 1

    err = capsys.readouterr().err
    assert ("harness run --strict: 1 thing(s) no case reached, so the run proves nothing of "
            "them") in err
    assert err.endswith("\n  badpoint: crash point journal:fsync#9 was never reached\n")


def test_strict_passes_a_run_that_reached_everything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, UNREACHED_POINT.replace("journal:fsync#9, ", ""))

    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--strict"]) == 0

    captured = capsys.readouterr()
    assert "proved nothing" not in captured.out
    assert "--strict" not in captured.err


def test_strict_fails_on_a_listed_expectation_no_case_judged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # I5 judges a goal; the scenario declares none, so every case leaves it unknown.
    text = UNREACHED_POINT.replace("journal:fsync#9, ", "") + "  invariants: [I1, I5]\n"
    path = _write(tmp_path, text)

    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--strict"]) == 1

    assert capsys.readouterr().err.endswith(
        "\n  badpoint: expectation I5 was never reached\n")


def _result(crash: CrashSpec | None, *, reached: bool = True,
            missed_faults: tuple[str, ...] = (), verdicts: tuple[Verdict, ...] = ()
            ) -> CaseResult:
    faults = (Verdict("faults", "unknown", "missed",
                      tuple(f"never reached: {f}" for f in missed_faults)),) \
        if missed_faults else (Verdict("faults", "pass", "met"),)
    return CaseResult(Case("s", Path("s.yaml"), 0, crash), "complete", "done",
                      faults + verdicts, "d", reached)


def test_a_point_or_fault_one_case_reached_is_reached() -> None:
    point = CrashSpec("journal:fsync#1", "after", "unsynced_lost")
    results = [
        _result(None, missed_faults=("turn 3 attempt 1 http_error",)),
        _result(point, reached=False, missed_faults=("turn 3 attempt 1 http_error",
                                                     "turn 4 attempt 1 stall")),
        _result(CrashSpec("journal:fsync#1", "before", "unsynced_lost"), reached=True,
                missed_faults=("turn 3 attempt 1 http_error", "turn 4 attempt 1 stall")),
        _result(CrashSpec("after_tool:mail#1", "at", "process_killed"), reached=False,
                missed_faults=("turn 3 attempt 1 http_error", "turn 4 attempt 1 stall")),
    ]

    assert never_reached(results, {}) == [
        Unreached("s", "crash point", "after_tool:mail#1"),
        Unreached("s", "fault", "turn 3 attempt 1 http_error"),
    ]


def test_only_expectations_the_scenario_writes_out_are_held_to_being_reached() -> None:
    scenario = parse_scenario(
        b"name: s\ndialect: openai\nmodel: [{turn: 1, text: hi}]\n"
        b"expect: {stop_state: complete, invariants: [I1, I4], "
        b"stop_state_after_disk_error: failed}\n", "s.yaml")
    defaults = parse_scenario(b"name: s\ndialect: openai\nmodel: [{turn: 1, text: hi}]\n"
                              b"expect: {stop_state: complete}\n", "s.yaml")
    results = [_result(None, verdicts=(Verdict("I1", "unknown", ""), Verdict("I4", "pass", ""),
                                       Verdict("J6", "unknown", "")))]

    assert never_reached(results, {"s": scenario}) == [
        Unreached("s", "expectation", "I1"), Unreached("s", "expectation", "J6")]
    assert never_reached(results, {"s": defaults}) == []


def test_a_tool_output_limit_and_a_goals_protected_paths_must_be_judged_somewhere() -> None:
    # Both rules a scenario writes out: a run whose every case left them unknown tested
    # neither (a long output that never came, a protected path the model never named).
    scenario = parse_scenario(
        b"name: s\ndialect: openai\ntools: {edit: {kind: put}}\n"
        b"model: [{turn: 1, text: hi}]\n"
        b"goal: {id: g, objective: o, acceptance: [a], protected: [tests/*]}\n"
        b"verifier: [{verdict: pass}]\n"
        b"expect: {stop_state: complete, max_tool_result_chars: 8000}\n", "s.yaml")
    unjudged = [_result(None, verdicts=(Verdict("context:tool-output", "unknown", ""),
                                        Verdict("I5:protected", "unknown", "")))]
    judged = [_result(None, verdicts=(Verdict("context:tool-output", "pass", ""),
                                      Verdict("I5:protected", "fail", "")))]

    assert never_reached(unjudged, {"s": scenario}) == [
        Unreached("s", "expectation", "context:tool-output"),
        Unreached("s", "expectation", "I5:protected")]
    assert never_reached(judged, {"s": scenario}) == []
