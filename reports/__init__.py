"""Reports over result folders: cache, cost, latency, release comparison and the deploy gate.

Read a folder written by ``harness run --out DIR`` into two polars tables (one
row per request attempt, one per run; column names follow the OpenTelemetry
GenAI conventions where one exists), compute seed 002 §19.7's metrics, compare
two releases with paired bootstrap intervals, and gate a deploy on seed 002
§19.6's minimum pass conditions::

    from reports import compare, evaluate, gate_thresholds, load_results

    comparison = compare(load_results(Path("results/main")),
                         load_results(Path("results/candidate")), seed=0)
    gate = evaluate(comparison, gate_thresholds(Path("pyproject.toml")))
    raise SystemExit(gate.exit_code)
"""

import typing

from harness import ReportError
from harness.frontend import lazy_exports as _lazy_exports

# polars, numpy and jinja2 load on first use of a name below, so that the ``harness``
# command line, which builds the compare and gate parsers (reports._commands), loads
# them only for those commands.
_EXPORTS = {
    "reports._commands": ["add_report_commands", "run_compare", "run_gate"],
    "reports._compare": ["Comparison", "MetricDelta", "compare", "missing_runs", "most_regressed"],
    "reports._gate": ["DEFAULT_THRESHOLDS", "EXIT_CODES", "GateResult", "RuleResult",
                      "check_thresholds", "evaluate", "gate_thresholds", "parse_threshold",
                      "thresholds_from_pyproject"],
    "reports._load": ["ResultSet", "attempt_table", "load_results", "run_table"],
    "reports._metrics": ["METRICS", "Metric", "cached_input_share",
                         "cached_input_share_eligible", "cost_per_successful_task", "headline",
                         "miss_reasons", "pass_rate", "retries_per_task",
                         "stop_state_distribution", "ttft_by_model_and_context"],
    "reports._render": ["comparison_warnings", "parse_formats", "render_html", "render_json",
                        "render_markdown", "report_data", "verdict_line", "write_report"],
    "reports._schema": ["ATTEMPT_FROM_RUNNER", "ATTEMPT_SCHEMA", "DERIVED", "NOT_REPORTED",
                        "PAIR_KEY", "RUN_FROM_RUNNER", "RUN_SCHEMA"],
}
if typing.TYPE_CHECKING:
    from reports._commands import add_report_commands, run_compare, run_gate
    from reports._compare import Comparison, MetricDelta, compare, missing_runs, most_regressed
    from reports._gate import (
        DEFAULT_THRESHOLDS,
        EXIT_CODES,
        GateResult,
        RuleResult,
        check_thresholds,
        evaluate,
        gate_thresholds,
        parse_threshold,
        thresholds_from_pyproject,
    )
    from reports._load import ResultSet, attempt_table, load_results, run_table
    from reports._metrics import (
        METRICS,
        Metric,
        cached_input_share,
        cached_input_share_eligible,
        cost_per_successful_task,
        headline,
        miss_reasons,
        pass_rate,
        retries_per_task,
        stop_state_distribution,
        ttft_by_model_and_context,
    )
    from reports._render import (
        comparison_warnings,
        parse_formats,
        render_html,
        render_json,
        render_markdown,
        report_data,
        verdict_line,
        write_report,
    )
    from reports._schema import (
        ATTEMPT_FROM_RUNNER,
        ATTEMPT_SCHEMA,
        DERIVED,
        NOT_REPORTED,
        PAIR_KEY,
        RUN_FROM_RUNNER,
        RUN_SCHEMA,
    )
else:
    __getattr__ = _lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ATTEMPT_FROM_RUNNER",
    "ATTEMPT_SCHEMA",
    "DEFAULT_THRESHOLDS",
    "DERIVED",
    "EXIT_CODES",
    "METRICS",
    "NOT_REPORTED",
    "PAIR_KEY",
    "RUN_FROM_RUNNER",
    "RUN_SCHEMA",
    "Comparison",
    "GateResult",
    "Metric",
    "MetricDelta",
    "ReportError",
    "ResultSet",
    "RuleResult",
    "add_report_commands",
    "attempt_table",
    "cached_input_share",
    "cached_input_share_eligible",
    "check_thresholds",
    "compare",
    "comparison_warnings",
    "cost_per_successful_task",
    "evaluate",
    "gate_thresholds",
    "headline",
    "load_results",
    "miss_reasons",
    "missing_runs",
    "most_regressed",
    "parse_formats",
    "parse_threshold",
    "pass_rate",
    "render_html",
    "render_json",
    "render_markdown",
    "report_data",
    "retries_per_task",
    "run_compare",
    "run_gate",
    "run_table",
    "stop_state_distribution",
    "thresholds_from_pyproject",
    "ttft_by_model_and_context",
    "verdict_line",
    "write_report",
]
