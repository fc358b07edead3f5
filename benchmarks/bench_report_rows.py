"""Build the full release comparison over 1,000,000 attempt rows; compare with a plain loop.

Two releases of 100,000 runs and 500,000 attempts each are written as result
folders (Parquet, in the runner's column names), then timed: load both, pair,
bootstrap every metric (1,000 resamples), evaluate the gate, and write
Markdown, HTML and JSON. Targets: under 10 s and under 2 GiB peak memory.

For scale, a naive pure-Python loop computes the headline metrics (cached
input share, cost per successful task, TTFT p95) over a 100,000-row sample;
the ratio of rows per second is printed beside it.

Run::

    .venv/bin/python benchmarks/bench_report_rows.py [--rows 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from _quick import scaled

from harness.ports import price_of
from reports import (
    cached_input_share,
    compare,
    cost_per_successful_task,
    evaluate,
    load_results,
    write_report,
)

ATTEMPTS_PER_RUN = 5
MODELS = ("fake-gpt", "fake-sonnet", "fake-haiku")


def _strings(values: np.ndarray) -> pl.Series:
    """A nullable string column (numpy keeps None only in object arrays)."""
    return pl.Series(list(values), dtype=pl.String)


def _cases(rng: np.random.Generator, runs: int, pass_rate: float) -> pl.DataFrame:
    scenario = np.char.add("s", (np.arange(runs) % 500).astype(str))
    seed = np.arange(runs) // 500
    crashed = np.arange(runs) % 3 == 0
    point = np.where(crashed, np.char.add("journal:fsync#", (np.arange(runs) % 7).astype(str)),
                     None)
    label = np.where(crashed, np.char.add(point.astype(str), ":after:unsynced_lost"), None)
    case_id = np.where(crashed, np.char.add(np.char.add(np.char.add(scenario, "["),
                                                        label.astype(str)), "]"), scenario)
    return pl.DataFrame({
        "scenario": scenario, "case_id": case_id, "seed": seed,
        "crash_point": _strings(point), "crash_when": _strings(np.where(crashed, "after", None)),
        "crash_class": _strings(np.where(crashed, "unsynced_lost", None)),
        "crash_during_recovery": pl.Series(list(np.where(crashed, False, None)),
                                           dtype=pl.Boolean),
        "crash_reached": np.ones(runs, bool), "passed": rng.random(runs) < pass_rate,
        "stop_state": rng.choice(["complete", "blocked", "failed"], runs, p=[0.8, 0.1, 0.1]),
        "stop_reason": np.full(runs, "done"), "duplicates": np.zeros(runs, np.int64),
        "retries": rng.poisson(0.5, runs), "virtual_seconds": rng.random(runs) * 60,
        "error": pl.Series([None] * runs, dtype=pl.String),
        "failed_invariants": pl.Series([[]] * runs, dtype=pl.List(pl.String)),
        "unknown_invariants": pl.Series([[]] * runs, dtype=pl.List(pl.String)),
    })


def _attempts(rng: np.random.Generator, cases: pl.DataFrame, cache_hit: float) -> pl.DataFrame:
    n = cases.height * ATTEMPTS_PER_RUN
    owner = np.repeat(np.arange(cases.height), ATTEMPTS_PER_RUN)
    inputs = rng.integers(500, 60_000, n)
    read = (inputs * cache_hit * rng.random(n)).astype(np.int64)
    started = rng.random(n) * 100
    misses = rng.choice(["cold", "prefix_changed:tools", "prefix_changed:system", "ttl_expired",
                         "server_miss"], n)
    return pl.DataFrame({
        "scenario": cases["scenario"].gather(owner), "case_id": cases["case_id"].gather(owner),
        "seed": cases["seed"].gather(owner),
        "request_index": np.tile(np.arange(ATTEMPTS_PER_RUN), cases.height),
        "turn": np.ones(n, np.int64), "attempt": np.ones(n, np.int64),
        "model": rng.choice(MODELS, n), "started_at": started,
        "first_byte_at": started + rng.gamma(2.0, 0.3, n), "ended_at": started + 5,
        "outcome": rng.choice(["ok", "error"], n, p=[0.9, 0.1]), "input_tokens": inputs,
        "cache_read_tokens": read, "cache_write_tokens": np.zeros(n, np.int64),
        "output_tokens": rng.integers(10, 2000, n),
        "cache_miss": _strings(np.where(read < inputs // 2, misses, None)),
        "retry_layer": pl.Series([None] * n, dtype=pl.String),
    })


def write_release(folder: Path, rows: int, seed: int, *, pass_rate: float,
                  cache_hit: float) -> None:
    """A result folder of ``rows`` attempts, as the runner writes it."""
    rng = np.random.default_rng(seed)
    cases = _cases(rng, rows // ATTEMPTS_PER_RUN, pass_rate)
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text('{"format_version": 1, "harness_version": "0.1.0"}')
    cases.write_parquet(folder / "cases.parquet")
    _attempts(rng, cases, cache_hit).write_parquet(folder / "attempts.parquet")


def naive_metrics(rows: list[dict[str, Any]], passed: int) -> tuple[float, float, float]:
    """The headline metrics with a plain loop over dicts: the baseline for the ratio."""
    read = total = 0
    cost = 0.0
    ttfts = []
    for row in rows:
        if row["cache_read_tokens"] is not None:
            read += row["cache_read_tokens"]
            total += row["input_tokens"]
        price = price_of(row["model"])
        uncached = row["input_tokens"] - row["cache_read_tokens"]
        cost += (uncached * float(price.uncached_input)
                 + row["cache_read_tokens"] * float(price.cache_read)
                 + row["output_tokens"] * float(price.output)) / 1e6
        if row["first_byte_at"] is not None:
            ttfts.append(row["first_byte_at"] - row["started_at"])
    ttfts.sort()
    return read / total, cost / max(passed, 1), ttfts[int(0.95 * (len(ttfts) - 1))]


def _same_three(results: Any) -> float:
    """Seconds for the naive loop's three metrics, computed by the reports functions."""
    start = time.perf_counter()
    cached_input_share(results.attempts)
    cost_per_successful_task(results.runs, results.attempts)
    results.attempts["gen_ai.response.time_to_first_chunk"].quantile(0.95)
    return time.perf_counter() - start


def _peak_mib() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=scaled(1_000_000, 2_000),
                        help="attempt rows, both releases")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_release(root / "main", args.rows // 2, 1, pass_rate=0.9, cache_hit=0.8)
        write_release(root / "cand", args.rows // 2, 2, pass_rate=0.88, cache_hit=0.6)
        before = _peak_mib()
        start = time.perf_counter()
        comparison = compare(load_results(root / "main"), load_results(root / "cand"))
        gate = evaluate(comparison, {"cost_per_successful_task": 0.1})
        write_report(comparison, gate, root / "report")
        elapsed = time.perf_counter() - start
        rows = args.rows
        print(f"full comparison: {rows:,} attempt rows in {elapsed:.2f} s "
              f"({rows / elapsed:,.0f} rows/s); peak RSS {_peak_mib():,.0f} MiB "
              f"(before: {before:,.0f} MiB); gate exit {gate.exit_code}")
        sample = pl.read_parquet(root / "main" / "attempts.parquet").head(100_000).to_dicts()
        passed = int(pl.read_parquet(root / "main" / "cases.parquet")["passed"].sum())
        start = time.perf_counter()
        naive_metrics(sample, passed)
        naive = time.perf_counter() - start
        same = _same_three(comparison.baseline)
        naive_rate, same_rate = len(sample) / naive, comparison.baseline.attempts.height / same
        print(f"three headline metrics: naive loop {naive_rate:,.0f} rows/s over "
              f"{len(sample):,} rows; polars {same_rate:,.0f} rows/s over "
              f"{comparison.baseline.attempts.height:,} rows ({same_rate / naive_rate:.1f}x); "
              f"full report with 1,000-resample bootstrap {rows / elapsed:,.0f} rows/s "
              f"({rows / elapsed / naive_rate:.2f}x the naive three-metric rate)")


if __name__ == "__main__":
    main()
