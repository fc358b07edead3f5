"""Metric formulas on hand-computed examples."""

import polars as pl
import pytest

from reports import (
    cached_input_share,
    cached_input_share_eligible,
    cost_per_successful_task,
    load_results,
    miss_reasons,
    retries_per_task,
    stop_state_distribution,
    ttft_by_model_and_context,
)


@pytest.fixture
def results(write_folder, case, attempt):
    ok = case("ok", retries=1)
    bad = case("bad", passed=False, stop_state="failed", retries=3)
    attempts = [
        attempt(ok, 0, input_tokens=4000, cache_read=3000, ttft=0.2, miss=None),
        attempt(ok, 1, input_tokens=2000, cache_read=0, ttft=0.4, miss="prefix_changed:tools"),
        # Below the 1,024-token minimum: reports cache fields but could never hit.
        attempt(ok, 2, input_tokens=500, cache_read=0, ttft=0.6, miss="below_min"),
        # Reports no cache fields: left out of the share, not counted as a miss.
        attempt(bad, 0, input_tokens=10_000, cache_read=None, cache_write=None, ttft=None,
                outcome="error"),
        attempt(bad, 1, model="fake-haiku", input_tokens=3000, cache_read=0, ttft=1.0,
                miss="prefix_changed:system"),
    ]
    return load_results(write_folder("main", [ok, bad], attempts))


def test_cached_input_share_is_a_ratio_of_sums_over_reporting_requests(results):
    # (3000 + 0 + 0 + 0) / (4000 + 2000 + 500 + 3000); the null request is left out.
    assert cached_input_share(results.attempts) == pytest.approx(3000 / 9500)


def test_a_mean_of_ratios_would_differ(results):
    ratios = [3000 / 4000, 0, 0, 0]
    assert cached_input_share(results.attempts) != pytest.approx(sum(ratios) / len(ratios))


def test_null_cache_fields_are_not_zero():
    frame = pl.DataFrame({"gen_ai.usage.input_tokens": [1000, 1000],
                          "gen_ai.usage.cache_read.input_tokens": [500, None]})
    assert cached_input_share(frame) == 0.5
    zero = frame.with_columns(pl.col("gen_ai.usage.cache_read.input_tokens").fill_null(0))
    assert cached_input_share(zero) == 0.25


def test_nothing_reporting_cache_fields_gives_none():
    frame = pl.DataFrame({"gen_ai.usage.input_tokens": [1000],
                          "gen_ai.usage.cache_read.input_tokens": [None]},
                         schema={"gen_ai.usage.input_tokens": pl.Int64,
                                 "gen_ai.usage.cache_read.input_tokens": pl.Int64})
    assert cached_input_share(frame) is None


def test_eligible_share_drops_requests_below_the_model_minimum(results):
    # 500 tokens < 1,024 (fake-gpt) leaves; 3,000 >= 2,048 (fake-haiku) stays.
    assert cached_input_share_eligible(results.attempts) == pytest.approx(3000 / 9000)


def test_cost_per_successful_task_counts_failed_attempts(results):
    total = results.attempts["harness.cost_usd"].sum()
    failed_runs_cost = results.attempts.filter(pl.col("harness.case_id") == "bad")[
        "harness.cost_usd"].sum()
    assert failed_runs_cost > 0
    assert cost_per_successful_task(results.runs, results.attempts) == pytest.approx(total / 1)


def test_cost_per_successful_task_is_none_without_a_success():
    runs = pl.DataFrame({"harness.passed": [False]})
    assert cost_per_successful_task(runs, pl.DataFrame({"harness.cost_usd": [1.0]})) is None


def test_retries_per_task_and_stop_states(results):
    assert retries_per_task(results.runs) == 2.0
    assert stop_state_distribution(results.runs).rows() == [("complete", 1), ("failed", 1)]


def test_ttft_percentiles_by_model_and_context_bucket(results):
    rows = ttft_by_model_and_context(results.attempts).rows(named=True)
    by_key = {(r["gen_ai.request.model"], r["context"]): r for r in rows}
    assert set(by_key) == {("fake-gpt", "<1k"), ("fake-gpt", "1k-8k"), ("fake-haiku", "1k-8k")}
    assert by_key[("fake-gpt", "1k-8k")]["ttft_p50"] == pytest.approx(0.3)
    assert by_key[("fake-gpt", "1k-8k")]["ttft_p95"] == pytest.approx(0.39)
    assert by_key[("fake-gpt", "1k-8k")]["requests"] == 2


def test_misses_are_broken_down_by_the_dimension_that_changed(results):
    assert miss_reasons(results.attempts).rows() == [
        ("below_min", None, 1),
        ("prefix_changed:system", "harness.prompt_version", 1),
        ("prefix_changed:tools", "harness.tool_list_version", 1),
    ]
