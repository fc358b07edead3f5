"""Metrics over the record tables: pure functions of polars frames.

The three production metrics of seed 002 §19.7 and what DESIGN §7 adds:

- **cached input share** = Σ cache read ÷ Σ input, over requests that report
  cache fields (a null cache field is "not reported" and the request is left
  out; a 0 is a miss and counts). Never a mean of per-request ratios: a 100-token
  hit must not weigh as much as a 100,000-token miss.
- the same share over **cache-eligible** requests only (input ≥ the model's
  minimum cacheable prompt), so a release that sends shorter prompts is not
  blamed for misses no provider would have served.
- **time to first token** p50 / p95 by model x context-length bucket.
- **cost per successful task** = cost of every attempt, failed and retried ones
  included ÷ runs that passed.
- retries per task, stop-state distribution, and cache misses broken down by the
  version dimension whose change caused them.

Example::

    share = cached_input_share(results.attempts)     # None when nothing reports cache fields
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import polars as pl

from fakes import AnthropicCacheRules, OpenAICacheRules
from harness.ports import DIALECTS, family_of
from reports import _schema as s

Frame = pl.DataFrame | pl.LazyFrame

# Upper bounds (exclusive) of the context-length buckets, in prompt tokens.
CONTEXT_BUCKETS: tuple[tuple[int, str], ...] = (
    (1_024, "<1k"), (8_192, "1k-8k"), (32_768, "8k-32k"), (131_072, "32k-128k"),
)
_LAST_BUCKET = ">=128k"
# An Enum sorts in bucket order, not alphabetically ("<1k" before "1k-8k").
CONTEXT_TYPE = pl.Enum([label for _, label in CONTEXT_BUCKETS] + [_LAST_BUCKET, "not reported"])

# Which version dimension (seed 002 §19.7's per-request version fields) a changed prompt
# segment (fakes._segments.Segment) stands for.
SEGMENT_DIMENSION: dict[str, str] = {
    "model": s.MODEL, "system": s.PROMPT_VERSION, "tools": s.TOOL_LIST_VERSION,
    "instructions": s.INSTRUCTIONS_VERSION, "compaction": s.COMPACTION_VERSION,
    "history": "history",
}


def _lazy(frame: Frame) -> pl.LazyFrame:
    return frame.lazy() if isinstance(frame, pl.DataFrame) else frame


def _ratio(num: float | None, den: float | None) -> float | None:
    """``num / den``, or None when nothing was counted (0 / 0 is no information)."""
    if num is None or not den:
        return None
    return float(num) / float(den)


def _reports_cache() -> pl.Expr:
    return pl.col(s.CACHE_READ).is_not_null() & pl.col(s.INPUT_TOKENS).is_not_null()


def cached_input_share(attempts: Frame) -> float | None:
    """Σ cache read ÷ Σ input over requests that report cache fields.

    >>> cached_input_share(pl.DataFrame({
    ...     "gen_ai.usage.input_tokens": [1000, 3000, 500],
    ...     "gen_ai.usage.cache_read.input_tokens": [0, 3000, None]}))
    0.75
    """
    totals = (_lazy(attempts).filter(_reports_cache())
              .select(pl.col(s.CACHE_READ).sum(), pl.col(s.INPUT_TOKENS).sum()).collect())
    return _ratio(totals.item(0, 0), totals.item(0, 1))


def min_cache_tokens(model: str, provider: str | None) -> int:
    """The smallest prompt the provider caches for ``model`` (the fakes' documented rules).

    >>> min_cache_tokens("fake-haiku", "anthropic"), min_cache_tokens("fake-gpt", "openai")
    (2048, 1024)
    >>> min_cache_tokens("fake-flash", "gemini")  # cached by the automatic-prefix rules
    1024
    """
    if provider in DIALECTS and family_of(provider) == "openai":
        return OpenAICacheRules().min_tokens
    return AnthropicCacheRules().min_tokens_for(model)


def with_cache_minimum(attempts: Frame) -> pl.LazyFrame:
    """``attempts`` with a ``_min_cache_tokens`` column, one rule lookup per model."""
    lazy = _lazy(attempts)
    pairs = lazy.select(s.MODEL, s.PROVIDER).unique().collect()
    table = pl.DataFrame(
        {s.MODEL: pairs[s.MODEL], s.PROVIDER: pairs[s.PROVIDER],
         "_min_cache_tokens": [min_cache_tokens(m or "", p) for m, p in pairs.iter_rows()]},
        schema={s.MODEL: pl.String, s.PROVIDER: pl.String, "_min_cache_tokens": pl.Int64},
    )
    return lazy.join(table.lazy(), on=[s.MODEL, s.PROVIDER], how="left", nulls_equal=True,
                     maintain_order="left")


def cache_eligible() -> pl.Expr:
    """Requests long enough to be cached at all, that report cache fields."""
    return _reports_cache() & (pl.col(s.INPUT_TOKENS) >= pl.col("_min_cache_tokens"))


def cached_input_share_eligible(attempts: Frame) -> float | None:
    """:func:`cached_input_share` over cache-eligible requests only (input ≥ model minimum).

    >>> cached_input_share_eligible(pl.DataFrame({
    ...     "gen_ai.request.model": ["fake-gpt"] * 2, "gen_ai.provider.name": ["openai"] * 2,
    ...     "gen_ai.usage.input_tokens": [100, 2000],
    ...     "gen_ai.usage.cache_read.input_tokens": [0, 1024]}))
    0.512
    """
    totals = (with_cache_minimum(attempts).filter(cache_eligible())
              .select(pl.col(s.CACHE_READ).sum(), pl.col(s.INPUT_TOKENS).sum()).collect())
    return _ratio(totals.item(0, 0), totals.item(0, 1))


def context_bucket(tokens: pl.Expr) -> pl.Expr:
    """The context-length bucket label of a prompt size; ``not reported`` for null.

    >>> pl.select(context_bucket(pl.lit(5000))).item()
    '1k-8k'
    """
    expr: pl.Expr = pl.lit(_LAST_BUCKET)
    for bound, label in reversed(CONTEXT_BUCKETS):
        expr = pl.when(tokens < bound).then(pl.lit(label)).otherwise(expr)
    return pl.when(tokens.is_null()).then(pl.lit("not reported")).otherwise(expr).cast(CONTEXT_TYPE)


def ttft_by_model_and_context(attempts: Frame) -> pl.DataFrame:
    """TTFT p50 / p95 (seconds) and request count per model x context bucket.

    Only attempts that received a first byte count: a request that never
    streamed has no time to first token (its failure shows in cost and retries).
    """
    return (_lazy(attempts).filter(pl.col(s.TTFT).is_not_null())
            .group_by(pl.col(s.MODEL), context_bucket(pl.col(s.INPUT_TOKENS)).alias("context"))
            .agg(pl.len().alias("requests"),
                 pl.col(s.TTFT).quantile(0.5, "linear").alias("ttft_p50"),
                 pl.col(s.TTFT).quantile(0.95, "linear").alias("ttft_p95"))
            .sort(s.MODEL, "context").collect())


def cost_per_successful_task(runs: Frame, attempts: Frame) -> float | None:
    """Cost of every attempt (failed ones included) ÷ runs that passed.

    None when no run passed, or when an attempt's model has no price: a total
    that leaves some requests out is not reported as if it were complete.

    >>> cost_per_successful_task(pl.DataFrame({"harness.passed": [True, False]}),
    ...                          pl.DataFrame({"harness.cost_usd": [0.25, 0.5, 0.25]}))
    1.0
    >>> cost_per_successful_task(pl.DataFrame({"harness.passed": [True]}),
    ...                          pl.DataFrame({"harness.cost_usd": [0.25, None]}))
    """
    cost, unpriced = _lazy(attempts).select(
        pl.col(s.COST_USD).sum(), pl.col(s.COST_USD).null_count().alias("unpriced"),
    ).collect().row(0)
    if unpriced:
        return None
    passed = _lazy(runs).select(pl.col(s.PASSED).sum()).collect().item()
    return _ratio(cost, passed)


def retries_per_task(runs: Frame) -> float | None:
    """Mean retries per run (every retry layer counted by the runner).

    >>> retries_per_task(pl.DataFrame({"harness.retries": [0, 3]}))
    1.5
    """
    value = _lazy(runs).select(pl.col(s.RETRIES).mean()).collect().item()
    return None if value is None else float(value)


def stop_state_distribution(runs: Frame) -> pl.DataFrame:
    """Runs per stop state (``none`` for a run that never stopped), most frequent first."""
    return (_lazy(runs).group_by(pl.col(s.STOP_STATE).fill_null("none"))
            .agg(pl.len().alias("runs")).sort("runs", s.STOP_STATE, descending=[True, False])
            .collect())


def miss_reasons(attempts: Frame) -> pl.DataFrame:
    """Cache misses by reason and by the version dimension a ``prefix_changed`` points at.

    >>> miss_reasons(pl.DataFrame({"harness.cache_miss": [
    ...     "prefix_changed:tools", "cold", None]})).rows()
    [('cold', None, 1), ('prefix_changed:tools', 'harness.tool_list_version', 1)]
    """
    label = pl.col(s.CACHE_MISS)
    segment = label.str.extract(r"^prefix_changed:(.+)$", 1)
    return (_lazy(attempts).filter(label.is_not_null())
            .select(label.alias("reason"),
                    segment.replace_strict(SEGMENT_DIMENSION, default=segment)
                    .alias("dimension"))
            .group_by("reason", "dimension").agg(pl.len().alias("misses"))
            .sort("reason", "dimension", nulls_last=False).collect())


def pass_rate(runs: Frame) -> float | None:
    """Share of runs that passed (no invariant failed, the crash was reached)."""
    value = _lazy(runs).select(pl.col(s.PASSED).cast(pl.Float64).mean()).collect().item()
    return None if value is None else float(value)


# -- paired units, for comparison and bootstrap -------------------------------------------


Direction = Literal["higher_is_better", "lower_is_better"]
ThresholdKind = Literal["absolute", "relative"]


@dataclass(frozen=True)
class Metric:
    """A ratio of sums over runs: Σ ``numerator`` ÷ Σ ``denominator`` of :func:`unit_sums`.

    ``threshold`` is an absolute change (shares, rates) or one relative to the
    baseline (costs, times, counts).
    """

    name: str
    numerator: str
    denominator: str
    direction: Direction
    threshold: ThresholdKind
    label: str


METRICS: tuple[Metric, ...] = (
    Metric("pass_rate", "passed", "runs", "higher_is_better", "absolute", "pass rate"),
    Metric("cached_input_share", "cache_read", "cache_input", "higher_is_better", "absolute",
           "cached input share"),
    Metric("cached_input_share_eligible", "eligible_cache_read", "eligible_input",
           "higher_is_better", "absolute", "cached input share (cache-eligible requests)"),
    Metric("cost_per_successful_task", "cost", "passed", "lower_is_better", "relative",
           "cost per successful task (USD)"),
    Metric("retries_per_task", "retries", "runs", "lower_is_better", "relative",
           "retries per task"),
    Metric("attempts_per_task", "attempts", "runs", "lower_is_better", "relative",
           "request attempts per task"),
    Metric("ttft_mean_seconds", "ttft_sum", "ttft_n", "lower_is_better", "relative",
           "mean time to first token (s)"),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)

UNIT_COLUMNS: tuple[str, ...] = tuple(sorted(
    {m.numerator for m in METRICS} | {m.denominator for m in METRICS}))


def unit_sums(runs: Frame, attempts: Frame) -> pl.DataFrame:
    """One row per run key (:data:`~reports._schema.PAIR_KEY`) with every metric's sums.

    Metrics of a set of runs are then ratios of column sums, which is what the
    bootstrap resamples.
    """
    per_case = (with_cache_minimum(attempts).group_by(s.CASE_ID, s.SEED).agg(
        pl.col(s.CACHE_READ).filter(_reports_cache()).sum().alias("cache_read"),
        pl.col(s.INPUT_TOKENS).filter(_reports_cache()).sum().alias("cache_input"),
        pl.col(s.CACHE_READ).filter(cache_eligible()).sum().alias("eligible_cache_read"),
        pl.col(s.INPUT_TOKENS).filter(cache_eligible()).sum().alias("eligible_input"),
        # NaN, not 0, when an attempt is unpriced: it carries through every sum and
        # bootstrap replicate, so the cost metric is "not reported" rather than free.
        pl.when(pl.col(s.COST_USD).is_null().any()).then(float("nan"))
        .otherwise(pl.col(s.COST_USD).sum()).alias("cost"),
        pl.col(s.TTFT).sum().alias("ttft_sum"),
        pl.col(s.TTFT).count().alias("ttft_n"),
    ))
    units = (_lazy(runs).select(*s.PAIR_KEY, s.CASE_ID,
                                pl.col(s.PASSED).cast(pl.Float64).alias("passed"),
                                pl.lit(1.0).alias("runs"),
                                pl.col(s.RETRIES).cast(pl.Float64).alias("retries"),
                                pl.col(s.ATTEMPTS).cast(pl.Float64).alias("attempts"))
             .join(per_case, on=[s.CASE_ID, s.SEED], how="left", maintain_order="left"))
    return units.select(*s.PAIR_KEY, *(pl.col(c).cast(pl.Float64).fill_null(0.0)
                                       for c in UNIT_COLUMNS)).collect()


def metric_value(units: pl.DataFrame, metric: Metric) -> float | None:
    """The metric over ``units``: a ratio of sums, None when its denominator is 0 or a
    numerator was not reported (NaN, such as the cost of an unpriced model)."""
    numerator = float(units[metric.numerator].sum())
    return None if math.isnan(numerator) else _ratio(
        numerator, float(units[metric.denominator].sum()))


def headline(runs: Frame, attempts: Frame, names: Iterable[str] = METRIC_NAMES
             ) -> dict[str, float | None]:
    """Every named metric of one release, by name."""
    units = unit_sums(runs, attempts)
    return {m.name: metric_value(units, m) for m in METRICS if m.name in set(names)}
