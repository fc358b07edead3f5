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

from harness import ReportError as ReportError
from harness.frontend import exported_names as _exported_names
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
    from reports._commands import add_report_commands as add_report_commands
    from reports._commands import run_compare as run_compare
    from reports._commands import run_gate as run_gate
    from reports._compare import Comparison as Comparison
    from reports._compare import MetricDelta as MetricDelta
    from reports._compare import compare as compare
    from reports._compare import missing_runs as missing_runs
    from reports._compare import most_regressed as most_regressed
    from reports._gate import DEFAULT_THRESHOLDS as DEFAULT_THRESHOLDS
    from reports._gate import EXIT_CODES as EXIT_CODES
    from reports._gate import GateResult as GateResult
    from reports._gate import RuleResult as RuleResult
    from reports._gate import check_thresholds as check_thresholds
    from reports._gate import evaluate as evaluate
    from reports._gate import gate_thresholds as gate_thresholds
    from reports._gate import parse_threshold as parse_threshold
    from reports._gate import thresholds_from_pyproject as thresholds_from_pyproject
    from reports._load import ResultSet as ResultSet
    from reports._load import attempt_table as attempt_table
    from reports._load import load_results as load_results
    from reports._load import run_table as run_table
    from reports._metrics import METRICS as METRICS
    from reports._metrics import Metric as Metric
    from reports._metrics import cached_input_share as cached_input_share
    from reports._metrics import cached_input_share_eligible as cached_input_share_eligible
    from reports._metrics import cost_per_successful_task as cost_per_successful_task
    from reports._metrics import headline as headline
    from reports._metrics import miss_reasons as miss_reasons
    from reports._metrics import pass_rate as pass_rate
    from reports._metrics import retries_per_task as retries_per_task
    from reports._metrics import stop_state_distribution as stop_state_distribution
    from reports._metrics import ttft_by_model_and_context as ttft_by_model_and_context
    from reports._render import comparison_warnings as comparison_warnings
    from reports._render import parse_formats as parse_formats
    from reports._render import render_html as render_html
    from reports._render import render_json as render_json
    from reports._render import render_markdown as render_markdown
    from reports._render import report_data as report_data
    from reports._render import verdict_line as verdict_line
    from reports._render import write_report as write_report
    from reports._schema import ATTEMPT_FROM_RUNNER as ATTEMPT_FROM_RUNNER
    from reports._schema import ATTEMPT_SCHEMA as ATTEMPT_SCHEMA
    from reports._schema import DERIVED as DERIVED
    from reports._schema import NOT_REPORTED as NOT_REPORTED
    from reports._schema import PAIR_KEY as PAIR_KEY
    from reports._schema import RUN_FROM_RUNNER as RUN_FROM_RUNNER
    from reports._schema import RUN_SCHEMA as RUN_SCHEMA
else:
    __getattr__ = _lazy_exports(__name__, _EXPORTS)

__all__ = list(_exported_names(_EXPORTS, "ReportError"))
