"""Compare two releases on the same scenarios: paired runs, deltas, bootstrap intervals.

Runs are paired on scenario + seed + crash label (DESIGN §7). Every metric of
:data:`~reports._metrics.METRICS` is computed over the paired runs of both
releases, with the delta (candidate - baseline) and a seeded bootstrap 95%
interval of that delta. A baseline run with no partner in the candidate, or
whose partner was skipped, is listed in ``missing``: a reproduction case is
never dropped silently.

Example::

    comparison = compare(load_results(base), load_results(cand), seed=0)
    for m in comparison.metrics:
        print(m.name, m.delta, m.interval)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from harness import ReportError
from harness.runner import parse_world_point
from reports import _metrics as mx
from reports import _schema as s
from reports._bootstrap import bootstrap_deltas, percentile_interval
from reports._load import ResultSet
from reports._options import DEFAULT_RESAMPLES, DEFAULT_SEED

CONFIDENCE = 0.95
#: Below this many paired runs a bootstrap interval says little; reports warn.
MIN_PAIRED_RUNS = 10


@dataclass(frozen=True)
class MetricDelta:
    """One metric of both releases over the paired runs, and the bootstrap interval of the delta."""

    metric: mx.Metric
    baseline: float | None
    candidate: float | None
    interval: tuple[float, float] | None

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def delta(self) -> float | None:
        """Candidate - baseline; None when either side is undefined."""
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    def worse_by(self, change: float) -> float:
        """How much worse a change makes the metric (negative when it is better), in its unit.

        Relative metrics divide by the baseline: +0.10 means 10% worse.

        >>> m = mx.METRICS[3]  # cost per successful task: lower is better, relative
        >>> MetricDelta(m, 2.0, 2.5, None).worse_by(0.5)
        0.25
        """
        signed = change if self.metric.direction == "lower_is_better" else -change
        if self.metric.threshold == "relative":
            return signed / self.baseline if self.baseline else (np.inf if signed > 0 else 0.0)
        return signed

    def least_worse(self) -> float | None:
        """The interval's most favourable end, as :meth:`worse_by`; None without an interval.

        A regression "beyond the threshold on the bootstrap bound" means even
        this end is worse than the threshold.
        """
        if self.interval is None:
            return None
        return min(self.worse_by(self.interval[0]), self.worse_by(self.interval[1]))


def change_text(metric: MetricDelta) -> str | None:
    """The change as the table and the chart both print it: a relative metric in per cent.

    >>> change_text(MetricDelta(mx.METRICS[3], 1.0, 2.53, None)), change_text(
    ...     MetricDelta(mx.METRICS[1], 0.73, 0.0, None))
    ('+153 %', '-0.73')
    """
    delta = metric.delta
    if delta is None:
        return None
    if metric.metric.threshold == "relative" and metric.baseline:
        return f"{delta / metric.baseline * 100:+.3g} %"
    return f"{delta:+.4g}"


@dataclass(frozen=True)
class Comparison:
    """Everything a report or the gate reads about two releases."""

    baseline: ResultSet
    candidate: ResultSet
    paired: pl.DataFrame
    missing: pl.DataFrame
    added: pl.DataFrame
    metrics: tuple[MetricDelta, ...]
    regressed: pl.DataFrame
    resamples: int
    seed: int
    role_matches: tuple[RoleMatch, ...] = ()
    """Files the candidate names otherwise but writes alike: their runs are paired."""

    def metric(self, name: str) -> MetricDelta:
        """The metric called ``name``."""
        return next(m for m in self.metrics if m.name == name)


def _units(results: ResultSet) -> pl.DataFrame:
    units = mx.unit_sums(results.runs, results.attempts)
    # One row per key even if a folder holds a key twice (two workers ran the same case).
    return units.group_by(s.PAIR_KEY, maintain_order=True).agg(pl.all().sum())


def _keys(runs: pl.DataFrame) -> pl.DataFrame:
    return runs.select(*s.PAIR_KEY, s.CASE_ID).unique(s.PAIR_KEY, maintain_order=True)


PERSISTENCE_CHANGED = "persistence changed"
"""``why`` of a baseline run whose crash point, one of the agent's own files', the
candidate no longer reaches: the release persists differently, nothing was dropped."""


def crash_point_of(label: str) -> str:
    """``journal:fsync#1`` of ``journal:fsync#1:after:unsynced_lost[:again]``."""
    return label.removesuffix(":again").rsplit(":", 2)[0]


def is_own_point(label: str | None) -> bool:
    """Whether a run's crash label names a point of the agent's own files (or database):
    what a release changes when it changes how it persists, unlike a world event."""
    return label is not None and parse_world_point(crash_point_of(label)) is None


def missing_runs(baseline: ResultSet, candidate: ResultSet) -> pl.DataFrame:
    """Baseline runs absent from the candidate (``missing``) or skipped there (``skipped``).

    A run crashed at a point of the agent's own files that the candidate never reaches
    is :data:`PERSISTENCE_CHANGED` instead: the candidate writes other files, or writes
    them otherwise (see :func:`persistence_changes`).
    """
    own = pl.col(s.CRASH_LABEL).map_elements(is_own_point, return_dtype=pl.Boolean)
    gone = (_keys(baseline.runs).join(_keys(candidate.runs), on=list(s.PAIR_KEY), how="anti",
                                      nulls_equal=True)
            .with_columns(pl.when(own.fill_null(False)).then(pl.lit(PERSISTENCE_CHANGED))
                          .otherwise(pl.lit("missing")).alias("why")))
    skipped = (candidate.runs.filter(pl.col(s.SKIPPED)).pipe(_keys)
               .join(_keys(baseline.runs).select(s.PAIR_KEY), on=list(s.PAIR_KEY), how="semi",
                     nulls_equal=True)
               .with_columns(pl.lit("skipped").alias("why")))
    return pl.concat([gone, skipped]).sort(s.SCENARIO, s.SEED, s.CRASH_LABEL, nulls_last=False)


@dataclass(frozen=True)
class PersistenceChange:
    """How one scenario's persistence points differ between two releases."""

    scenario: str
    gone: tuple[str, ...]
    """Points of the baseline's own files the candidate never reaches."""
    new: tuple[str, ...]
    """Points of the candidate's own files the baseline never reached."""
    new_runs: int
    new_passed: int

    def text(self) -> str:
        """``s: persistence changed: 2 points gone, 3 new (their 6 runs: 6 passed)``."""
        head = f"{self.scenario}: persistence changed: {len(self.gone)} points gone, " \
               f"{len(self.new)} new"
        if not self.new:
            return head
        return f"{head} (their {self.new_runs} runs: {self.new_passed} passed)"


def persistence_changes(comparison: Comparison) -> list[PersistenceChange]:
    """Per scenario, the own-file points gone and new between the releases, with the
    candidate's pass rate on the new ones: these runs are never counted as dropped."""
    gone = comparison.missing.filter(pl.col("why") == PERSISTENCE_CHANGED)
    new = comparison.added.filter(pl.col(s.CRASH_LABEL).map_elements(
        is_own_point, return_dtype=pl.Boolean).fill_null(False))
    new_runs = comparison.candidate.runs.join(new.select(s.PAIR_KEY), on=list(s.PAIR_KEY),
                                              how="semi", nulls_equal=True)
    scenarios = sorted({*gone[s.SCENARIO].to_list(), *new[s.SCENARIO].to_list()})
    changes = []
    for scenario in scenarios:
        runs = new_runs.filter(pl.col(s.SCENARIO) == scenario)
        changes.append(PersistenceChange(
            scenario, _points(gone, scenario), _points(new, scenario), runs.height,
            int(runs.filter(pl.col(s.PASSED)).height)))
    return changes


def _points(frame: pl.DataFrame, scenario: str) -> tuple[str, ...]:
    labels = frame.filter(pl.col(s.SCENARIO) == scenario)[s.CRASH_LABEL].to_list()
    return tuple(dict.fromkeys(crash_point_of(label) for label in labels))


@dataclass(frozen=True)
class RoleMatch:
    """A file of the baseline that the candidate names otherwise (its role) but operates on
    alike: the same operations, each with the same ordinal, in one scenario and seed."""

    scenario: str
    seed: int
    baseline_role: str
    candidate_role: str
    points: int

    def text(self) -> str:
        """``s: the file role 'state' is 'checkpoint' now (3 points, the same operations)``."""
        return (f"{self.scenario}: the file role {self.baseline_role!r} is "
                f"{self.candidate_role!r} now ({self.points} points, the same operations): "
                "its crash runs are paired")


def _role_and_op(label: str) -> tuple[str, str]:
    """``('state', 'fsync#2')`` of ``state:fsync#2:after:unsynced_lost``."""
    role, _, op = crash_point_of(label).rpartition(":")
    return role, op


def _signatures(runs: pl.DataFrame, scenario: str, seed: int) -> dict[str, frozenset[str]]:
    """Each own-file role of one scenario and seed, with the operations it was crashed at."""
    labels = runs.filter((pl.col(s.SCENARIO) == scenario) & (pl.col(s.SEED) == seed))[
        s.CRASH_LABEL].drop_nulls().unique().to_list()
    ops: dict[str, set[str]] = {}
    for label in filter(is_own_point, labels):
        role, op = _role_and_op(label)
        ops.setdefault(role, set()).add(op)
    return {role: frozenset(found) for role, found in ops.items()}


def role_matches(baseline: ResultSet, candidate: ResultSet) -> tuple[RoleMatch, ...]:
    """The renamed files: a role only the baseline has and one only the candidate has, with
    the same operations (every op with its ordinal), when no other gone or new role of the
    scenario and seed has them too. Anything less certain stays "persistence changed"."""
    keys = (baseline.runs.select(s.SCENARIO, s.SEED).unique()
            .join(candidate.runs.select(s.SCENARIO, s.SEED).unique(), on=[s.SCENARIO, s.SEED])
            .sort(s.SCENARIO, s.SEED))
    found = []
    for scenario, seed in keys.iter_rows():
        before, after = _signatures(baseline.runs, scenario, seed), \
            _signatures(candidate.runs, scenario, seed)
        gone = {role: ops for role, ops in before.items() if role not in after}
        new = {role: ops for role, ops in after.items() if role not in before}
        for role, ops in gone.items():
            same = [r for r, o in new.items() if o == ops]
            twins = [r for r, o in gone.items() if o == ops]
            if len(same) == 1 and len(twins) == 1:
                found.append(RoleMatch(scenario, seed, role, same[0], len(ops)))
    return tuple(found)


def _as_baseline_roles(candidate: ResultSet, matches: tuple[RoleMatch, ...]) -> ResultSet:
    """``candidate`` with each matched role's crash labels in the baseline's words."""
    if not matches:
        return candidate
    renames = {(m.scenario, m.seed, m.candidate_role): m.baseline_role for m in matches}

    def relabel(row: dict[str, object]) -> str | None:
        label = row[s.CRASH_LABEL]
        if not isinstance(label, str) or not is_own_point(label):
            return label if isinstance(label, str) else None
        role, _ = _role_and_op(label)
        to = renames.get((str(row[s.SCENARIO]), int(str(row[s.SEED])), role))
        return label if to is None else to + label[len(role):]

    runs = candidate.runs.with_columns(
        pl.struct(s.SCENARIO, s.SEED, s.CRASH_LABEL)
        .map_elements(relabel, return_dtype=pl.String).alias(s.CRASH_LABEL))
    return replace(candidate, runs=runs)


def _paired_units(baseline: ResultSet, candidate: ResultSet) -> pl.DataFrame:
    paired = _units(baseline).join(_units(candidate), on=list(s.PAIR_KEY), how="inner",
                                   nulls_equal=True, suffix="_candidate")
    if paired.height == 0:
        raise ReportError(
            f"{baseline.path} and {candidate.path} share no run (scenario, seed, crash label): "
            "they are results of different suites or seeds; compare two runs of the same "
            "scenarios")
    return paired.sort(s.SCENARIO, s.SEED, s.CRASH_LABEL, nulls_last=False)


def _metric_matrix(paired: pl.DataFrame, suffix: str) -> np.ndarray:
    columns = ([f"{m.numerator}{suffix}" for m in mx.METRICS]
               + [f"{m.denominator}{suffix}" for m in mx.METRICS])
    # A column may serve two metrics (passed: pass rate and cost per success): alias each use.
    return (paired.select(pl.col(c).alias(f"_{i}") for i, c in enumerate(columns))
            .to_numpy().astype(np.float64))


def _side(paired: pl.DataFrame, suffix: str) -> pl.DataFrame:
    names = {f"{c}{suffix}": c for c in mx.UNIT_COLUMNS}
    return paired.select(list(names)).rename(names)


def compare(baseline: ResultSet, candidate: ResultSet, *, resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED, top: int = 10) -> Comparison:
    """Pair the runs of two releases and compare every metric; see the module docstring."""
    if resamples < 1:
        raise ReportError(f"resamples: got {resamples}; expected a whole number >= 1")
    matches = role_matches(baseline, candidate)
    candidate = _as_baseline_roles(candidate, matches)
    paired = _paired_units(baseline, candidate)
    deltas = bootstrap_deltas(_metric_matrix(paired, ""), _metric_matrix(paired, "_candidate"),
                              resamples=resamples, seed=seed)
    intervals = percentile_interval(deltas, CONFIDENCE)
    base_side, cand_side = _side(paired, ""), _side(paired, "_candidate")
    metrics = tuple(
        MetricDelta(m, mx.metric_value(base_side, m), mx.metric_value(cand_side, m), interval)
        for m, interval in zip(mx.METRICS, intervals, strict=True))
    added = _keys(candidate.runs).join(_keys(baseline.runs), on=list(s.PAIR_KEY), how="anti",
                                       nulls_equal=True)
    return Comparison(baseline, candidate, paired.select(s.PAIR_KEY),
                      missing_runs(baseline, candidate), added, metrics,
                      most_regressed(paired, top), resamples, seed, matches)


def most_regressed(paired: pl.DataFrame, top: int = 10) -> pl.DataFrame:
    """The paired runs that got worst: a lost pass first, then the largest cost increase.

    Only runs that got worse in some way are listed (pass, cost, attempts or retries).
    """
    worse = paired.select(
        *s.PAIR_KEY,
        pl.col("passed").cast(pl.Boolean).alias("baseline_passed"),
        pl.col("passed_candidate").cast(pl.Boolean).alias("candidate_passed"),
        # An unpriced run's cost is NaN in the sums; here it is unknown (null), and an
        # unknown cost neither got worse nor reaches a report as NaN.
        pl.col("cost").fill_nan(None).alias("baseline_cost"),
        pl.col("cost_candidate").fill_nan(None).alias("candidate_cost"),
        (pl.col("attempts_candidate") - pl.col("attempts")).alias("attempts_delta"),
        (pl.col("retries_candidate") - pl.col("retries")).alias("retries_delta"),
    ).with_columns(
        (pl.col("candidate_cost") - pl.col("baseline_cost")).alias("cost_delta"),
        (pl.col("baseline_passed") & ~pl.col("candidate_passed")).alias("lost_pass"),
    )
    got_worse = (pl.col("lost_pass") | (pl.col("cost_delta") > 0).fill_null(value=False)
                 | (pl.col("attempts_delta") > 0) | (pl.col("retries_delta") > 0))
    return (worse.filter(got_worse)
            .sort(["lost_pass", "cost_delta", "attempts_delta", s.SCENARIO],
                  descending=[True, True, True, False])
            .head(top))
