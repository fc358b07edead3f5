"""Crash runs per CPU-second of an unchanged agent, beside the reference agent's.

The same two-tool scenario (a mail, then a note) is crashed at every world event
and, for each agent, at every point of its own files, in two classes. Each run
is a whole case: the first incarnation until the crash, the restart to a stop
state, every invariant checked. The unchanged agent is
``examples.openai_careful`` on the official ``openai`` SDK: its HTTP, time, files
and tool functions are intercepted for every incarnation (modules imported
afresh, pyfakefs patched in and out), which the reference agent, built on the
ports, never pays. Both are explored (each crash case starts from the world copied
at its point in one recorded run); the unchanged agent's cases are also run replayed
from their start, for the ratio exploration buys. CPU time (``time.process_time``),
so a busy machine changes the figures little. Each agent is loaded first as
``harness run --agent`` loads it (its module and SDK imported once per process, shown
on a line of its own), so the rates are those of the cases a suite runs after loading it.

Then the same for agents on a framework (``examples/frameworks``: LangGraph with
``SqliteSaver``, the OpenAI Agents SDK with ``SQLiteSession``), unchanged, on the same
script with the frameworks' tools and each one's dialect, beside the reference agent
on that very scenario. A framework that is not installed (the ``frameworks`` extra)
is named and left out.

    .venv/bin/python benchmarks/bench_unchanged_agent.py [--quick]
    .venv/bin/python benchmarks/bench_unchanged_agent.py --against main [--rounds 5]

Each agent is measured in five rounds, each round beside the reference agent, and its
ratio is the median of the rounds' (one round in a short run).

``--against REV`` measures this tree and the commit REV side by side: for each agent,
one worker process per tree (the agent loaded and every case run once first, outside
the rounds), and rounds that alternate between the trees, each round measuring the
reference agent, the agent and the reference agent again in that tree, so a busy machine
weighs on both trees
alike and the two ratios are in one run. Each tree's ratio is shown twice: the median of
its rounds' ratios, as above, and the best round's agent rate over the best round's
reference rate (the figure least moved by the other work of a shared machine, as the
other side-by-side benchmarks report it); then this tree's best agent rate over REV's.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

from _quick import scaled
from _side_by_side import option
from _side_by_side import rounds as given_rounds
from _side_by_side import trees as side_by_side

from harness.intercept import PlainEntry
from harness.runner import AgentUnderTest, Case, plan_cases, run_case
from harness.runner._agents import load_agent_factory
from harness.runner._explore import _RECORDINGS
from harness.scenario import Scenario

TOOLS = "examples.openai_agent.tools"
SCENARIO = Scenario.model_validate({
    "name": "bench-unchanged",
    "dialect": "openai",
    "seed": 21,
    "description": "Mail the CFO the invoice, then note it.",
    "tools": {"send_mail": {"kind": "send", "target": f"{TOOLS}:send_mail"},
              "append_note": {"kind": "append", "target": f"{TOOLS}:append_note"},
              "read_outbox": {"kind": "inspect", "target": f"{TOOLS}:read_outbox"}},
    "model": [
        {"turn": 1, "calls": [{"tool": "send_mail",
                               "args": {"to": "cfo@example.com", "body": "invoice 7"}}]},
        {"turn": 2, "calls": [{"tool": "append_note", "args": {"text": "invoice 7 sent"}}]},
        {"turn": 3, "text": "Sent and noted."},
    ],
    "crash": {"points": "all", "classes": ["unsynced_lost", "process_killed"]},
    "expect": {"stop_state": "complete"},
})
WORLD_POINTS = ["before_request:1", "mid_stream:1", "after_response:1", "after_tool:send_mail#1",
                "before_request:2", "after_tool:append_note#1", "after_response:3"]


# Paired rounds per agent (see paired); one in a short run.
ROUNDS = scaled(5, 1)
# Each framework example, the package it needs and the dialect it speaks.
FRAMEWORKS = {"langgraph_agent": ("langgraph", "openai"),
              "openai_agents_sdk": ("agents", "openai-responses")}
FRAMEWORK_TOOLS = "examples.frameworks.tools"


def framework_scenario(dialect: str) -> Scenario:
    """The benchmark's script with the frameworks' tools, in ``dialect``."""
    data = SCENARIO.model_dump(mode="json", exclude_none=True)
    data["dialect"] = dialect
    data["tools"] = {name: {**tool, "target": f"{FRAMEWORK_TOOLS}:{name}"}
                     for name, tool in data["tools"].items()}
    data["model"][0]["calls"][0]["args"]["subject"] = "invoice 7"
    return Scenario.model_validate(data)


def cpu_seconds() -> float:
    """CPU time used so far: every thread of this process (``time.process_time``, to the
    nanosecond) and every child process it has waited for, user and system alike.

    Not wall time: on a shared machine the wall time of the same work moved threefold
    between rounds. The cases run in this process (an agent's thread jobs are its
    threads); a child, were a case to start one, is counted once it is reaped.
    """
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


# Each side's crash cases, planned once per process: (scenario name, agent spec) -> cases.
_PLANNED: dict[tuple[str, str], list[Case]] = {}


def planned(scenario: Scenario, agent: AgentUnderTest | None) -> list[Case]:
    """The benchmark's crash cases for ``agent``: every point of its own, and the world
    events, in both classes; planned once, as a suite plans a scenario once."""
    key = (scenario.model_dump_json(), getattr(agent, "spec", "reference"))
    cases = _PLANNED.get(key)
    if cases is None:
        own = [c for c in plan_cases(scenario, Path("bench.yaml"), agent) if c.crash]
        world = scenario.model_copy(update={"crash": scenario.crash.model_copy(
            update={"points": WORLD_POINTS})})
        cases = own + [c for c in plan_cases(world, Path("bench.yaml"), agent) if c.crash]
        cases = _PLANNED[key] = cases[:scaled(len(cases), 4)]
    return cases


def measure(label: str, agent: AgentUnderTest | None, *, replay: bool = False,
            scenario: Scenario = SCENARIO, quiet: bool = False) -> float:
    cases = planned(scenario, agent)
    # Each measure runs its cases as a suite runs a scenario's, from its recording alone:
    # the restarts kept from a measure before (the reference agent's, measured twice in
    # a row across two rounds) are forgotten, as switching agents forgets them anyway.
    for recording in _RECORDINGS.values():
        recording.forget_crash_states()
    gc.collect()  # what ran before (the other side's measure) is not this one's to collect
    started = cpu_seconds()
    outcomes: Counter[str] = Counter()
    for case in cases:
        outcomes[run_case(case, scenario, agent, replay=replay).status] += 1
    elapsed = cpu_seconds() - started
    rate = len(cases) / elapsed
    if quiet:
        return rate
    print(f"{label:<46} {len(cases):>4} crash runs in {elapsed:6.2f} CPU-s: "
          f"{rate:7.1f} runs/CPU-s {dict(outcomes)}")
    return rate


def loaded(spec: str) -> PlainEntry:
    """``spec`` loaded as ``harness run --agent`` loads it, once per process, before any case.

    The check imports the agent's module and with it its SDK (``openai``: half a
    CPU-second), which every later case and incarnation finds imported; only the
    agent's own package is imported afresh in each incarnation. The import is
    timed and shown on its own line, as a run pays it once per worker.
    """
    started = cpu_seconds()
    entry = load_agent_factory(spec)
    elapsed = cpu_seconds() - started
    assert isinstance(entry, PlainEntry), entry
    print(f"{spec:<46} loaded once, as harness run does: {elapsed:6.2f} CPU-s "
          "(the SDK's import; not per case)")
    return entry


def sandwiched(reference: Callable[[], float], agent: Callable[[], float]
               ) -> tuple[float, float]:
    """One round: the reference agent's rate measured before and after the agent's, and
    their mean as the round's reference rate, beside the agent's rate.

    The load of a shared machine drifts within a round; measured on both sides of the
    agent, the reference agent's rate is taken under the load the agent met.
    """
    before = reference()
    rate = agent()
    after = reference()
    return (before + after) / 2, rate


def paired(label: str, agent: AgentUnderTest, scenario: Scenario = SCENARIO,
           reference_label: str = "reference agent (ports)") -> tuple[float, float]:
    """The agent's rate over the reference agent's, as the median of ``ROUNDS`` rounds that
    each measure both (the reference agent before and after the agent: :func:`sandwiched`);
    and the agent's median rate.

    One round measures about a CPU-second each, and the reference agent's own rate moved
    from 210 to 379 runs per CPU-second between two rounds of one run: a single round's
    ratio is not to be trusted to a tenth, the median of paired rounds is steadier.
    """
    ratios, rates = [], []
    for _ in range(ROUNDS):
        reference, rate = sandwiched(
            lambda: measure(reference_label, None, scenario=scenario),
            lambda: measure(label, agent, scenario=scenario))
        ratios.append(rate / reference)
        rates.append(rate)
    ratio = statistics.median(ratios)
    print(f"{label}: {ratio:.2f}x the reference agent's rate (median of {ROUNDS} paired "
          f"round(s): {', '.join(f'{r:.2f}' for r in ratios)})")
    return ratio, statistics.median(rates)


def main() -> None:
    if "--worker" in sys.argv:
        _worker(sys.argv[sys.argv.index("--worker") + 1])
        return
    if option("--against") is not None:
        _side_by_side(str(option("--against")), given_rounds(ROUNDS))
        return
    agent = loaded("examples.openai_careful.agent:main")
    ratio, unchanged = paired("unchanged agent (openai SDK, intercepted)", agent)
    replayed = measure("the same, every case replayed from its start", agent, replay=True)
    print(f"the unchanged agent runs at {ratio:.2f}x the reference agent's rate "
          f"({1 / ratio:.1f}x slower per crash run); exploring it is "
          f"{unchanged / replayed:.1f}x faster than replaying it")
    for module, (package, dialect) in FRAMEWORKS.items():
        if importlib.util.find_spec(package) is None:
            print(f"{module}: not measured, {package!r} is not installed "
                  "(pip install -e '.[frameworks]')")
            continue
        scenario = framework_scenario(dialect)
        entry = loaded(f"examples.frameworks.{module}:main")
        paired(f"{module} (unchanged, intercepted)", entry, scenario,
               f"reference agent, {dialect}")


# The agents measured side by side: the entry, the scenario's dialect (None: SCENARIO).
AGENTS: dict[str, tuple[str, str | None]] = {
    "unchanged agent (openai SDK)": ("examples.openai_careful.agent:main", None),
    **{module: (f"examples.frameworks.{module}:main", dialect)
       for module, (_, dialect) in FRAMEWORKS.items()},
}


def _worker(name: str) -> None:
    """Measure the reference agent and then ``name`` once per line read; answer with both
    rates as JSON. The agent is loaded, and every case run once, before the first line."""
    spec, dialect = AGENTS[name]
    scenario = SCENARIO if dialect is None else framework_scenario(dialect)
    # What the agents print (an SDK's warnings) is kept away from the answers.
    with open(os.devnull, "w") as quiet, redirect_stdout(quiet):
        entry = loaded(spec)
        measure("warm-up", None, scenario=scenario, quiet=True)
        measure("warm-up", entry, scenario=scenario, quiet=True)
    for _ in sys.stdin:
        with open(os.devnull, "w") as quiet, redirect_stdout(quiet):
            reference, rate = sandwiched(
                lambda: measure("reference", None, scenario=scenario, quiet=True),
                lambda: measure(name, entry, scenario=scenario, quiet=True))
        print(json.dumps({"reference": reference, "agent": rate}), flush=True)


def _side_by_side(revision: str, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as base, \
             side_by_side(Path(base), revision) as trees:
        for name in AGENTS:
            if name in FRAMEWORKS and importlib.util.find_spec(FRAMEWORKS[name][0]) is None:
                print(f"{name}: not measured, {FRAMEWORKS[name][0]!r} is not installed")
                continue
            print(f"{name}: machine load before, {_load()}")
            workers = {tree: _start_worker(path, name) for tree, path in trees.items()}
            ratios: dict[str, list[float]] = {tree: [] for tree in trees}
            rates: dict[str, list[float]] = {tree: [] for tree in trees}
            references: dict[str, list[float]] = {tree: [] for tree in trees}
            for _ in range(rounds):
                for tree, worker in workers.items():
                    assert worker.stdin is not None
                    assert worker.stdout is not None
                    worker.stdin.write("go\n")
                    worker.stdin.flush()
                    answer = json.loads(worker.stdout.readline())
                    ratios[tree].append(answer["agent"] / answer["reference"])
                    rates[tree].append(answer["agent"])
                    references[tree].append(answer["reference"])
            for worker in workers.values():
                assert worker.stdin is not None
                worker.stdin.close()
                worker.wait()
            for tree in trees:
                print(f"{name}, {tree:>9}: {max(rates[tree]) / max(references[tree]):.2f}x the "
                      f"reference agent's rate, best rounds ({max(rates[tree]):.1f} against "
                      f"{max(references[tree]):.1f} runs/CPU-s); "
                      f"{statistics.median(ratios[tree]):.2f}x, median of {rounds} round(s): "
                      f"{', '.join(f'{r:.2f}' for r in ratios[tree])}")
            print(f"{name}: machine load after, {_load()}")
            old, new = max(rates[revision]), max(rates["this tree"])
            print(f"{name}: this tree / {revision}: {new / old:.2f}x its crash runs per "
                  "CPU-second (best rounds)")


def _load() -> str:
    """The machine's load averages (1, 5, 15 minutes) and its CPUs: what else ran meanwhile."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} CPUs"


def _start_worker(tree: Path, name: str) -> subprocess.Popen[str]:
    """This script's worker for agent ``name`` over the harness of ``tree`` (first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.Popen([sys.executable, __file__, "--worker", name], cwd=tree, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


if __name__ == "__main__":
    main()
