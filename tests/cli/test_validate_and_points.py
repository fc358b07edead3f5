"""``harness validate`` and ``harness points``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._cli import main
from harness.runner import record_run
from harness.scenario import load_scenario


def test_validate_says_ok_when_every_file_loads(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("hello", "suite"), write("crashy", "suite")

    assert main(["validate", str(tmp_path / "suite")]) == 0

    assert capsys.readouterr() == ("", "2 scenario file(s) ok\n")


def test_validate_lists_every_error_of_every_file(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("hello", "suite"), write("malformed", "suite")
    (tmp_path / "suite" / "typo.yaml").write_text(
        "name: typo\ndialect: openapi\nseed: -1\nmodel: [{turn: 1, text: hi}]\n"
        "expect: {stop_state: complete}\n")

    assert main(["validate", str(tmp_path / "suite")]) == 1

    stdout, stderr = capsys.readouterr()
    suite = tmp_path / "suite"
    assert [line.split(": ")[0] for line in stdout.splitlines()] == [
        f"{suite}/malformed.yaml:3:1", f"{suite}/typo.yaml:2:10", f"{suite}/typo.yaml:3:7"]
    assert stderr == "harness: 3 error(s) in 2 of 3 file(s)\n"


def test_validate_of_a_missing_path_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "nowhere.yaml"]) == 1

    assert capsys.readouterr().out.startswith("nowhere.yaml: cannot read the scenario file")


def test_points_lists_each_point_with_its_op_and_role(
    write, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("crashy")

    assert main(["points", str(path)]) == 0

    lines = capsys.readouterr().out.splitlines()
    recorded = record_run(load_scenario(path))
    points, events = recorded.points, recorded.events
    assert [line.split()[0] for line in lines] == points + events
    fsync = lines[points.index("journal:fsync#1")].split()
    assert fsync == ["journal:fsync#1", "op=fsync", "role=journal"]
    # Then the world events the run reached, the crash points every agent has.
    assert lines[len(points)].split() == ["before_request:1", "op=before_request", "role=world"]


def test_points_of_a_broken_file_exits_2(write, capsys: pytest.CaptureFixture[str]) -> None:
    path = write("malformed")

    assert main(["points", str(path)]) == 2

    assert capsys.readouterr().err.startswith(f"harness: error: {path}:3:1: invalid YAML")


def test_validate_and_run_agree_on_a_listed_point_the_agent_never_reaches(
        tmp_path: Path, capsys) -> None:
    # A listed point belongs to one agent's file layout: another agent may never reach
    # it. It is no error of the file; the run reports that case unknown, with the points
    # the agent did reach and the nearest one.
    path = tmp_path / "badpoint.yaml"
    path.write_text(
        "name: badpoint\ndialect: openai\ntools:\n  notes: {kind: append}\nmodel:\n"
        "  - turn: 1\n    calls: [{tool: notes, args: {line: hi}}]\n  - turn: 2\n"
        "    text: Done.\ncrash:\n  points: [journal:fsync#9]\nexpect:\n"
        "  stop_state: complete\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert ("UNKNOWN badpoint[journal:fsync#9:after:unsynced_lost]: the agent never reached "
            "journal:fsync#9, so this case proves nothing; it reached: ") in err
    assert "Did you mean 'journal:fsync#3'?" in err
    # Its cases in every crash class and side of the point share the reason: one line.
    assert err.count("UNKNOWN badpoint") == 1
    assert "Did you mean 'journal:fsync#3'? (+13 alike)" in err


def test_validate_reports_a_split_past_the_end_of_the_scripted_stream(
        tmp_path: Path, capsys) -> None:
    # Before, validate said ok and run exited 2 on it.
    path = tmp_path / "split.yaml"
    path.write_text(
        "name: split\ndialect: openai\nmodel:\n  - turn: 1\n    text: Hi.\nfaults:\n"
        "  - {kind: split_at, at: {turn: 1}, offsets: [5000]}\nexpect:\n"
        "  stop_state: complete\n", encoding="utf-8")

    assert main(["validate", str(path)]) == 1

    out, err = capsys.readouterr()
    assert out.startswith(f"{path}:7:46: faults[0].offsets: the 'split_at' fault does not fit "
                          "the stream it met at turn 1, attempt 1: got 5000; expected an "
                          "offset in [1, ")
    assert err == "harness: 1 error(s) in 1 of 1 file(s)\n"
