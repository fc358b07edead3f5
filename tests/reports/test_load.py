"""Loading a result folder: the column mapping, null kept apart from 0, cost, bad input."""

import json
from pathlib import Path

import polars as pl
import pytest

from reports import ATTEMPT_SCHEMA, NOT_REPORTED, RUN_SCHEMA, ReportError, load_results


def test_a_folder_loads_into_our_schemas_with_runner_values_mapped(write_folder, case, attempt):
    row = case("s", crash="journal:fsync#1:after:unsynced_lost")
    folder = write_folder("main", [row], [attempt(row, input_tokens=3000, cache_read=2000,
                                                  cache_write=500, output=100, ttft=0.25)])
    results = load_results(folder)
    assert results.release == "main"
    assert results.attempts.schema == ATTEMPT_SCHEMA
    assert results.runs.schema == RUN_SCHEMA
    got = results.attempts.row(0, named=True)
    assert got["gen_ai.usage.input_tokens"] == 3000
    assert got["gen_ai.usage.cache_read.input_tokens"] == 2000
    assert got["gen_ai.usage.cache_creation.input_tokens"] == 500
    assert got["harness.usage.uncached_input_tokens"] == 500
    assert got["harness.usage.cache_write_5m_tokens"] == 500
    assert got["gen_ai.provider.name"] == "openai"
    assert got["gen_ai.response.time_to_first_chunk"] == pytest.approx(0.25)
    assert got["harness.crash_label"] == "journal:fsync#1:after:unsynced_lost"
    assert got["harness.attempt_id"] == "s[journal:fsync#1:after:unsynced_lost]#0.1"
    assert results.runs["harness.crash_label"].to_list() == ["journal:fsync#1:after:unsynced_lost"]


def test_cost_comes_from_the_dated_per_bucket_prices(write_folder, case, attempt):
    # fake-sonnet: $3 in, $0.30 cache read, $3.75 cache write (5 min), $15 out, per million.
    row = case("s")
    folder = write_folder("main", [row], [attempt(
        row, model="fake-sonnet", input_tokens=1_000_000, cache_read=500_000,
        cache_write=200_000, output=100_000)])
    cost = load_results(folder).attempts["harness.cost_usd"].item()
    assert cost == pytest.approx(0.3 * 3 + 0.5 * 0.3 + 0.2 * 3.75 + 0.1 * 15)


def test_fields_the_runner_does_not_report_are_null_not_zero(write_folder, case, attempt):
    row = case("s")
    folder = write_folder("main", [row], [attempt(row, cache_read=None, cache_write=None)])
    got = load_results(folder).attempts.row(0, named=True)
    assert got["gen_ai.usage.cache_read.input_tokens"] is None
    assert got["harness.usage.uncached_input_tokens"] is None
    assert all(got[name] is None for name in NOT_REPORTED)


def test_jsonl_is_read_when_there_is_no_parquet(write_folder, case, attempt):
    row = case("s")
    folder = write_folder("main", [row], [attempt(row)], fmt="jsonl")
    results = load_results(folder, release="v2")
    assert (results.source_format, results.release) == ("jsonl", "v2")
    assert results.attempts.height == 1


def test_an_unknown_model_is_unpriced_not_an_error(write_folder, case, attempt):
    row = case("s")
    folder = write_folder("main", [row], [attempt(row, model="mystery-1")])
    results = load_results(folder)
    assert results.unpriced_models == ("mystery-1",)
    assert results.attempts["harness.cost_usd"].to_list() == [None]


def test_a_missing_folder_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ReportError, match=r"^.*/nope: no such result folder; expected a folder "
                                          r"written by 'harness run --out DIR'"):
        load_results(tmp_path / "nope")


def test_a_folder_without_cases_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ReportError, match=r"no cases.parquet or cases.jsonl"):
        load_results(tmp_path)


def test_an_empty_run_is_a_clear_error(write_folder):
    with pytest.raises(ReportError, match=r"empty run: no cases were recorded"):
        load_results(write_folder("main", [], []))


def test_an_incompatible_format_version_is_a_clear_error(write_folder, case):
    row = case("s")
    folder = write_folder("old", [row], [], manifest={"format_version": 99})
    with pytest.raises(ReportError, match=r"result format version 99 is not supported; "
                                          r"expected one of \[1\]"):
        load_results(folder)


def test_a_broken_manifest_is_a_clear_error(write_folder, case):
    folder = write_folder("main", [case("s")], [])
    (folder / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(ReportError, match=r"not a readable JSON manifest"):
        load_results(folder)


def test_several_worker_files_are_stacked(write_folder, case, attempt):
    a, b = case("a"), case("b")
    folder = write_folder("main", [a], [attempt(a)])
    (folder / "cases.parquet").rename(folder / "cases-gw0.parquet")
    pl.read_parquet(folder / "cases-gw0.parquet").with_columns(
        pl.lit("b").alias("scenario"), pl.lit("b").alias("case_id"),
    ).write_parquet(folder / "cases-gw1.parquet")
    assert sorted(load_results(folder).runs["harness.scenario"].to_list()) == ["a", "b"]
    assert json.loads((folder / "manifest.json").read_text())["format_version"] == 1
    assert b["scenario"] == "b"
