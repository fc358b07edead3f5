"""A framework agent's cases beside the bare openai-SDK agent's, on the same scenarios.

Every agent of ``examples/frameworks`` runs every case of its folder of scenarios
(no fault, a stall, a 429, cut arguments, a crash right after the send: the same
five for each, in its dialect), in this process, once to warm up (the framework's
import is paid there, once per worker, as ``harness run`` pays it), then
``ROUNDS`` times measured. The figure is CPU seconds per case
(``time.process_time``: the benchmark shares its cores), the median of the rounds,
and its ratio to ``examples.frameworks.openai_sdk`` (no framework); then the same
for the crash case alone (a crash right after the send), replayed from its start.
Each round starts with no recorded run, as a fresh ``harness run`` does: a
recording kept from the warm-up would serve the crash case's restart from memory.
A framework whose package is not installed (the ``frameworks`` extra) is named and
left out.

    .venv/bin/python benchmarks/bench_framework_agents.py [--rounds 3] [--only langgraph_agent]
    .venv/bin/python benchmarks/bench_framework_agents.py --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

from _quick import scaled

from harness.intercept import PlainEntry
from harness.runner import _explore, plan_cases, run_case
from harness.scenario import load_scenario

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "frameworks"
BASELINE = "openai_sdk"
# The module of each example, and the package it needs.
AGENTS = {
    "openai_sdk": "openai",
    "openai_agents_sdk": "agents",
    "langgraph_agent": "langgraph",
    "smolagents_agent": "smolagents",
    "litellm_agent": "litellm",
    "pydantic_ai_agent": "pydantic_ai",
    "anthropic_tool_runner": "anthropic",
    "llamaindex_agent": "llama_index",
}


def cases_of(module: str, *, crash_only: bool = False) -> list[tuple[object, object]]:
    entry = PlainEntry(f"examples.frameworks.{module}:main")
    jobs = []
    for path in sorted((FOLDER / "scenarios" / module).glob("*.yaml")):
        scenario = load_scenario(path)
        jobs += [(case, scenario) for case in plan_cases(scenario, path, entry)
                 if case.crash or not crash_only]
    return jobs[:scaled(len(jobs), 1)]


def seconds_per_case(module: str, rounds: int, *, crash_only: bool = False
                     ) -> tuple[float, int, dict[str, int]]:
    entry = PlainEntry(f"examples.frameworks.{module}:main")
    jobs = cases_of(module, crash_only=crash_only)
    statuses: dict[str, int] = {}
    for case, scenario in jobs:  # warm-up: imports, pyfakefs's first scan
        run_case(case, scenario, entry, replay=crash_only)  # type: ignore[arg-type]
    times = []
    for _ in range(rounds):
        _explore._RECORDINGS.clear()
        _explore._MADE.clear()
        started = time.process_time()
        statuses = {}
        for case, scenario in jobs:
            status = run_case(case, scenario, entry,  # type: ignore[arg-type]
                              replay=crash_only).status
            statuses[status] = statuses.get(status, 0) + 1
        times.append((time.process_time() - started) / len(jobs))
    return statistics.median(times), len(jobs), statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=scaled(3, 1))
    parser.add_argument("--only", action="append", default=[],
                        help="measure only this example module (again for more)")
    options = parser.parse_args()
    wanted = [BASELINE, *[m for m in options.only if m != BASELINE]] if options.only \
        else list(AGENTS)
    baseline: float | None = None
    crash_baseline: float | None = None
    for module in wanted:
        if importlib.util.find_spec(AGENTS[module]) is None:
            print(f"{module:<24} not measured: {AGENTS[module]!r} is not installed "
                  "(pip install -e '.[frameworks]')")
            continue
        seconds, count, statuses = seconds_per_case(module, options.rounds)
        crash, _, _ = seconds_per_case(module, options.rounds, crash_only=True)
        baseline = seconds if module == BASELINE else baseline
        crash_baseline = crash if module == BASELINE else crash_baseline
        ratio = f"{seconds / baseline:5.2f}x" if baseline else ""
        crash_ratio = f"{crash / crash_baseline:5.2f}x" if crash_baseline else ""
        print(f"{module:<24} {count:>3} cases {seconds * 1000:7.1f} ms CPU per case {ratio} "
              f"the bare SDK; crash case {crash * 1000:6.1f} ms {crash_ratio}  {statuses}")


if __name__ == "__main__":
    main()
