"""``harness run``: exit codes, the summary, failure reports and the result files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from harness._cli import main, summary_table
from harness._output import ATTEMPT_COLUMNS, CASE_COLUMNS
from harness.runner import Case, CaseResult, CrashSpec, Verdict
from tests.cli.conftest import SCENARIOS


def test_a_passing_suite_exits_0_and_writes_every_file(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write("hello", "suite"), write("crashy", "suite")
    out = tmp_path / "out"

    assert main(["run", str(tmp_path / "suite"), "--out", str(out)]) == 0

    stdout, stderr = capsys.readouterr()
    assert stdout.splitlines()[0].split() == [
        "scenario", "cases", "passed", "failed", "unknown", "crash", "runs", "duplicates",
        "virtual", "s"]
    assert [line.split()[:4] for line in stdout.splitlines()[2:]] == [
        ["crashy", "5", "5", "0"], ["hello", "1", "1", "0"], ["total", "6", "6", "0"]]
    assert "[6/6] 0 failed" in stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "attempts.jsonl", "attempts.parquet", "cases.jsonl", "cases.parquet", "manifest.json"]
    cases = pl.read_parquet(out / "cases.parquet")
    assert tuple(cases.columns) == CASE_COLUMNS
    assert cases["passed"].to_list() == [True] * 6
    assert tuple(pl.read_parquet(out / "attempts.parquet").columns) == ATTEMPT_COLUMNS
    lines = (out / "cases.jsonl").read_text().splitlines()
    assert [json.loads(line)["case_id"] for line in lines] == cases["case_id"].to_list()


def test_the_manifest_names_each_scenario_with_its_digest(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    path = write("hello")
    main(["run", str(path), "--out", str(tmp_path / "out"), "--seed", "3"])

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["format_version"] == 1
    assert manifest["seed_override"] == 3
    assert manifest["scenarios"] == [{
        "name": "hello", "path": str(path), "seed": 3,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]


def test_a_broken_invariant_exits_1_with_a_report_and_no_traceback(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("expects-blocked")

    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 1

    stdout = capsys.readouterr().out
    assert "FAILED expects-blocked" in stdout
    assert "I4 broken: stopped 'complete', expected 'blocked'" in stdout
    assert ">  7 |   stop_state: blocked" in stdout or "> 7 |   stop_state: blocked" in stdout
    assert f"replay: harness run {path} --seed 0" in stdout
    assert "Traceback" not in stdout


def test_crash_at_runs_exactly_that_case(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("crashy")
    out = tmp_path / "out"

    code = main(["run", str(path), "--out", str(out),
                 "--crash-at", "journal:fsync#1:after:unsynced_lost"])

    assert code == 0
    rows = pl.read_parquet(out / "cases.parquet")
    assert rows.select("case_id", "crash_reached").rows() == [
        ("crashy[journal:fsync#1:after:unsynced_lost]", True)]


def test_no_crash_runs_each_scenario_once(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("crashy")

    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-crash"]) == 0

    assert pl.read_parquet(tmp_path / "out" / "cases.parquet")["case_id"].to_list() == ["crashy"]


@pytest.mark.parametrize(("setting", "crashed"), [
    ("as-written", {"crashy": True, "hello": False}),
    ("none", {"crashy": False, "hello": False}),
    ("all-points", {"crashy": True, "hello": True}),
])
def test_the_crash_setting_says_what_a_scenario_with_and_without_a_crash_block_does(
    setting: str, crashed: dict[str, bool], write, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write("hello", "suite"), write("crashy", "suite")

    assert main(["run", str(tmp_path / "suite"), "--out", str(tmp_path / "out"),
                 "--crash", setting]) == 0

    ids = pl.read_parquet(tmp_path / "out" / "cases.parquet")["case_id"].to_list()
    assert {name: any(i.startswith(f"{name}[") for i in ids) for name in crashed} == crashed
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["crash"] == setting


def test_crash_sample_keeps_one_case_of_each_kind_as_the_plugin_does(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("crashy")
    for setting in ("as-written", "sample"):
        main(["run", str(path), "--out", str(tmp_path / setting), "--crash", setting])

    every, sampled = (pl.read_parquet(tmp_path / s / "cases.parquet")["case_id"].to_list()
                      for s in ("as-written", "sample"))
    assert sampled[0] == "crashy"
    assert set(sampled) < set(every)


def test_the_old_crash_all_runs_all_points_with_a_note(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("hello")

    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--crash", "all"]) == 0

    assert len(pl.read_parquet(tmp_path / "out" / "cases.parquet")) > 1
    assert "harness run: --crash: 'all' is deprecated: it means all-points" in \
        capsys.readouterr().err


def test_jobs_give_the_same_results_as_one_process(
    write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write("crashy")
    for jobs in ("1", "2"):
        main(["run", str(path), "--out", str(tmp_path / jobs), "--jobs", jobs])

    one, two = (pl.read_parquet(tmp_path / jobs / "cases.parquet") for jobs in ("1", "2"))
    assert one.select("case_id", "digest").equals(two.select("case_id", "digest"))


@pytest.mark.parametrize(("args", "message"), [
    (["missing.yaml"],
     "harness: error: missing.yaml: cannot read the scenario file: No such file or directory;"
     " expected a readable YAML file"),
    (["{malformed}"], "harness: error: {malformed}:3:1: invalid YAML: *"),
    (["{crashy}", "--crash-at", "journal:fsync#9:after:unsynced_lost"],
     "harness: error: --crash-at: got 'journal:fsync#9'; expected a point the recorded run of"
     " {crashy} reaches: 'state:mkdir#1', * (and * more). Did you mean 'journal:fsync#*'?"),
    (["{crashy}", "--crash-at", "journal:fsync#1:after:unsynced"],
     "harness: error: --crash-at: got 'unsynced'; expected a crash class, one of *."
     " Did you mean 'unsynced_lost'?"),
    (["{crashy}", "--crash-at", "journal:write#2:after:eio_on_write:again"],
     "harness: error: --crash-at: got 'eio_on_write:again'; expected ':again' only with a class"
     " that kills the process (an error class such as 'eio_on_write' raises at the point and"
     " the agent carries on: there is no recovery to crash). Drop ':again'"),
    (["{crashy}", "--crash", "all-scenarios"],
     "harness: error: --crash: got 'all-scenarios'; expected one of as-written, none, listed,"
     " sample, all-points"),
    (["{crashy}", "--crash-at", "journal"],
     "harness: error: --crash-at: got 'journal'; expected POINT:WHEN:CLASS[:again], such as"
     " 'journal:fsync#3:after:unsynced_lost' or 'after_tool:mail#1:at:unsynced_lost'."
     " List a scenario's points with"
     " 'harness points SCENARIO'"),
])
def test_bad_input_exits_2_with_one_clear_line(
    args: list[str], message: str, *, write, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    names = {"malformed": str(write("malformed")), "crashy": str(write("crashy"))}
    args = [arg.format(**names) for arg in args]

    assert main(["run", *args, "--out", str(tmp_path / "out")]) == 2

    stderr = capsys.readouterr().err
    expected = message.format(**names)
    assert re.fullmatch(".*".join(map(re.escape, expected.split("*"))), stderr.rstrip("\n")), \
        stderr
    assert not (tmp_path / "out").exists()


def test_the_summary_counts_cases_by_status_crash_runs_and_duplicates() -> None:
    # An unknown verdict inside a passing case leaves it passed; a case whose crash
    # point was never reached is an unknown case.
    source = Path("s.yaml")
    plain = CaseResult(Case("s", source, 0), "complete", "done",
                       (Verdict("I1", "pass", ""), Verdict("I5", "unknown", "")), "d", True,
                       virtual_seconds=1.25)
    crash = CrashSpec("journal:fsync#1", "after", "eio_on_write")
    crashed = CaseResult(Case("s", source, 0, crash),
                         "complete", "done", (Verdict("I1", "fail", "twice"),), "d", True,
                         duplicates=1, virtual_seconds=2.0)
    unreached = CaseResult(Case("s", source, 0, CrashSpec("journal:fsync#9", "after",
                                                          "unsynced_lost")),
                           "complete", "done", (Verdict("I1", "pass", ""),), "d", False)

    assert summary_table([plain, crashed, unreached]).splitlines() == [
        "scenario  cases  passed  failed  unknown  crash runs  duplicates  virtual s",
        "--------  -----  ------  ------  -------  ----------  ----------  ---------",
        "s             3       1       1        1           2           1        3.2",
        "total         3       1       1        1           2           1        3.2",
    ]


@pytest.mark.parametrize("seed", ["-1", str(2**63), "99999999999999999999999999"])
def test_a_seed_the_scenario_format_refuses_is_refused_on_the_command_line(
    seed: str, *, write, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # A scenario's seed is 0..2**63-1; --seed used to bypass that and crash in the
    # result writer (polars cannot store a 128-bit integer) after every case had run.
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(write("crashy")), "--no-crash", "--seed", seed,
              "--out", str(tmp_path / "out")])

    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"harness run: error: argument --seed: got {seed!r}; expected a whole "
                        f"number from 0 to {2**63 - 1}\n")
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cases_that_fail_alike_are_reported_once_with_a_count_and_their_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "crashy-blocked.yaml"
    path.write_text(SCENARIOS["crashy"].replace("name: crashy", "name: crashy-blocked")
                    .replace("stop_state: complete", "stop_state: blocked"))

    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 1

    stdout = capsys.readouterr().out
    assert stdout.count("I4 broken: stopped 'complete', expected 'blocked'") == 1
    assert "FAILED crashy-blocked (+4 alike)" in stdout
    assert ("the same failure in 4 more case(s): "
            "crashy-blocked[journal:fsync#1:after:unsynced_lost], "
            "crashy-blocked[journal:fsync#1:before:unsynced_lost], "
            "crashy-blocked[journal:fsync#2:after:unsynced_lost], "
            "crashy-blocked[journal:fsync#2:before:unsynced_lost]") in stdout


def test_many_cases_that_fail_alike_are_named_ten_then_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A scenario crashed at every point failed alike in 94 cases: one line of 94 ids.
    path = tmp_path / "crashy-blocked.yaml"
    path.write_text(SCENARIOS["crashy"].replace("name: crashy", "name: crashy-blocked")
                    .replace("stop_state: complete", "stop_state: blocked")
                    .replace("classes: [unsynced_lost]",
                             "classes: [unsynced_lost, torn_append_short, torn_append_zeros]"))

    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 1

    stdout = capsys.readouterr().out
    assert "FAILED crashy-blocked (+12 alike)" in stdout
    note = next(line for line in stdout.splitlines() if line.startswith("the same failure"))
    assert note.startswith("the same failure in 12 more case(s): crashy-blocked[")
    assert note.count("crashy-blocked[") == 10
    assert note.endswith("] and 2 more (every case is in the results' cases.jsonl)")


SHIPPED_SCENARIO = str(Path(__file__).resolve().parents[2] / "scenarios" / "crash"
                       / "unknown-send-is-inspected.yaml")


@pytest.mark.parametrize("command", [
    ["run", SHIPPED_SCENARIO, "--no-crash"],
    ["compare", "a", "b"],
    ["fuzz", SHIPPED_SCENARIO],
])
def test_an_empty_out_is_refused_not_the_current_folder(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # "--out ''" meant the current folder: results written among the user's files.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main([*command, "--out", ""])
    assert stopped.value.code == 2
    assert "--out: got ''; expected a path to write to" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
