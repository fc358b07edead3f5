"""``harness compare`` and ``harness gate``: argument wiring over the reports library.

::

    harness compare BASELINE CANDIDATE [--out DIR] [--format md,html,json]
    harness gate BASELINE CANDIDATE [--threshold METRIC=VALUE ...] [--fail-on-unknown]

``compare`` writes the reports and exits 0 (2 on bad input), whatever the gate
says; ``gate`` prints every rule and exits with the code of
:data:`reports.EXIT_CODES`. Both read thresholds from ``[tool.harness.gate]``
of ``--config`` (default ``./pyproject.toml``); ``--threshold`` overrides one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness.frontend import add_prices_option, output_path, parse_seed, use_price_file
from reports._options import DEFAULT_RESAMPLES, DEFAULT_SEED, FORMATS

if TYPE_CHECKING:
    from reports._compare import Comparison
    from reports._gate import GateResult

_STATUS_MARK = {"pass": "PASS", "fail": "FAIL", "unknown": "UNKNOWN"}


def add_report_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare`` and ``gate`` on the ``harness`` sub-command parser."""
    cmp = commands.add_parser("compare", help="compare two result folders; write md/html/json")
    _common(cmp)
    cmp.add_argument("--out", type=output_path, default=Path("report"),
                     help="folder for report.md, report.html, report.json (default: report)")
    cmp.add_argument("--format", default=",".join(FORMATS), metavar="LIST",
                     help=f"comma-separated formats out of {', '.join(FORMATS)} (default: all)")
    gate = commands.add_parser("gate", help="gate a deploy: recovery rules, dropped cases, "
                               "metric regressions; distinct exit codes")
    _common(gate)
    gate.add_argument("--out", type=output_path, default=None,
                      help="also write the reports (md, html, json) to this folder")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", type=Path, metavar="BASELINE", help="baseline result folder")
    parser.add_argument("candidate", type=Path, metavar="CANDIDATE",
                        help="candidate result folder")
    parser.add_argument("--threshold", action="append", default=[], metavar="METRIC=VALUE",
                        help="regression threshold, overriding [tool.harness.gate] (repeatable)")
    parser.add_argument("--config", type=Path, default=None,
                        help="pyproject.toml with [tool.harness.gate] (default: ./pyproject.toml "
                             "when present)")
    parser.add_argument("--fail-on-unknown", action="store_true",
                        help="exit 6 when a recovery rule cannot be decided (default: show it)")
    parser.add_argument("--accept-persistence-change", action="store_true",
                        help="pass persistence_changed: the candidate means to persist "
                             "differently (points of its own files gone, none new)")
    add_prices_option(parser)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                        help=f"bootstrap resamples (default: {DEFAULT_RESAMPLES})")
    parser.add_argument("--seed", type=parse_seed, default=DEFAULT_SEED,
                        help=f"bootstrap seed (default: {DEFAULT_SEED})")


def _judge(args: argparse.Namespace) -> tuple[Comparison, GateResult]:
    from reports._compare import compare
    from reports._gate import evaluate, gate_thresholds, parse_threshold
    from reports._load import load_results

    use_price_file(args.prices)
    config = args.config or Path("pyproject.toml")
    thresholds = gate_thresholds(config, required=args.config is not None)
    thresholds.update(parse_threshold(text) for text in args.threshold)
    comparison = compare(load_results(args.baseline), load_results(args.candidate),
                         resamples=args.resamples, seed=args.seed)
    return comparison, evaluate(comparison, thresholds, fail_on_unknown=args.fail_on_unknown,
                                accept_persistence_change=args.accept_persistence_change)


def run_compare(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``harness compare``: write the reports, print the verdict line and where they went."""
    from reports._render import gate_preview_line, parse_formats, write_report

    out = out or sys.stdout
    formats = parse_formats(args.format)
    comparison, gate = _judge(args)
    for path in write_report(comparison, gate, args.out, formats):
        print(f"wrote {path}", file=out)
    _print_warnings(comparison, out)
    print(gate_preview_line(gate), file=out)
    return 0


def run_gate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``harness gate``: print every rule with its reason; exit with the gate's code."""
    from reports._render import verdict_line, write_report

    out = out or sys.stdout
    comparison, gate = _judge(args)
    if args.out is not None:
        write_report(comparison, gate, args.out)
    for rule in gate.rules:
        print(f"{_STATUS_MARK[rule.status]:8} {rule.rule}: {rule.reason}", file=out)
    _print_warnings(comparison, out)
    print(verdict_line(gate), file=out)
    return gate.exit_code


def _print_warnings(comparison: Comparison, out: TextIO) -> None:
    from reports._render import comparison_warnings

    for warning in comparison_warnings(comparison):
        print(f"warning: {warning}", file=out)
