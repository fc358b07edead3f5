"""One run over several machines: ``harness run --shard K/N`` takes a share of the cases
chosen by a hash of each case's id, and ``harness merge`` writes from the shards' folders
the very files the whole run writes, or refuses shards that are not one run's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness._cli import main
from harness._output import result_from_row
from harness._shard import Shard, shard_number
from harness.runner._reached import never_reached_declared
from tests.cli.conftest import CRASHY


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.fixture
def suite(write: Callable[..., Path], tmp_path: Path) -> Path:
    """Seven cases: five of crashy, hello, and expects-blocked (which fails)."""
    for name in ("crashy", "hello", "expects-blocked"):
        write(name, "suite")
    return tmp_path / "suite"


def run_shards(paths: list[str], count: int, tmp_path: Path, *options: str) -> list[Path]:
    folders = []
    for index in range(1, count + 1):
        folder = tmp_path / f"shard-{index}-of-{count}"
        main(["run", *paths, "--shard", f"{index}/{count}", "--out", str(folder), *options])
        folders.append(folder)
    return folders


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_merged_shards_are_the_whole_run_byte_for_byte(
        suite: Path, tmp_path: Path, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    assert main(["run", str(suite), "--out", str(whole)]) == 1  # expects-blocked fails
    shards = run_shards([str(suite)], count, tmp_path)
    shares = [json.loads((s / "manifest.json").read_text())["shard"]["cases"] for s in shards]
    assert sorted(i for share in shares for i in share) == list(range(7))
    capsys.readouterr()
    # Any order of the folders; the exit code is the whole run's.
    assert main(["merge", str(merged), *map(str, reversed(shards))]) == 1
    captured = capsys.readouterr()
    assert files(merged) == files(whole)
    assert "FAILED expects-blocked" in captured.err
    assert captured.out.splitlines()[-1].split()[:5] == ["total", "7", "6", "1", "0"]
    # The reports read it as the run it is: gated against the whole run, it is the same.
    assert main(["gate", str(whole), str(whole)]) == 3  # expects-blocked broke I4
    alike = capsys.readouterr().out
    assert main(["gate", str(whole), str(merged)]) == 3
    assert capsys.readouterr().out == alike
    assert "PASS     no_dropped_cases: all 7 baseline runs ran in the candidate" in alike
    assert main(["compare", str(whole), str(merged), "--out", str(tmp_path / "report"),
                 "--format", "json"]) == 0


def test_a_case_keeps_its_shard_when_scenarios_are_added_before_it() -> None:
    ids = ["crashy", "crashy[journal:fsync#1:after:unsynced_lost]", "hello"]
    grown = ["aardvark", "aardvark[x:fsync#1:after:torn]", *ids]
    for count in (2, 3, 5):
        for index in range(1, count + 1):
            shard = Shard(index, count)
            assert [ids[i] for i in shard.chosen(ids)] == \
                [grown[i] for i in shard.chosen(grown) if grown[i] in ids]
    assert shard_number("hello", 1) == 1


STRICT_CRASHY = CRASHY.replace("expect:\n", "expect:\n  invariants: [I3]\n")


def test_strict_is_judged_over_every_shard_not_each(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # I3 is judged by one crash case only; every other case leaves it unknown.
    scenario = tmp_path / "crashy.yaml"
    scenario.write_text(STRICT_CRASHY)
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    assert main(["run", str(scenario), "--strict", "--out", str(whole)]) == 0
    shards = run_shards([str(scenario)], 3, tmp_path, "--strict")
    alone = []
    for shard in shards:
        rows = [json.loads(line) for line in (shard / "cases.jsonl").read_text().splitlines()]
        alone += never_reached_declared([result_from_row(r) for r in rows], {"crashy": ["I3"]})
    # Judged shard by shard, some shard would call I3 never reached...
    assert [str(a) for a in alone if a.kind == "expectation"]
    capsys.readouterr()
    # ...but over all of them it was: the merged run passes, as the whole one does.
    assert main(["merge", str(merged), *map(str, shards)]) == 0
    assert "no case of any shard reached" not in capsys.readouterr().err
    assert files(merged) == files(whole)


def test_merge_strict_names_what_no_shard_reached(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "crashy.yaml"
    scenario.write_text(CRASHY.replace("journal:fsync#2]", "journal:fsync#2, history:fsync#1]"))
    shards = run_shards([str(scenario)], 2, tmp_path)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "lax"), *map(str, shards)]) == 0
    assert main(["merge", str(tmp_path / "strict"), *map(str, shards), "--strict"]) == 1
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "harness merge --strict: 1 thing(s) no case of any shard reached, so the run proves "
        "nothing of them:",
        "  crashy: crash point history:fsync#1 was never reached"]
    # A shard run with --strict leaves that check to the merge, which then makes it.
    strict = run_shards([str(scenario)], 2, tmp_path / "s", "--strict")
    assert "checked over every shard by 'harness merge'" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "merged-strict"), *map(str, strict)]) == 1


# ---------------------------------------------------------------------------- refusals


def refused(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(words) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: "), err
    assert err.count("\n") == 1, err
    return err


@pytest.fixture
def three(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    shards = run_shards([str(suite)], 3, tmp_path)
    capsys.readouterr()
    return shards


def test_merge_refuses_a_missing_shard_naming_it(three: list[Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "merged"
    err = refused(["merge", str(out), str(three[0]), str(three[2])], capsys)
    assert "shard(s) 2/3 missing" in err
    assert "--shard 2/3" in err
    assert not out.exists()  # nothing written


def test_merge_refuses_a_shard_given_twice(three: list[Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy-of-2"
    copy.mkdir()
    for name, data in files(three[1]).items():
        (copy / name).write_bytes(data)
    err = refused(["merge", str(tmp_path / "m"), *map(str, three), str(copy)], capsys)
    assert f"shard 2/3 is also {three[1]}" in err


def test_merge_refuses_shards_of_another_plan(suite: Path, three: list[Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    other = run_shards([str(suite)], 3, tmp_path / "seeded", "--seed", "7")
    capsys.readouterr()
    err = refused(["merge", str(tmp_path / "m"), str(three[0]), str(other[1]), str(three[2])],
                  capsys)
    assert "but it is of another: --seed was not given, now 7" in err
    two = run_shards([str(suite)], 2, tmp_path / "halves")
    capsys.readouterr()
    err = refused(["merge", str(tmp_path / "m"), str(three[0]), str(two[1])], capsys)
    assert "different numbers of shards" in err


def test_merge_refuses_a_scenario_changed_between_shards(
        suite: Path, three: list[Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "hello.yaml").write_text((suite / "hello.yaml").read_text() + "# edited\n")
    changed = run_shards([str(suite)], 3, tmp_path / "edited")
    capsys.readouterr()
    err = refused(["merge", str(tmp_path / "m"), str(three[0]), str(changed[1]),
                   str(three[2])], capsys)
    assert "hello.yaml changed since (its SHA-256 differs)" in err


def test_merge_refuses_an_interrupted_shard_and_a_whole_run(
        suite: Path, three: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.test_durable_results import Killed, kill_after

    cut = tmp_path / "cut"
    with monkeypatch.context() as patch:
        kill_after(patch, 1)
        with pytest.raises(Killed):
            main(["run", str(suite), "--shard", "2/3", "--out", str(cut)])
    capsys.readouterr()
    err = refused(["merge", str(tmp_path / "m"), str(three[0]), str(cut), str(three[2])],
                  capsys)
    assert "its run was interrupted (1 of 3 cases: a journal and no manifest)" in err
    assert f"--shard 2/3 --out {cut} --resume" in err
    # Resumed, it is the shard it was meant to be.
    assert main(["run", str(suite), "--shard", "2/3", "--out", str(cut), "--resume"]) == 0
    assert files(cut) == files(three[1])

    whole = tmp_path / "whole"
    main(["run", str(suite), "--out", str(whole)])
    capsys.readouterr()
    err = refused(["merge", str(tmp_path / "m"), str(whole)], capsys)
    assert "its run had no --shard" in err


def test_merge_refuses_a_shard_file_changed_since(three: list[Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cases = three[1] / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"passed": true', '"passed": false', 1))
    err = refused(["merge", str(tmp_path / "m"), *map(str, three)], capsys)
    assert "cases.jsonl changed since its run wrote it" in err


@pytest.mark.parametrize(("text", "why"), [
    ("0/3", "K must be between 1 and 3"), ("4/3", "K must be between 1 and 3"),
    ("1/0", "N must be at least 1"), ("a/b", "expected K/N"), ("2", "expected K/N"),
    ("-1/3", "expected K/N"), ("1/3/5", "expected K/N"),
])
def test_a_bad_shard_is_refused_before_anything_runs(
        suite: Path, tmp_path: Path, text: str, why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["run", str(suite), f"--shard={text}", "--out", str(tmp_path / "out")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --shard: got {text!r}" in err
    assert why in err
    assert not (tmp_path / "out").exists()
