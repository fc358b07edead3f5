"""Wall time of a 120 s stall, then a 429 with Retry-After: 60, then success.

The alternative is waiting for real: the same run on a wall clock takes the
virtual seconds it reports (92 s: a 30 s idle watchdog, a 2 s backoff, the
60 s Retry-After). Target: median wall time <= 50 ms.

Run: python benchmarks/bench_stall_retry.py [--quick]
"""

from __future__ import annotations

import statistics
import time

from _quick import scaled

from fakes import HttpError, Stall
from harness._demo import REPLY
from harness._streamcase import run_stream_case
from harness.ports import Dialect

RUNS = scaled(200, 3)
FAULTS = {(1, 1): (Stall(after_events=3, seconds=120),), (1, 2): (HttpError(429, retry_after=60),)}


def measure(dialect: Dialect) -> tuple[float, float]:
    """Median wall seconds over RUNS, and the virtual seconds one run covers."""
    walls, virtual = [], 0.0
    for _ in range(RUNS):
        started = time.perf_counter()
        case = run_stream_case(dialect, REPLY, FAULTS)
        walls.append(time.perf_counter() - started)
        assert case.result.outcome == "committed", case.result.error
        virtual = case.virtual_seconds
    return statistics.median(walls), virtual


def main() -> None:
    print(f"{'dialect':<10} {'median wall ms':>15} {'virtual s':>10} "
          f"{'real/virtual speed-up':>22}")
    for dialect in ("openai", "anthropic"):
        median, virtual = measure(dialect)
        print(f"{dialect:<10} {median * 1000:>15.2f} {virtual:>10.1f} "
              f"{virtual / median:>21.0f}x")
    print("target: median wall time <= 50 ms")


if __name__ == "__main__":
    main()
