"""Render a comparison: Markdown for a pull request, HTML with charts, a JSON sidecar.

All three read one plain mapping, :func:`report_data`, so they never disagree.
Nothing in it comes from the wall clock: the same two folders give the same
bytes (the harness version and the manifests' own data are shown instead).

Example::

    paths = write_report(comparison, gate_result, Path("report"), ("md", "html", "json"))
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import polars as pl
from markupsafe import Markup

from fakes import PRICES_AS_OF, own_prices
from harness import ReportError, __version__
from harness.frontend import write_atomic
from reports import _charts as charts
from reports import _metrics as mx
from reports import _schema as s
from reports._compare import MIN_PAIRED_RUNS, Comparison, change_text, persistence_changes
from reports._gate import EXIT_CODES, GateResult
from reports._options import FORMATS

#: Bumped when a key of the JSON sidecar changes meaning or disappears.
JSON_FORMAT_VERSION = 1
_TOP_TTFT_ROWS = 12


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def _release(comparison: Comparison, which: str) -> dict[str, Any]:
    results = comparison.baseline if which == "baseline" else comparison.candidate
    manifest = results.manifest
    return {
        "release": results.release, "path": str(results.path),
        "format": results.source_format, "runs": results.runs.height,
        "attempts": results.attempts.height,
        "harness_version": manifest.get("harness_version"),
        "seed_override": manifest.get("seed_override"),
        "scenarios": len(manifest.get("scenarios", []) or []),
        "unpriced_models": list(results.unpriced_models),
    }


def _metric_rows(comparison: Comparison, gate: GateResult | None) -> list[dict[str, Any]]:
    status = {r.rule: r.status for r in gate.rules} if gate else {}
    unpriced = sorted(set(comparison.baseline.unpriced_models)
                      | set(comparison.candidate.unpriced_models))
    return [{
        "name": m.name, "label": m.metric.label, "direction": m.metric.direction,
        "threshold_kind": m.metric.threshold, "baseline": m.baseline,
        "candidate": m.candidate, "delta": m.delta, "change": change_text(m),
        "unpriced_models": unpriced if m.metric.numerator == "cost" else [],
        "interval": list(m.interval) if m.interval else None,
        "worse_by": None if m.delta is None else m.worse_by(m.delta),
        "worse_interval": None if m.interval is None else sorted(
            (m.worse_by(m.interval[0]), m.worse_by(m.interval[1]))),
        "gate": status.get(f"regression:{m.name}"),
    } for m in comparison.metrics]


def comparison_warnings(comparison: Comparison) -> list[str]:
    """What a reader must know before trusting the comparison (too few paired runs)."""
    paired = comparison.paired.height
    if paired >= MIN_PAIRED_RUNS:
        return []
    return [f"only {paired} paired run(s), fewer than the {MIN_PAIRED_RUNS} a bootstrap interval "
            "needs to mean much: read the intervals as rough; run more scenarios or seeds"]


def _ttft(comparison: Comparison) -> list[dict[str, Any]]:
    base = mx.ttft_by_model_and_context(comparison.baseline.attempts)
    cand = mx.ttft_by_model_and_context(comparison.candidate.attempts)
    joined = base.join(cand, on=[s.MODEL, "context"], how="full", coalesce=True,
                       suffix="_candidate", nulls_equal=True)
    return _rows(joined.rename({s.MODEL: "model"}).sort("model", "context"))


def _distribution(base: pl.DataFrame, cand: pl.DataFrame, keys: list[str], value: str
                  ) -> list[dict[str, Any]]:
    joined = base.join(cand, on=keys, how="full", coalesce=True, suffix="_candidate",
                       nulls_equal=True)
    return _rows(joined.with_columns(pl.col(value, f"{value}_candidate").fill_null(0))
                 .sort(keys, nulls_last=False))


def report_data(comparison: Comparison, gate: GateResult | None = None) -> dict[str, Any]:
    """Everything the three formats show, as JSON-ready values."""
    base, cand = comparison.baseline, comparison.candidate
    data: dict[str, Any] = _finite({
        "format_version": JSON_FORMAT_VERSION,
        "harness_version": __version__,
        "prices_as_of": PRICES_AS_OF,
        # The models priced from the user's --prices file instead.
        "own_prices": sorted(own_prices()),
        "baseline": _release(comparison, "baseline"),
        "candidate": _release(comparison, "candidate"),
        "paired_runs": comparison.paired.height,
        "warnings": comparison_warnings(comparison),
        "bootstrap": {"resamples": comparison.resamples, "seed": comparison.seed,
                      "confidence": 0.95, "unit": "paired run (scenario, seed, crash label)"},
        "metrics": _metric_rows(comparison, gate),
        "gate": None if gate is None else _gate_data(gate),
        "missing": _rows(comparison.missing.rename(_SHORT, strict=False)),
        # Per scenario: the points of the agent's own files gone and new (never "dropped").
        "persistence": [{"scenario": c.scenario, "text": c.text(), "gone": list(c.gone),
                         "new": list(c.new), "new_runs": c.new_runs,
                         "new_passed": c.new_passed} for c in persistence_changes(comparison)],
        # Files the candidate renamed but writes alike: their runs are paired.
        "role_matches": [{"scenario": m.scenario, "seed": m.seed, "text": m.text(),
                          "baseline_role": m.baseline_role, "candidate_role": m.candidate_role}
                         for m in comparison.role_matches],
        "added": _rows(comparison.added.rename(_SHORT, strict=False)),
        "regressed": _rows(comparison.regressed.rename(_SHORT, strict=False)),
        "ttft": _ttft(comparison),
        "stop_states": _distribution(mx.stop_state_distribution(base.runs),
                                     mx.stop_state_distribution(cand.runs),
                                     [s.STOP_STATE], "runs"),
        "miss_reasons": _distribution(mx.miss_reasons(base.attempts),
                                      mx.miss_reasons(cand.attempts),
                                      ["reason", "dimension"], "misses"),
    })
    return data


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None: JSON has no NaN, people no use for it.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


_SHORT = {s.SCENARIO: "scenario", s.SEED: "seed", s.CRASH_LABEL: "crash", s.CASE_ID: "case_id"}


def _gate_data(gate: GateResult) -> dict[str, Any]:
    return {
        "exit_code": gate.exit_code, "meaning": EXIT_CODES[gate.exit_code],
        "passed": gate.passed, "fail_on_unknown": gate.fail_on_unknown,
        "rules": [{"rule": r.rule, "status": r.status, "reason": r.reason,
                   "exit_code": r.exit_code, "evidence": list(r.evidence)} for r in gate.rules],
    }


def verdict_line(gate: GateResult | None) -> str:
    """One line for the top of a pull-request comment.

    >>> verdict_line(GateResult(()))
    'Gate: PASS (exit 0): every rule passed'
    """
    return _verdict_of({"gate": None if gate is None else _gate_data(gate)})


def gate_preview_line(gate: GateResult) -> str:
    """What ``harness gate`` would do, for ``harness compare`` (which itself exits 0).

    >>> gate_preview_line(GateResult(()))
    'harness gate would exit 0: every rule passed'
    """
    data = _gate_data(gate)
    return f"harness gate would exit {data['exit_code']}: {_verdict_reasons(data)}"


# -- formatting helpers shared by the templates ---------------------------------------------


def fmt(value: object, digits: int = 4) -> str:
    """A number for people: ``n/a`` for None, 4 significant digits otherwise.

    >>> fmt(None), fmt(0.123456), fmt(3)
    ('n/a', '0.1235', '3')
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def shown(value: object, unpriced: Sequence[str] = ()) -> str:
    """:func:`fmt`, but ``unpriced`` for a cost that is missing because a model has no price.

    >>> shown(None, ["fake-model"]), shown(None), shown(0.5, ["fake-model"])
    ('unpriced', 'n/a', '0.5')
    """
    return "unpriced" if value is None and unpriced else fmt(value)


def signed(value: object) -> str:
    """``+0.1`` / ``-0.1``; ``n/a`` for None."""
    return "n/a" if not isinstance(value, int | float) else f"{value:+.4g}"


def interval(value: Sequence[float] | None) -> str:
    """``[-0.1, +0.2]``; ``n/a`` without an interval."""
    return "n/a" if value is None else f"[{value[0]:+.4g}, {value[1]:+.4g}]"


def md_cell(value: object) -> str:
    """Text safe inside a Markdown table cell (pipes escaped, one line)."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fmt=fmt, shown=shown, signed=signed, interval=interval, md=md_cell)
    return env


def render_markdown(data: Mapping[str, Any]) -> str:
    """The pull-request comment: a verdict line, the metric table, the rules, the worst runs."""
    return _environment().get_template("report.md.j2").render(
        data=data, verdict=_verdict_of(data))


def _verdict_of(data: Mapping[str, Any]) -> str:
    gate = data["gate"]
    if gate is None:
        return "Gate: not evaluated"
    head = f"Gate: {'PASS' if gate['passed'] else 'FAIL'} (exit {gate['exit_code']})"
    return f"{head}: {_verdict_reasons(gate)}"


def _verdict_reasons(gate: Mapping[str, Any]) -> str:
    """The failed rules with their reasons, else the exit code's meaning; then the unknown."""
    # Worst (smallest exit code) first; sorted() keeps the rule order among equals.
    failed = sorted((r for r in gate["rules"] if r["status"] == "fail"),
                    key=lambda r: r["exit_code"])
    unknown = [r["rule"] for r in gate["rules"] if r["status"] == "unknown"]
    text = ("; ".join(f"{r['rule']}: {r['reason']}" for r in failed) if failed
            else str(gate["meaning"]))
    if unknown:
        text += "; unknown: " + ", ".join(unknown)
    return text


def render_html(data: Mapping[str, Any]) -> str:
    """A self-contained HTML page with inline SVG charts (no script, no network)."""
    return _environment().get_template("report.html.j2").render(
        data=data, verdict=_verdict_of(data), charts=_charts(data))


def _charts(data: Mapping[str, Any]) -> dict[str, Markup]:
    metrics = data["metrics"]
    ttft = data["ttft"][:_TOP_TTFT_ROWS]
    stops, misses = data["stop_states"], data["miss_reasons"]
    return {
        "delta": Markup(charts.delta_chart(
            [(m["label"], m["worse_by"], _pair(m["worse_interval"]), m["change"] or "n/a")
             for m in metrics])),
        "ttft": Markup(charts.grouped_bars(
            "Time to first token p95 by model and context length",
            [f"{r['model']} {r['context']}" for r in ttft],
            [("baseline p95", charts.BASE, [r["ttft_p95"] for r in ttft]),
             ("candidate p95", charts.CAND, [r["ttft_p95_candidate"] for r in ttft])], " s")),
        "stops": Markup(charts.grouped_bars(
            "Runs per stop state", [r[s.STOP_STATE] for r in stops],
            [("baseline", charts.BASE, [r["runs"] for r in stops]),
             ("candidate", charts.CAND, [r["runs_candidate"] for r in stops])], " runs")),
        "misses": Markup(charts.grouped_bars(
            "Cache misses by reason and changed dimension",
            [_miss_label(r) for r in misses],
            [("baseline", charts.BASE, [r["misses"] for r in misses]),
             ("candidate", charts.CAND, [r["misses_candidate"] for r in misses])], " misses")),
    }


def _pair(value: Sequence[float] | None) -> tuple[float, float] | None:
    return None if value is None else (value[0], value[1])


def _miss_label(row: Mapping[str, Any]) -> str:
    dimension = row["dimension"]
    return row["reason"] if dimension is None else f"{row['reason']}: {dimension}"


def render_json(data: Mapping[str, Any]) -> str:
    """The sidecar: :func:`report_data` as indented JSON with a trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_RENDERERS = {"md": ("report.md", render_markdown), "html": ("report.html", render_html),
              "json": ("report.json", render_json)}


def parse_formats(text: str) -> tuple[str, ...]:
    """``md,html`` → ``("md", "html")``; :class:`ReportError` for an unknown format.

    >>> parse_formats("md, json")
    ('md', 'json')
    """
    chosen = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown or not chosen:
        raise ReportError(f"--format: got {text!r}; expected a comma-separated list of "
                          + ", ".join(FORMATS))
    return chosen


def write_report(comparison: Comparison, gate: GateResult | None, folder: Path,
                 formats: Iterable[str] = FORMATS) -> list[Path]:
    """Write ``report.md`` / ``report.html`` / ``report.json`` into ``folder``; return them."""
    data = report_data(comparison, gate)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in formats:
        filename, render = _RENDERERS[name]
        written.append(_write_text(folder / filename, render(data)))
    return written


def _write_text(path: Path, text: str) -> Path:
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
