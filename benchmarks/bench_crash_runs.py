"""Crash runs per second on one core: a multi-tool scenario, every point x when x class.

Each crash run is a whole case: incarnation 1 until the crash, the restarted
incarnation to a stop state, two more recoveries for I11, and every invariant
checked. The agent is the reference agent; ``--minimal`` uses the tests'
minimal agent instead. Target: at least 200 crash runs per second per core.

    .venv/bin/python benchmarks/bench_crash_runs.py [--minimal]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from harness.agent import AgentFactory
from harness.runner import plan_cases, run_case
from harness.scenario import Scenario

SCENARIO = Scenario.model_validate({
    "name": "bench-multi-tool",
    "dialect": "openai",
    "seed": 11,
    "tools": {"notes": {"kind": "append"}, "mail": {"kind": "send"},
              "store": {"kind": "put"}, "look": {"kind": "inspect"}},
    "model": [
        {"turn": 1, "text": "Working.", "calls": [
            {"tool": "notes", "args": {"text": "hello"}},
            {"tool": "mail", "args": {"to": "a@example.com", "body": "hi"}},
            {"tool": "store", "args": {"key": "k", "value": 1}}]},
        {"turn": 2, "when": {"outcome": "unknown_after_restart"}, "calls": [{"tool": "look"}]},
        {"turn": 2, "text": "Done."},
        {"turn": 3, "text": "Done after looking."},
    ],
    "crash": {"points": "all"},
    "expect": {"stop_state": "complete"},
})


def _factory() -> AgentFactory | None:
    if "--minimal" not in sys.argv:
        return None  # the reference agent
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "runner"))
    from minimal_agent import minimal_factory  # type: ignore[import-not-found]

    factory: AgentFactory = minimal_factory()
    return factory


def main() -> None:
    factory = _factory()
    cases = [c for c in plan_cases(SCENARIO, Path("bench.yaml"), factory) if c.crash]
    agent = "minimal" if factory else "reference"
    # Side by side: each case replayed from its start, and started from the recorded run
    # (the recording itself is counted: it is made by the first case that needs it).
    for way, replay in (("replayed", True), ("explored", False)):
        started = time.perf_counter()
        outcomes: Counter[str] = Counter()
        for case in cases:
            result = run_case(case, SCENARIO, factory, replay=replay)
            outcomes["passed" if result.passed else "failed"] += 1
        elapsed = time.perf_counter() - started
        print(f"{way}: {len(cases)} crash runs ({agent} agent) in {elapsed:.2f}s: "
              f"{len(cases) / elapsed:.0f} crash runs/s on one core; {dict(outcomes)}")


if __name__ == "__main__":
    main()
