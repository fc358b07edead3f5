"""Crash exploration of long scenarios, side by side: replaying each case vs the recorded run.

One append per turn, every persistence point, one crash class (``unsynced_lost``),
one core. For each length the same cases run both ways in this one process:
``replay`` (``HARNESS_REPLAY=1``: incarnation 1 from the start up to the crash) and
``explore`` (the default: each case starts from the world copied at its point in
one recorded run, and stops if it rejoins that run). Both must give the same digest
for every case; the script says so, or exits 1.

Printed per length: cases, seconds both ways, milliseconds per case, the speed-up,
how the explored cases ran, and the per-case ratio of the longest to the shortest.

    .venv/bin/python benchmarks/bench_crash_exploration.py [--agent minimal:FLAW] [--turns 8,32]
    .venv/bin/python benchmarks/bench_crash_exploration.py --quick
    .venv/bin/python benchmarks/bench_crash_exploration.py --suite
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from _quick import scaled

from harness.runner import AgentUnderTest, CaseResult, _explore, plan_cases, run_case
from harness.scenario import Scenario

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "runner"))
from long_scenarios import appends  # type: ignore[import-not-found]

PLAIN = "examples.openai_careful.agent:main"
PLAIN_TOOLS = "examples.openai_agent.tools"


def _factory(agent: str) -> AgentUnderTest | None:
    if agent == "reference":
        return None
    if agent == "plain":
        from harness.intercept import PlainEntry

        return PlainEntry(PLAIN)
    from minimal_agent import minimal_factory  # type: ignore[import-not-found]

    factory: AgentUnderTest = minimal_factory(*agent.split(":")[1:])
    return factory


def _for(agent: str, scenario: Scenario) -> Scenario:
    """``scenario`` as the agent can run it: the unchanged agent's append tool is its own."""
    if agent != "plain":
        return scenario
    data = scenario.model_dump(mode="json", exclude_none=True)
    data["tools"] = {"append_note": {"kind": "append",
                                     "target": f"{PLAIN_TOOLS}:append_note"}}
    for step in data["model"]:
        for call in step.get("calls", []):
            call["tool"] = "append_note"
    return Scenario.model_validate(data)


def _timed(scenario: Scenario, factory: AgentUnderTest | None, replay: bool
           ) -> tuple[float, list[CaseResult]]:
    cases = [c for c in plan_cases(scenario, Path("bench.yaml"), factory) if c.crash]
    started = time.process_time()
    results = [run_case(case, scenario, factory, replay=replay) for case in cases]
    return time.process_time() - started, results


def _suite() -> int:
    """Every shipped scenario, every case, both ways: verdicts and digests must be equal."""
    from harness.scenario import load_scenario

    root = Path(__file__).resolve().parent.parent / "scenarios"
    differ, cases, replay_s, explore_s, ways = [], 0, 0.0, 0.0, Counter[str]()
    for source in sorted(root.glob("*/*.yaml")):
        scenario = load_scenario(source)
        planned = plan_cases(scenario, source)
        started = time.perf_counter()
        replayed = [run_case(case, scenario, replay=True) for case in planned]
        middle = time.perf_counter()
        explored = [run_case(case, scenario) for case in planned]
        replay_s, explore_s = replay_s + middle - started, explore_s + time.perf_counter() - middle
        cases += len(planned)
        ways.update(r.exploration for r in explored)
        ways["of which shared"] += sum(r.shared_restarts for r in _explore._RECORDINGS.values())
        _explore._RECORDINGS.clear()
        differ += [e.case.case_id for e, r in zip(explored, replayed, strict=True)
                   if (e.digest, e.verdicts) != (r.digest, r.verdicts)]
    print(f"shipped suite, {cases} cases: replay {replay_s:.1f} s, explore {explore_s:.1f} s; "
          f"{dict(ways)}; {len(differ)} differ {differ[:5]}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", default="reference",
                        help="reference, plain (the careful openai-SDK example, "
                             "unchanged), minimal, or minimal:FLAW (the tests' minimal agent, e.g. "
                             "minimal:ids_per_run, which can rejoin the recorded run)")
    parser.add_argument("--turns", default=scaled("8,32", "2,3"), help="comma-separated lengths")
    parser.add_argument("--suite", action="store_true",
                        help="instead: the shipped scenarios, every case, both ways")
    args = parser.parse_args()
    if args.suite:
        return _suite()
    factory = _factory(args.agent)
    per_case: dict[int, tuple[float, float]] = {}
    same = True
    for turns in (int(t) for t in args.turns.split(",")):
        scenario = _for(args.agent, appends(turns))
        replay_s, replayed = _timed(scenario, factory, replay=True)
        explore_s, explored = _timed(scenario, factory, replay=False)
        n = len(replayed)
        same &= [r.digest for r in replayed] == [r.digest for r in explored]
        per_case[turns] = (replay_s / n, explore_s / n)
        ways = dict(Counter(r.exploration for r in explored))
        # Of the "recorded" ones, those that took an earlier case's restart.
        ways["of which shared"] = sum(r.shared_restarts for r in _explore._RECORDINGS.values())
        _explore._RECORDINGS.clear()
        print(f"{turns:>3} turns, {n:>5} crash cases: replay {replay_s:6.2f} s "
              f"({1000 * replay_s / n:5.1f} ms/case), explore {explore_s:6.2f} s "
              f"({1000 * explore_s / n:5.1f} ms/case): {replay_s / explore_s:4.1f}x; {ways}")
    if len(per_case) > 1:
        short, longest = min(per_case), max(per_case)
        print(f"per-case cost, {longest} turns over {short}: replay "
              f"{per_case[longest][0] / per_case[short][0]:.1f}x, explore "
              f"{per_case[longest][1] / per_case[short][1]:.1f}x")
    print("digests: equal both ways" if same else "digests: DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
