"""The deploy gate: named rules over a comparison, and the exit code they add up to.

Exit codes of ``harness gate`` (the one place they are defined)::

    0  every rule passed (``unknown`` rules are shown, and pass unless --fail-on-unknown)
    2  bad input: a result folder missing, empty, mismatched or of another format version
    3  a recovery rule failed in the candidate: recovery_correctness, invariants,
       repeated_error_stop, long_task_continuity or everything_reached
    4  a baseline run is missing or skipped in the candidate (no_dropped_cases), or the
       candidate lost points of its own files with none new, or failed at a new one
       (persistence_changed; --accept-persistence-change accepts it)
    5  a metric regressed beyond its threshold on its bootstrap bound (regression:<metric>)
    6  --fail-on-unknown was given and a recovery rule could not be decided

When several rules fail, the smallest code wins (the most serious failure).

The three minimum pass conditions of seed 002 §19.6 are rules of their own:

- ``recovery_correctness`` (恢复正确性): every crash case of the candidate passes and
  no run applied a non-idempotent side effect twice (``duplicates == 0``).
- ``repeated_error_stop`` (重复错误停止率): a repeated identical error always ends in a
  stop or a change of approach. Evidence: a verdict named ``repeated_error_stop``,
  ``L3`` or ``L3:same-gap`` (the same verifier gaps after a rework; fail or pass),
  or a run the loop guard stopped (stop reason ending in ``(L3)``). ``unknown`` when no
  run exercises it.
- ``long_task_continuity`` (长任务连续性): goal fields equal after N compactions and
  restarts, no action under a stale goal revision or lease epoch, and every
  ``complete`` backed by a proof for the final revision (seed 002 §19.2-§19.3),
  the goal still in the model's view after each compaction, no action under a lapsed
  lease, the goal's protected checks left as they were, and a stop that waits written
  onto the goal, from the ``I5``, ``I5:proof``, ``I5:context``, ``I5:lease``,
  ``I5:protected`` and ``I5:status`` verdicts;
  ``unknown`` when no run judged a goal.

- ``everything_reached``: every crash point and scripted fault of the candidate was
  reached by some case of its scenario; one no case reached was never tested (the same
  rule as ``harness run --strict``; expectations are judged there, from the scenarios).

``unknown`` is never ``pass``: it is printed with its reason, and by default does not
fail the gate (a suite without goal scenarios must still be able to ship), unless
``fail_on_unknown`` is set.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import polars as pl

from harness import ReportError
from harness.frontend import read_input
from reports import _schema as s
from reports._compare import (
    PERSISTENCE_CHANGED,
    Comparison,
    MetricDelta,
    change_text,
    crash_point_of,
    persistence_changes,
)
from reports._metrics import METRIC_NAMES

RuleStatus = Literal["pass", "fail", "unknown"]

#: The largest pyproject.toml read for the gate's thresholds.
MAX_CONFIG_BYTES = 16 * 1024 * 1024

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_RECOVERY = 3
EXIT_DROPPED = 4
EXIT_REGRESSION = 5
EXIT_UNKNOWN = 6

EXIT_CODES: Mapping[int, str] = MappingProxyType({
    EXIT_OK: "every rule passed",
    EXIT_BAD_INPUT: "bad input (missing, empty, mismatched or incompatible result folder)",
    EXIT_RECOVERY: "a recovery rule failed in the candidate",
    EXIT_DROPPED: "a baseline run is missing or skipped in the candidate, or its persistence "
                  "points went with none new (persistence_changed)",
    EXIT_REGRESSION: "a metric regressed beyond its threshold on its bootstrap bound",
    EXIT_UNKNOWN: "a recovery rule is unknown and --fail-on-unknown was given",
})

RECOVERY_RULES = ("recovery_correctness", "invariants", "repeated_error_stop",
                  "long_task_continuity", "everything_reached")
#: L3:same-gap is the goal's form of it: the verifier's same gaps after a rework must stop.
REPEATED_ERROR_VERDICTS = frozenset({"repeated_error_stop", "L3", "L3:same-gap"})
GUARD_STOP_MARK = "(L3)"
GOAL_VERDICTS = frozenset({"I5", "I5:proof", "I5:context", "I5:lease", "I5:protected",
                           "I5:status"})
_EVIDENCE = 5  # cases named per failed rule; the report lists them all


@dataclass(frozen=True)
class RuleResult:
    """One gate rule's judgement: status, a one-line reason, the cases behind it."""

    rule: str
    status: RuleStatus
    reason: str
    exit_code: int
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateResult:
    """Every rule, and the exit code they add up to."""

    rules: tuple[RuleResult, ...]
    fail_on_unknown: bool = False

    @property
    def failed(self) -> tuple[RuleResult, ...]:
        return tuple(r for r in self.rules if r.status == "fail")

    @property
    def unknown(self) -> tuple[RuleResult, ...]:
        return tuple(r for r in self.rules if r.status == "unknown")

    @property
    def exit_code(self) -> int:
        """See the module docstring: the most serious failure's code, else 0."""
        codes = [r.exit_code for r in self.failed]
        if self.fail_on_unknown and any(r.rule in RECOVERY_RULES for r in self.unknown):
            codes.append(EXIT_UNKNOWN)
        return min(codes, default=EXIT_OK)

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK


def _case_ids(frame: pl.DataFrame) -> tuple[str, ...]:
    return tuple(frame[s.CASE_ID].to_list())


def _listing(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_EVIDENCE])
    return shown + (f" and {len(ids) - _EVIDENCE} more" if len(ids) > _EVIDENCE else "")


def recovery_correctness(runs: pl.DataFrame) -> RuleResult:
    """Seed 002 §19.6 恢复正确性: every crash case passes; zero non-idempotent duplicates."""
    rule = "recovery_correctness"
    crashed = runs.filter(pl.col(s.CRASH_LABEL).is_not_null())
    duplicated = runs.filter(pl.col(s.DUPLICATES) > 0)
    failing = crashed.filter(~pl.col(s.PASSED))
    if failing.height or duplicated.height:
        ids = _case_ids(pl.concat([failing, duplicated]).unique(s.CASE_ID, maintain_order=True))
        parts = []
        if failing.height:
            parts.append(f"{failing.height} of {crashed.height} crash cases failed")
        if duplicated.height:
            parts.append(f"{duplicated[s.DUPLICATES].sum()} non-idempotent side effects "
                         f"applied twice in {duplicated.height} runs")
        return RuleResult(rule, "fail", "; ".join(parts) + f": {_listing(ids)}",
                          EXIT_RECOVERY, ids)
    if crashed.height == 0:
        return RuleResult(rule, "unknown", "no crash case ran, so recovery was never exercised",
                          EXIT_RECOVERY)
    return RuleResult(rule, "pass", f"all {crashed.height} crash cases passed, 0 duplicates",
                      EXIT_RECOVERY)


def invariants(runs: pl.DataFrame) -> RuleResult:
    """Any run of the candidate with a failed invariant or a harness error fails."""
    bad = runs.filter((pl.col(s.FAILED_INVARIANTS).list.len() > 0) | pl.col(s.ERROR).is_not_null())
    if bad.height:
        names = sorted(set(bad[s.FAILED_INVARIANTS].explode().drop_nulls().to_list()))
        ids = _case_ids(bad)
        what = ", ".join(names) if names else "harness error"
        return RuleResult("invariants", "fail", f"{bad.height} runs broke {what}: "
                          f"{_listing(ids)}", EXIT_RECOVERY, ids)
    return RuleResult("invariants", "pass", f"no invariant failed in {runs.height} runs",
                      EXIT_RECOVERY)


def _verdicts(runs: pl.DataFrame, names: frozenset[str]) -> pl.DataFrame:
    """(case id, status) of every verdict whose invariant is in ``names``."""
    exploded = runs.select(s.CASE_ID, s.VERDICTS).explode(s.VERDICTS).drop_nulls(s.VERDICTS)
    return (exploded.select(s.CASE_ID, pl.col(s.VERDICTS).struct.field("invariant"),
                            pl.col(s.VERDICTS).struct.field("status"))
            .filter(pl.col("invariant").is_in(sorted(names))))


def repeated_error_stop(runs: pl.DataFrame) -> RuleResult:
    """Seed 002 §19.6 重复错误停止率: a repeated identical error always stops or changes course."""
    verdicts = _verdicts(runs, REPEATED_ERROR_VERDICTS)
    guarded = runs.filter(pl.col(s.STOP_REASON).str.contains(GUARD_STOP_MARK, literal=True))
    passed = verdicts.filter(pl.col("status") == "pass").height + guarded.height
    return _by_verdicts(
        "repeated_error_stop", verdicts, passed,
        broke="a repeated identical error did not end in a stop or a change of approach",
        never="no run repeated an identical error (no L3 verdict and no loop-guard stop), so "
              "the rule was never exercised",
        held=f"{passed} runs with a repeated error stopped or changed approach")


def long_task_continuity(runs: pl.DataFrame) -> RuleResult:
    """Seed 002 §19.6 长任务连续性: the goal survives restarts, and so does its proof.

    Reads the goal verdicts (:data:`GOAL_VERDICTS`): I5 (goal fields equal, no
    action under a stale revision or epoch), I5:proof (a completion proof valid for
    the final revision), I5:context (the goal in every request after compactions and
    restarts), I5:lease (no action under a lapsed lease), I5:protected (the checks that
    prove the goal left as they were) and I5:status (a stop that waits is the goal's too).
    """
    verdicts = _verdicts(runs, GOAL_VERDICTS)
    failed = verdicts.filter(pl.col("status") == "fail")
    broken = ", ".join(sorted(set(failed.get_column("invariant").to_list())))
    passed = verdicts.filter(pl.col("status") == "pass").select(s.CASE_ID).unique().height
    return _by_verdicts(
        "long_task_continuity", verdicts, passed,
        broke=f"a goal did not survive a restart ({broken}: a changed goal field, an action "
              "under a stale revision, epoch or lapsed lease, a goal the model no longer saw, "
              "or a completion without a valid proof)",
        never="no run judged a goal (I5, I5:proof): no scenario declares a goal, or the "
              "agent never called the goal port",
        held=f"goals held across restarts in {passed} runs, each completion with its proof")


def _by_verdicts(rule: str, verdicts: pl.DataFrame, passed: int, *, broke: str, never: str,
                 held: str) -> RuleResult:
    """A rule judged from its verdicts: fails naming the cases of any failed one (``broke``),
    is unknown when ``passed`` is none (``never``), else passes (``held``)."""
    failed = verdicts.filter(pl.col("status") == "fail")
    if failed.height:
        ids = _case_ids(failed.unique(s.CASE_ID, maintain_order=True))
        return RuleResult(rule, "fail", f"{broke}: {_listing(ids)}", EXIT_RECOVERY, ids)
    if passed == 0:
        return RuleResult(rule, "unknown", never, EXIT_RECOVERY)
    return RuleResult(rule, "pass", held, EXIT_RECOVERY)


def everything_reached(runs: pl.DataFrame) -> RuleResult:
    """Every crash point and scripted fault was reached by some case of its scenario.

    A point no case reached (another agent's file layout, a typo) leaves its cases
    ``unknown``: the run says nothing about it, and a green gate must not hide that.
    """
    rule = "everything_reached"
    rows = list(runs.select(s.SCENARIO, s.CRASH_LABEL, s.CRASH_REACHED, s.VERDICTS)
                .iter_rows())
    missed = [f"{scenario}: crash point {point}" for scenario, point in _points_missed(rows)]
    missed += [f"{scenario}: fault {fault}" for scenario, fault in _faults_missed(rows)]
    if missed:
        return RuleResult(rule, "fail", f"{len(missed)} crash point(s) or fault(s) no case "
                          f"reached, so nothing was tested there: {_listing(missed)}",
                          EXIT_RECOVERY, tuple(missed))
    return RuleResult(rule, "pass", f"every crash point and fault of {runs.height} runs was "
                      "reached", EXIT_RECOVERY)


# (scenario, crash label, crash reached, verdicts) of one run; a verdict is a mapping of
# invariant, status, message and evidence lines.
_Row = tuple[str, str | None, bool | None, list[dict[str, Any]] | None]


def _points_missed(rows: Sequence[_Row]) -> list[tuple[str, str]]:
    crashed = [(scenario, crash_point_of(label), bool(reached))
               for scenario, label, reached, _ in rows if label is not None]
    reached = {(scenario, point) for scenario, point, hit in crashed if hit}
    return [key for key in dict.fromkeys((sc, p) for sc, p, _ in crashed) if key not in reached]


_NEVER = "never reached: "


def _faults_missed(rows: Sequence[_Row]) -> list[tuple[str, str]]:
    """The faults every case of a scenario left unreached (its ``faults`` verdict's evidence)."""
    by_scenario: dict[str, list[set[str]]] = {}
    for scenario, _, _, verdicts in rows:
        missed = {line.removeprefix(_NEVER) for v in verdicts or ()
                  if v["invariant"] == "faults" and v["status"] == "unknown"
                  for line in v["evidence"] or () if line.startswith(_NEVER)}
        by_scenario.setdefault(scenario, []).append(missed)
    return [(scenario, fault) for scenario, sets in by_scenario.items()
            for fault in sorted(set.intersection(*sets))]


def no_dropped_cases(comparison: Comparison) -> RuleResult:
    """Every baseline run has a partner in the candidate that was not skipped.

    A run at a point of the agent's own files the candidate no longer reaches is not
    dropped: the release persists differently (:func:`persistence_changed`).
    """
    missing = comparison.missing.filter(pl.col("why") != PERSISTENCE_CHANGED)
    if missing.height == 0:
        return RuleResult("no_dropped_cases", "pass",
                          f"all {comparison.paired.height} baseline runs ran in the candidate",
                          EXIT_DROPPED)
    ids = tuple(f"{cid} ({why})" for cid, why in missing.select(s.CASE_ID, "why").iter_rows())
    return RuleResult("no_dropped_cases", "fail",
                      f"{missing.height} baseline runs are missing or skipped in the candidate: "
                      f"{_listing(ids)}", EXIT_DROPPED, ids)


def persistence_changed(comparison: Comparison, *, accepted: bool = False) -> RuleResult:
    """A release that persists differently is judged on its own points, never as dropped.

    Passes when no own-file point was added or removed, or when every scenario that
    lost points has new ones whose crash runs all pass (a release that changed, or
    fixed, how it persists, and survives a crash at each of its new points). Fails
    when a scenario lost points and has no new ones (it stopped persisting what the
    baseline did) or a new point's run failed; ``accepted`` (``harness gate
    --accept-persistence-change``) passes it, with the change still shown.
    """
    changes = persistence_changes(comparison)
    if not changes:
        return RuleResult("persistence_changed", "pass",
                          "no point of the agent's own files was added or removed",
                          EXIT_DROPPED)
    evidence = tuple(change.text() for change in changes)
    unproven = [c for c in changes if (c.gone and not c.new) or c.new_passed < c.new_runs]
    if not unproven:
        return RuleResult("persistence_changed", "pass",
                          f"{_listing(evidence)}; every new point survives its crashes",
                          EXIT_DROPPED, evidence)
    if accepted:
        return RuleResult("persistence_changed", "pass",
                          f"accepted (--accept-persistence-change): {_listing(evidence)}",
                          EXIT_DROPPED, evidence)
    return RuleResult("persistence_changed", "fail",
                      f"{_listing(tuple(c.text() for c in unproven))}: points gone with none "
                      "new, or a new point's crash run failed; if the release means to "
                      "persist this way, accept it with --accept-persistence-change",
                      EXIT_DROPPED, evidence)


def regression(metric: MetricDelta, threshold: float, unpriced: Sequence[str] = ()
               ) -> RuleResult:
    """Fails when even the interval's most favourable end is worse than ``threshold``.

    The reason reads as the report's table and chart do: the change with its sign
    (``+153 %`` for a relative metric), then how much worse or better the interval's
    best end is, in the threshold's unit.
    """
    rule = f"regression:{metric.name}"
    bound = metric.least_worse()
    if bound is None:
        return RuleResult(rule, "unknown", _undefined(metric, unpriced), EXIT_REGRESSION)
    detail = (f"{metric.metric.label}: {_fmt(metric.baseline)} -> {_fmt(metric.candidate)} "
              f"({change_text(metric)}); at the interval's most favourable end "
              f"{_how_much(metric, bound)}, threshold {_threshold(metric, threshold)}")
    status: RuleStatus = "fail" if bound > threshold else "pass"
    return RuleResult(rule, status, detail, EXIT_REGRESSION)


def _how_much(metric: MetricDelta, worse_by: float) -> str:
    """``12.5 % worse`` (relative) or ``0.05 better`` (absolute)."""
    direction = "worse" if worse_by > 0 else "better" if worse_by < 0 else "no change"
    if metric.metric.threshold == "relative":
        size = f"{abs(worse_by) * 100:.3g} %"
    else:
        size = f"{abs(worse_by):.4g}"
    return direction if worse_by == 0 else f"{size} {direction}"


def _threshold(metric: MetricDelta, threshold: float) -> str:
    """``25 % worse`` (relative) or ``0.05 worse`` (absolute): how far the gate lets it go."""
    if metric.metric.threshold == "relative":
        return f"{threshold * 100:.3g} % worse"
    return f"{threshold:.4g} worse"


def _undefined(metric: MetricDelta, unpriced: Sequence[str]) -> str:
    """Which release leaves the metric undefined, and why when it is known."""
    sides = [name for name, value in (("baseline", metric.baseline),
                                      ("candidate", metric.candidate)) if value is None]
    if not sides:
        return f"{metric.metric.label} has no interval: no paired run defines its change"
    where = "both releases" if len(sides) == 2 else f"the {sides[0]}"
    why = ""
    if metric.metric.name.startswith("cost") and unpriced:
        why = (f": no price for model {', '.join(unpriced)} (add it to the price table, "
               "or gate without the cost threshold)")
    return f"{metric.metric.label} is undefined in {where}{why}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def evaluate(comparison: Comparison, thresholds: Mapping[str, float], *,
             fail_on_unknown: bool = False, accept_persistence_change: bool = False
             ) -> GateResult:
    """Every rule over ``comparison``; ``thresholds`` name metrics of :data:`METRIC_NAMES`."""
    runs = comparison.candidate.runs
    rules = [recovery_correctness(runs), invariants(runs), repeated_error_stop(runs),
             long_task_continuity(runs), everything_reached(runs), no_dropped_cases(comparison),
             persistence_changed(comparison, accepted=accept_persistence_change)]
    unpriced = sorted({*comparison.baseline.unpriced_models,
                       *comparison.candidate.unpriced_models})
    rules += [regression(comparison.metric(name), thresholds[name], unpriced)
              for name in METRIC_NAMES if name in thresholds]
    return GateResult(tuple(rules), fail_on_unknown)


def check_thresholds(thresholds: Mapping[str, object], where: str) -> dict[str, float]:
    """Thresholds as floats, each naming a known metric; :class:`ReportError` otherwise.

    >>> check_thresholds({"pass_rate": 0}, "x")
    {'pass_rate': 0.0}
    """
    checked: dict[str, float] = {}
    for name, value in thresholds.items():
        if name not in METRIC_NAMES:
            raise ReportError(f"{where}: unknown gate metric {name!r}; expected one of "
                              + ", ".join(METRIC_NAMES))
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0):
            raise ReportError(f"{where}: {name}: got {value!r}; expected a finite number >= 0, "
                              f"such as {name}={DEFAULT_THRESHOLDS.get(name, 0.1)}")
        checked[name] = float(value)
    return checked


#: The thresholds a gate applies when ``[tool.harness.gate]`` does not set one. Shares
#: and rates: absolute change (0.05 = 5 points); costs, times and counts: relative to
#: the baseline (0.10 = +10 %). Seed 002 §19.7: tune them to your own baseline.
DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType({
    "pass_rate": 0.0,
    "cached_input_share": 0.05,
    "cached_input_share_eligible": 0.05,
    "cost_per_successful_task": 0.10,
    "retries_per_task": 0.25,
    "attempts_per_task": 0.25,
    "ttft_mean_seconds": 0.20,
})


def gate_thresholds(path: Path, *, required: bool = False) -> dict[str, float]:
    """:data:`DEFAULT_THRESHOLDS`, each overridden by ``[tool.harness.gate]`` of ``path``.

    ``required``: ``path`` was named by the user, so its absence is an error, not a default.
    """
    if required and not path.is_file():
        raise ReportError(f"--config: {path}: no such file; expected a pyproject.toml with a "
                          "[tool.harness.gate] table, or leave --config out to use "
                          "./pyproject.toml and the defaults", str(path))
    return {**DEFAULT_THRESHOLDS, **thresholds_from_pyproject(path)}


def thresholds_from_pyproject(path: Path) -> dict[str, float]:
    """``[tool.harness.gate]`` of a ``pyproject.toml``; empty when the file or table is absent."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(read_input(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError) as error:  # TOMLDecodeError, UnicodeDecodeError: ValueErrors
        raise ReportError(f"{path}: cannot read gate thresholds: {error}", str(path)) from error
    table = data.get("tool", {}).get("harness", {}).get("gate", {})
    return check_thresholds(table, f"{path} [tool.harness.gate]")


def parse_threshold(text: str) -> tuple[str, float]:
    """``metric=value`` from the command line.

    >>> parse_threshold("cost_per_successful_task=0.2")
    ('cost_per_successful_task', 0.2)
    """
    name, sep, value = text.partition("=")
    try:
        number = float(value) if sep else None
    except ValueError:
        number = None
    if number is None:
        raise ReportError(f"--threshold: got {text!r}; expected METRIC=NUMBER, such as "
                          "cost_per_successful_task=0.1")
    return next(iter(check_thresholds({name.strip(): number}, "--threshold").items()))
