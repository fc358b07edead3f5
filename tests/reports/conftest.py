"""Fixtures for the report tests: small result folders in the runner's own column names.

The columns are those of harness/_output.py. ``case``, ``attempt`` and
``write_folder`` are fixtures that return builders (test folders are not packages here:
``tests/reports`` would shadow the ``reports`` package).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

CASE_SCHEMA = pl.Schema({
    "scenario": pl.String, "case_id": pl.String, "source": pl.String, "seed": pl.Int64,
    "crash_point": pl.String, "crash_when": pl.String, "crash_class": pl.String,
    "crash_during_recovery": pl.Boolean, "crash_reached": pl.Boolean, "passed": pl.Boolean,
    "stop_state": pl.String, "stop_reason": pl.String, "digest": pl.String,
    "duplicates": pl.Int64, "retries": pl.Int64, "virtual_seconds": pl.Float64,
    "error": pl.String, "failed_invariants": pl.List(pl.String),
    "unknown_invariants": pl.List(pl.String),
    "side_effects": pl.List(pl.Struct({"tool": pl.String, "count": pl.Int64})),
    "verdicts": pl.List(pl.Struct({"invariant": pl.String, "status": pl.String,
                                   "message": pl.String, "evidence": pl.List(pl.String)})),
})
ATTEMPT_SCHEMA = pl.Schema({
    "scenario": pl.String, "case_id": pl.String, "seed": pl.Int64, "request_index": pl.Int64,
    "turn": pl.Int64, "attempt": pl.Int64, "model": pl.String, "started_at": pl.Float64,
    "first_byte_at": pl.Float64, "ended_at": pl.Float64, "outcome": pl.String,
    "input_tokens": pl.Int64, "cache_read_tokens": pl.Int64, "cache_write_tokens": pl.Int64,
    "output_tokens": pl.Int64, "cache_miss": pl.String, "retry_layer": pl.String,
})


def _case(scenario: str, *, seed: int = 1, crash: str | None = None, passed: bool = True,
         stop_state: str | None = "complete", stop_reason: str = "done", duplicates: int = 0,
         retries: int = 0, verdicts: Sequence[tuple[str, str]] = (), **extra: Any
         ) -> dict[str, Any]:
    """One runner case row; ``crash`` is ``point:when:class``."""
    point, when, klass = crash.rsplit(":", 2) if crash else (None, None, None)
    row: dict[str, Any] = {
        "scenario": scenario, "case_id": f"{scenario}[{crash}]" if crash else scenario,
        "source": f"scenarios/{scenario}.yaml", "seed": seed, "crash_point": point,
        "crash_when": when, "crash_class": klass,
        "crash_during_recovery": False if crash else None, "crash_reached": True,
        "passed": passed, "stop_state": stop_state, "stop_reason": stop_reason, "digest": "d",
        "duplicates": duplicates, "retries": retries, "virtual_seconds": 1.0, "error": None,
        "failed_invariants": [i for i, st in verdicts if st == "fail"],
        "unknown_invariants": [i for i, st in verdicts if st == "unknown"],
        "side_effects": [],
        "verdicts": [{"invariant": i, "status": st, "message": f"{i} {st}", "evidence": []}
                     for i, st in verdicts],
    }
    row.update(extra)
    return row


def _attempt(case_row: dict[str, Any], index: int = 0, *, attempt_no: int = 1,
            model: str = "fake-gpt", input_tokens: int | None = 2000,
            cache_read: int | None = 0, cache_write: int | None = 0, output: int | None = 100,
            ttft: float | None = 0.5, outcome: str = "ok", miss: str | None = None
            ) -> dict[str, Any]:
    """One runner attempt row of ``case_row``."""
    return {
        "scenario": case_row["scenario"], "case_id": case_row["case_id"],
        "seed": case_row["seed"], "request_index": index, "turn": 1, "attempt": attempt_no,
        "model": model, "started_at": 10.0, "first_byte_at": None if ttft is None else 10 + ttft,
        "ended_at": 12.0, "outcome": outcome, "input_tokens": input_tokens,
        "cache_read_tokens": cache_read, "cache_write_tokens": cache_write,
        "output_tokens": output, "cache_miss": miss, "retry_layer": None,
    }


def _write_folder(folder: Path, cases: Sequence[dict[str, Any]],
                 attempts: Sequence[dict[str, Any]], *, fmt: str = "parquet",
                 manifest: dict[str, Any] | None = None) -> Path:
    """A result folder as the runner writes it: manifest, cases and attempts."""
    folder.mkdir(parents=True)
    body = manifest if manifest is not None else {
        "format_version": 1, "harness_version": "0.1.0", "seed_override": None,
        "crash": "all", "scenarios": []}
    (folder / "manifest.json").write_text(json.dumps(body), encoding="utf-8")
    # Columns the runner may add later (``skipped``) are written when a row has them.
    extra = {key: pl.Boolean for row in cases for key in row if key not in CASE_SCHEMA}
    case_schema = pl.Schema({**CASE_SCHEMA, **extra})
    rows = [{key: row.get(key) for key in case_schema} for row in cases]
    tables = {"cases": pl.DataFrame(rows, schema=case_schema, orient="row"),
              "attempts": pl.DataFrame(list(attempts), schema=ATTEMPT_SCHEMA, orient="row")}
    for stem, frame in tables.items():
        if fmt == "parquet":
            frame.write_parquet(folder / f"{stem}.parquet")
        else:
            frame.write_ndjson(folder / f"{stem}.jsonl")
    return folder


@pytest.fixture
def case() -> Callable[..., dict[str, Any]]:
    """The builder of one runner case row."""
    return _case


@pytest.fixture
def attempt() -> Callable[..., dict[str, Any]]:
    """The builder of one runner attempt row."""
    return _attempt


@pytest.fixture
def write_folder(tmp_path: Path) -> Callable[..., Path]:
    """``write_folder(name, cases, attempts, fmt=..., manifest=...)`` -> the folder."""

    def write(name: str, *args: Any, **kwargs: Any) -> Path:
        return _write_folder(tmp_path / name, *args, **kwargs)

    return write


RELEASES = "harness.examples.releases"


@pytest.fixture(scope="session")
def release_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release-comparison demonstration (README "Comparing releases"), run once.

    Two configurations of the reference agent run the shipped cache scenarios as two
    releases; ``report/`` is what ``harness compare --out`` writes, ``gate-report/`` what
    ``harness gate --out`` writes (the gate fails with exit 5 on the regression).
    """
    from harness._cli import main

    root = tmp_path_factory.mktemp("releases")
    suite = str(Path(__file__).resolve().parents[2] / "scenarios" / "cache")
    for release, factory in (("baseline", "baseline"), ("candidate", "volatile_system_prompt")):
        assert main(["run", suite, "--agent", f"{RELEASES}:{factory}",
                     "--out", str(root / release)]) == 0
    folders = [str(root / "baseline"), str(root / "candidate")]
    assert main(["compare", *folders, "--out", str(root / "report")]) == 0
    assert main(["gate", *folders, "--out", str(root / "gate-report")]) == 5
    return root
