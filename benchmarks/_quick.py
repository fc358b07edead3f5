"""Every benchmark's short mode: ``--quick`` on its command line, or ``HARNESS_BENCH_QUICK=1``.

A short run does a benchmark's work on a small scale (fewer rounds, turns, rows
or cases), so tests/test_benchmarks.py runs every script in seconds and a script
that no longer runs is caught. Its figures measure nothing: read a full run's.

    .venv/bin/python benchmarks/bench_journal_append.py --quick
"""

from __future__ import annotations

import os
import sys
from typing import TypeVar

ENV = "HARNESS_BENCH_QUICK"
T = TypeVar("T")


def quick() -> bool:
    """Whether this run is short; ``--quick`` is taken off the command line, and the
    environment carries it to the processes the benchmark starts."""
    if "--quick" in sys.argv:
        sys.argv.remove("--quick")
        os.environ[ENV] = "1"
    return os.environ.get(ENV) == "1"


def scaled(full: T, short: T) -> T:
    """``full`` in a full run, ``short`` in a short one."""
    return short if quick() else full
