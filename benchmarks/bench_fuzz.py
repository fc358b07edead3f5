"""``harness fuzz`` on one core: 200 schedules of a two-tool scenario, against two agents.

The scenario is the shipped ``scenarios/crash/unknown-send-is-inspected.yaml`` (mail and
outbox). Side by side in one run:

- the naive agent (``examples.naive_resend_agent``, re-executes a call whose outcome is
  unknown after a crash): the search must find its crash-after-send duplicate and write a
  repro of at most 15 lines;
- the reference agent: the same budget must find nothing (no false alarm);
- the alternative, the same number of cases run straight through ``run_case`` without
  a search, for the ratio that is Hypothesis's cost (drawing, shrinking, the database).

Target: each search within 60 s on one core.

    .venv/bin/python benchmarks/bench_fuzz.py [--budget 200] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _quick import scaled

from examples.naive_resend_agent import agent as naive
from harness.fuzz import fuzz_scenario, write_repro
from harness.runner import plan_cases, run_case
from harness.scenario import load_scenario

SOURCE = Path(__file__).resolve().parent.parent / "scenarios/crash/unknown-send-is-inspected.yaml"
TARGET_SECONDS = 60.0
MAX_REPRO_LINES = 15


def _search(label: str, budget: int, seed: int, out: Path, *, broken: bool) -> float:
    scenario = load_scenario(SOURCE)
    started = time.perf_counter()
    outcome = fuzz_scenario(scenario, SOURCE, budget=budget, seed=seed, out=out,
                            agent=naive if broken else None,
                            agent_spec="examples.naive_resend_agent:agent" if broken else None)
    elapsed = time.perf_counter() - started
    found = "nothing found"
    if outcome.found is not None:
        path, _ = write_repro(outcome.found, out, found_by="bench", agent_spec=None)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        violated = ",".join(v.invariant for v in outcome.found.violated)
        found = (f"{violated} at schedule {outcome.runs_to_find}, repro {lines} lines "
                 f"({'ok' if lines <= MAX_REPRO_LINES else 'TOO LONG'})")
    verdict = "ok" if elapsed <= TARGET_SECONDS else "TOO SLOW"
    print(f"{label:<32} {outcome.runs:>5} runs  {elapsed:6.2f} s  "
          f"{1000 * elapsed / max(outcome.runs, 1):6.1f} ms/run  {verdict:<8} {found}")
    return elapsed / max(outcome.runs, 1)


def _straight(label: str, runs: int) -> float:
    scenario = load_scenario(SOURCE)
    cases = plan_cases(scenario.model_copy(update={"crash": scenario.crash.model_copy(
        update={"points": "all"})}), SOURCE)
    started = time.perf_counter()
    for i in range(runs):
        run_case(cases[i % len(cases)], scenario)
    elapsed = time.perf_counter() - started
    print(f"{label:<32} {runs:>5} runs  {elapsed:6.2f} s  {1000 * elapsed / runs:6.1f} ms/run")
    return elapsed / runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=scaled(200, 4))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        _search("fuzz, naive agent", args.budget, args.seed, out / "naive", broken=True)
        per_run = _search("fuzz, reference agent", args.budget, args.seed, out / "reference",
                          broken=False)
    plain = _straight("run_case alone, reference agent", args.budget)
    print(f"search cost per schedule / plain case run: {per_run / plain:.2f}x")


if __name__ == "__main__":
    main()
