"""Results that survive: each finished case kept as it finishes, a run resumed, a kill at
any instant leaving the old folder, the new one, or one ``gate`` calls incomplete."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import ReportError
from harness._cli import main
from reports import load_results

RESULT_FILES = ("attempts.jsonl", "attempts.parquet", "cases.jsonl", "cases.parquet",
                "manifest.json")


class Killed(BaseException):
    """Stands for a SIGKILL: nothing in the harness catches it, nothing after it runs."""


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture
def suite(write: Callable[..., Path], tmp_path: Path) -> Path:
    """Seven cases: five of crashy, hello, and expects-blocked (which fails)."""
    for name in ("crashy", "hello", "expects-blocked"):
        write(name, "suite")
    return tmp_path / "suite"


def kill_after(monkeypatch: pytest.MonkeyPatch, cases: int) -> None:
    """Kill the harness in-process right after its ``cases``-th case is reported."""
    from harness import _cli

    real = _cli._Progress.step
    seen: list[object] = []

    def step(self: _cli._Progress, result: object) -> None:
        real(self, result)  # type: ignore[arg-type]
        seen.append(result)
        if len(seen) == cases:
            raise Killed

    monkeypatch.setattr(_cli._Progress, "step", step)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_killed_run_keeps_its_finished_cases_and_resume_writes_the_same_files(
        suite: Path, tmp_path: Path, jobs: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    whole, out = tmp_path / "whole", tmp_path / "out"
    assert main(["run", str(suite), "--out", str(whole)]) == 1
    command = ["run", str(suite), "--out", str(out), "--jobs", jobs]
    with monkeypatch.context() as patch:
        kill_after(patch, 3)
        with pytest.raises(Killed):
            main(command)
    assert sorted(files(out)) == ["journal.jsonl"]
    assert len((out / "journal.jsonl").read_text().splitlines()) == 1 + 3  # header, 3 cases
    capsys.readouterr()

    assert main(["gate", str(out), str(whole)]) == 2
    assert capsys.readouterr().err == (
        f"harness: error: {out}: this run is incomplete: 3 of 7 cases; resume it with: "
        f"harness run {suite} --out {out} --jobs {jobs} --resume\n")

    assert main([*command, "--resume"]) == 1  # expects-blocked fails, as in the whole run
    captured = capsys.readouterr()
    assert f"harness run: resuming {out}/: 3 of 7 cases done, 4 to run" in captured.err
    assert "[7/7] 1 failed" in captured.err
    assert " FAILED expects-blocked " in captured.out
    assert captured.out.splitlines()[-1].split()[:5] == ["total", "7", "6", "1", "0"]
    assert files(out) == files(whole)  # byte for byte, rows in the planned order


def test_each_case_is_synced_to_the_journal_before_it_is_counted(
        suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import _cli

    events: list[str] = []
    real_fsync, real_step = os.fsync, _cli._Progress.step

    def fsync(fd: int) -> None:
        events.append(f"fsync {Path(os.readlink(f'/proc/self/fd/{fd}')).name}")
        real_fsync(fd)

    def step(self: _cli._Progress, result: object) -> None:
        events.append("counted")
        real_step(self, result)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(_cli._Progress, "step", step)
    main(["run", str(suite), "--out", str(tmp_path / "out")])

    counted = [i for i, event in enumerate(events) if event == "counted"]
    assert len(counted) == 7
    assert all(events[i - 1] == "fsync journal.jsonl" for i in counted)


@pytest.mark.parametrize("name", ["journal.jsonl", *RESULT_FILES])
def test_a_kill_while_results_are_written_leaves_the_old_folder_or_an_incomplete_one(
        suite: Path, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out, new = tmp_path / "out", tmp_path / "new"
    main(["run", str(suite), "--out", str(out)])
    main(["run", str(suite), "--out", str(new), "--seed", "5"])
    old, renewed = files(out), files(new)
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == out / name:
            raise Killed  # the harness dies just before this file is renamed into place
        real(src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", replace)
        with pytest.raises(Killed):
            main(["run", str(suite), "--out", str(out), "--seed", "5"])
    capsys.readouterr()

    refused = refusal(out)
    if refused is None:
        assert files(out) == old  # killed before the new run wrote anything
    else:
        assert refused == (f"{out}: this run is incomplete: 7 of 7 cases; resume it with: "
                           f"harness run {suite} --out {out} --seed 5 --resume")
        assert main(["run", str(suite), "--out", str(out), "--seed", "5", "--resume"]) == 1
        assert files(out) == renewed


def refusal(folder: Path) -> str | None:
    """Why the reports refuse ``folder``; None when they read it."""
    try:
        load_results(folder)
    except ReportError as error:
        return str(error)
    return None


def test_a_journal_beside_a_whole_manifest_is_a_finished_run(
        suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    real = Path.unlink

    def unlink(path: Path, missing_ok: bool = False) -> None:
        if path == out / "journal.jsonl":
            raise Killed  # killed after the manifest, before the journal went
        real(path, missing_ok=missing_ok)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "unlink", unlink)
        with pytest.raises(Killed):
            main(["run", str(suite), "--out", str(out)])
    assert (out / "journal.jsonl").exists()
    assert load_results(out).runs.height == 7


@pytest.fixture
def killed(suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> Path:
    """The --out folder of a run of ``suite`` killed after its second case."""
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        kill_after(patch, 2)
        with pytest.raises(Killed):
            main(["run", str(suite), "--out", str(out)])
    assert (out / "journal.jsonl").exists()
    capsys.readouterr()
    return out


def test_a_journal_line_a_kill_cut_short_is_no_case_and_resume_writes_over_it(
        suite: Path, killed: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    main(["run", str(suite), "--out", str(whole)])
    with (killed / "journal.jsonl").open("ab") as journal:
        journal.write(b'{"index": 4, "case_id": "crashy[journ')  # the write a SIGKILL cut

    assert refusal(killed) == (f"{killed}: this run is incomplete: 2 of 7 cases; resume it "
                               f"with: harness run {suite} --out {killed} --resume")
    assert main(["run", str(suite), "--out", str(killed), "--resume"]) == 1
    assert files(killed) == files(whole)


def test_a_run_without_resume_starts_afresh_over_an_interrupted_one(
        suite: Path, killed: Path) -> None:
    out = killed
    assert main(["run", str(suite), "--out", str(out), "--seed", "4"]) == 1
    assert sorted(files(out)) == sorted(RESULT_FILES)
    assert set(load_results(out).runs["harness.seed"].to_list()) == {4}


@pytest.mark.parametrize(("change", "reason"), [
    (["--seed", "9"], "--seed was not given, now 9"),
    (["--strict"], "--strict was not given, now True"),
    (["--no-crash"], "--crash / --crash-at / --no-crash was 'as-written', now 'none'"),
    (["--agent", "harness.agent:ReferenceAgent"],
     "--agent was not given, now 'harness.agent:ReferenceAgent'"),
])
def test_resume_with_other_options_is_refused(
        suite: Path, killed: Path, change: list[str], reason: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = killed
    journal = (out / "journal.jsonl").read_bytes()

    assert main(["run", str(suite), "--out", str(out), *change, "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"harness: error: --resume: got '{out}'; expected the same scenarios and options as "
        f"the interrupted run there, but {reason}. Resume with the inputs it started with, "
        "or run without --resume to start afresh (its finished cases are then discarded)\n")
    assert (out / "journal.jsonl").read_bytes() == journal  # nothing mixed in


def test_resume_after_a_scenario_changed_is_refused(
        suite: Path, killed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = killed
    hello = suite / "hello.yaml"
    hello.write_text(hello.read_text().replace("Hello.", "Hi."))

    assert main(["run", str(suite), "--out", str(out), "--resume"]) == 2
    assert (f"but scenario file {hello} changed since (its SHA-256 differs)"
            in capsys.readouterr().err)


def test_resume_where_no_run_was_interrupted_is_refused(
        suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["run", str(suite), "--out", str(out), "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"harness: error: --resume: got '{out}'; expected a results folder holding an "
        "interrupted run; it has no journal.jsonl: its run finished, or none was started "
        "there. Run without --resume to start the run afresh\n")


def test_stray_temporary_files_of_a_killed_write_are_cleaned_at_the_next_write(
        suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    strays = [".cases.jsonl.4242.tmp", ".attempts.parquet.4242.tmp", ".manifest.json.7.tmp",
              ".journal.jsonl.99.tmp"]
    for name in [*strays, ".notes.txt.1.tmp", "mine.tmp"]:
        (out / name).write_text("left by a kill")

    main(["run", str(suite), "--out", str(out)])

    assert sorted(files(out)) == sorted([*RESULT_FILES, ".notes.txt.1.tmp", "mine.tmp"])


def test_a_pytest_worker_cleans_its_own_strays_and_no_other_workers(tmp_path: Path) -> None:
    from harness._output import write_results

    for name in (".cases-gw0.jsonl.11.tmp", ".cases-gw1.jsonl.12.tmp"):
        (tmp_path / name).write_text("")
    write_results(tmp_path, [], suffix="-gw0")
    assert not (tmp_path / ".cases-gw0.jsonl.11.tmp").exists()
    assert (tmp_path / ".cases-gw1.jsonl.12.tmp").exists()  # gw1 may be writing it now
