"""A framework agent's cases beside the bare openai-SDK agent's, on the same scenarios.

Every agent of ``examples/frameworks`` runs every case of its folder of scenarios
(no fault, a stall, a 429, cut arguments, a crash right after the send: the same
five for each, in its dialect), in this process, once to warm up (the framework's
import is paid there, once per worker, as ``harness run`` pays it), then
``ROUNDS`` times measured. The figure is CPU seconds per case
(``time.process_time``: the benchmark shares its cores), the median of the rounds
(interleaved: each round measures every agent once), and its ratio to
``examples.frameworks.openai_sdk`` (no framework); then the same
for the crash case alone (a crash right after the send), replayed from its start.
Each round starts with no recorded run, as a fresh ``harness run`` does: a
recording kept from the warm-up would serve the crash case's restart from memory.
A framework whose package is not installed (the ``frameworks`` extra) is named and
left out.

``--outside`` adds the crash case played outside the harness (``_outside.py``: plain
asyncio, a fake httpx transport handing back the answers the harness's run got), beside
the bare SDK's played alike: how much of a framework's ratio is the framework's own.

    .venv/bin/python benchmarks/bench_framework_agents.py [--rounds 3] [--only langgraph_agent]
    .venv/bin/python benchmarks/bench_framework_agents.py --outside
    .venv/bin/python benchmarks/bench_framework_agents.py --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import _outside
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
    "autogen_agent": "autogen_agentchat",
    "haystack_agent": "haystack",
    "google_adk_agent": "google.adk",  # in an environment of its own (not the extra)
}


def installed(package: str) -> bool:
    """Whether ``package`` imports (a dotted one's parent may be missing too)."""
    try:
        return importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:
        return False


def cases_of(module: str, *, crash_only: bool = False) -> list[tuple[object, object]]:
    entry = PlainEntry(f"examples.frameworks.{module}:main")
    jobs = []
    for path in sorted((FOLDER / "scenarios" / module).glob("*.yaml")):
        scenario = load_scenario(path)
        jobs += [(case, scenario) for case in plan_cases(scenario, path, entry)
                 if case.crash or not crash_only]
    return jobs[:scaled(len(jobs), 1)]


def _one_round(jobs: list[tuple[object, object]], entry: PlainEntry, crash_only: bool
               ) -> tuple[float, dict[str, int]]:
    """CPU seconds per case over ``jobs``, starting with no recorded run, and their statuses."""
    _explore._RECORDINGS.clear()
    _explore._MADE.clear()
    statuses: dict[str, int] = {}
    started = time.process_time()
    for case, scenario in jobs:
        status = run_case(case, scenario, entry,  # type: ignore[arg-type]
                          replay=crash_only).status
        statuses[status] = statuses.get(status, 0) + 1
    return (time.process_time() - started) / len(jobs), statuses


def seconds_per_case(modules: list[str], rounds: int, *, crash_only: bool = False
                     ) -> dict[str, tuple[float, int, dict[str, int]]]:
    """Each module's median CPU seconds per case, its case count and statuses.

    The rounds are interleaved (every module once, then every module again): a
    machine whose load changes while the benchmark runs weighs on every module
    alike, and the ratios stay put.
    """
    entries = {m: PlainEntry(f"examples.frameworks.{m}:main") for m in modules}
    jobs = {m: cases_of(m, crash_only=crash_only) for m in modules}
    for module in modules:  # warm-up: imports, pyfakefs's first scan
        for case, scenario in jobs[module]:
            run_case(case, scenario, entries[module], replay=crash_only)  # type: ignore[arg-type]
    times: dict[str, list[float]] = {m: [] for m in modules}
    statuses: dict[str, dict[str, int]] = {}
    for _ in range(rounds):
        for module in modules:
            seconds, statuses[module] = _one_round(jobs[module], entries[module], crash_only)
            times[module].append(seconds)
    return {m: (statistics.median(times[m]), len(jobs[m]), statuses[m]) for m in modules}


def outside_seconds(modules: list[str], rounds: int) -> dict[str, float]:
    """Each module's crash case outside the harness: median CPU seconds, rounds interleaved."""
    recordings = {}
    for module in modules:
        entry = PlainEntry(f"examples.frameworks.{module}:main")
        case, scenario = cases_of(module, crash_only=True)[0]
        recordings[module] = _outside.record(case, scenario, entry)
        played = _outside.play(recordings[module])  # warm-up
        if any(incarnation.left for incarnation in played):
            print(f"{module:<24} outside the harness, asked fewer requests than in it: "
                  f"{played}")
    times: dict[str, list[float]] = {m: [] for m in modules}
    for _ in range(rounds):
        for module in modules:
            started = time.process_time()
            _outside.play(recordings[module])
            times[module].append(time.process_time() - started)
    return {m: statistics.median(times[m]) for m in modules}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=scaled(3, 1))
    parser.add_argument("--only", action="append", default=[],
                        help="measure only this example module (again for more)")
    parser.add_argument("--outside", action="store_true",
                        help="also play each crash case outside the harness (see _outside.py)")
    options = parser.parse_args()
    wanted = [BASELINE, *[m for m in options.only if m != BASELINE]] if options.only \
        else list(AGENTS)
    measured = []
    for module in wanted:
        if not installed(AGENTS[module]):
            print(f"{module:<24} not measured: {AGENTS[module]!r} is not installed "
                  "(pip install -e '.[frameworks]')")
            continue
        measured.append(module)
    cases = seconds_per_case(measured, options.rounds)
    crashes = seconds_per_case(measured, options.rounds, crash_only=True)
    baseline, crash_baseline = cases[BASELINE][0], crashes[BASELINE][0]
    for module in measured:
        seconds, count, statuses = cases[module]
        crash = crashes[module][0]
        print(f"{module:<24} {count:>3} cases {seconds * 1000:7.1f} ms CPU per case "
              f"{seconds / baseline:5.2f}x the bare SDK; crash case {crash * 1000:6.1f} ms "
              f"{crash / crash_baseline:5.2f}x  {statuses}")
    if options.outside:
        alone = outside_seconds(measured, options.rounds)
        print("the crash case outside the harness (plain asyncio, a fake httpx transport):")
        for module in measured:
            inside = crashes[module][0]
            print(f"{module:<24} {alone[module] * 1000:6.1f} ms CPU "
                  f"{alone[module] / alone[BASELINE]:5.2f}x the bare SDK's; under the "
                  f"harness {inside * 1000:6.1f} ms, {(inside - alone[module]) * 1000:+.1f} ms")


if __name__ == "__main__":
    main()
