"""Crash runs per second on one core: a multi-tool scenario, every point x when x class.

Each crash run is a whole case: incarnation 1 until the crash, the restarted
incarnation to a stop state, two more recoveries for I11, and every invariant
checked. The agent is the reference agent; ``--minimal`` uses the tests'
minimal agent instead. Target: at least 200 crash runs per second per core.

``--against REV`` measures this tree and the commit REV side by side: two worker
processes, one per tree, run every crash case in turns (rounds alternate, so a
busy machine weighs on both alike), and the best round of each is reported, in
wall time and in CPU time (the process's own seconds: crash runs per second per
core, whatever else the machine runs), with the ratio.

    .venv/bin/python benchmarks/bench_crash_runs.py [--minimal] [--quick]
    .venv/bin/python benchmarks/bench_crash_runs.py --against main [--rounds 5]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _quick import scaled
from _side_by_side import option
from _side_by_side import rounds as given_rounds
from _side_by_side import trees as side_by_side

from harness.ports import AgentFactory
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
    if "--worker" in sys.argv:
        _worker()
    elif option("--against") is not None:
        _side_by_side(str(option("--against")), given_rounds(scaled(5, 1)))
    else:
        _once()


def _once() -> None:
    factory = _factory()
    cases = [c for c in plan_cases(SCENARIO, Path("bench.yaml"), factory) if c.crash]
    cases = cases[:scaled(len(cases), 6)]
    agent = "minimal" if factory else "reference"
    # Side by side: each case replayed from its start, and started from the recorded run
    # (the recording itself is counted: it is made by the first case that needs it).
    for way, replay in (("replayed", True), ("explored", False)):
        started = time.perf_counter()
        outcomes: Counter[str] = Counter()
        ways: Counter[str] = Counter()
        for case in cases:
            result = run_case(case, SCENARIO, factory, replay=replay)
            outcomes["passed" if result.passed else "failed"] += 1
            ways[result.exploration] += 1
        elapsed = time.perf_counter() - started
        # Of the "recorded" ones, some ran nothing after their crash: an earlier case
        # left the same state, and its restart is theirs (harness.runner._explore).
        ways["of which shared"] = _shared_restarts()
        print(f"{way}: {len(cases)} crash runs ({agent} agent) in {elapsed:.2f}s: "
              f"{len(cases) / elapsed:.0f} crash runs/s on one core; {dict(outcomes)}; "
              f"{dict(ways)}")


def _forget_recordings() -> None:
    """Drop the recorded runs (and the restarts they share) of the tree under test."""
    try:
        from harness.runner import _explore
    except ImportError:  # a tree from before crash exploration: nothing is kept
        return
    _explore._RECORDINGS.clear()
    _explore._MADE.clear()


def _shared_restarts() -> int:
    from harness.runner import _explore

    return sum(r.shared_restarts for r in _explore._RECORDINGS.values())


def _worker() -> None:
    """Run every crash case once per line read; answer with the round's times as JSON."""
    factory = _factory()
    cases = [c for c in plan_cases(SCENARIO, Path("bench.yaml"), factory) if c.crash]
    cases = cases[:scaled(len(cases), 6)]
    run_case(cases[0], SCENARIO, factory)  # imports and first-call caches, outside the rounds
    for _ in sys.stdin:
        _forget_recordings()  # each round records the scenario again and shares nothing
        wall, cpu = time.perf_counter(), time.process_time()
        passed = sum(run_case(case, SCENARIO, factory).passed for case in cases)
        print(json.dumps({"cases": len(cases), "passed": passed,
                          "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}),
              flush=True)


def _side_by_side(revision: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as base, \
             side_by_side(Path(base), revision) as trees:
        workers = {name: _start_worker(tree) for name, tree in trees.items()}
        best: dict[str, dict[str, float]] = {name: {} for name in trees}
        for _ in range(rounds):
            for name, worker in workers.items():
                assert worker.stdin is not None
                assert worker.stdout is not None
                worker.stdin.write("go\n")
                worker.stdin.flush()
                round_ = json.loads(worker.stdout.readline())
                for clock in ("wall", "cpu"):
                    rate = round_["cases"] / round_[clock]
                    best[name][clock] = max(best[name].get(clock, 0.0), rate)
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()
    for name, rates in best.items():
        print(f"{name:>12}: {rates['cpu']:.0f} crash runs/s per core (CPU time), "
              f"{rates['wall']:.0f}/s wall; best of {rounds} rounds")
    old, new = best[revision], best["this tree"]
    print(f"ratio this tree / {revision}: {new['cpu'] / old['cpu']:.2f}x CPU, "
          f"{new['wall'] / old['wall']:.2f}x wall")


def _start_worker(tree: Path) -> subprocess.Popen[str]:
    """This script's worker over the harness of ``tree`` (first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, __file__, "--worker", *(a for a in sys.argv if a == "--minimal")]
    return subprocess.Popen(argv, cwd=tree, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


if __name__ == "__main__":
    main()
