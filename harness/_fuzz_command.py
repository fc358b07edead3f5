"""``harness fuzz SCENARIO --agent SPEC --budget N --out DIR [--seed S]``: the command.

Exit 0 when no schedule within the budget violated an invariant, 1 with a repro
written to ``DIR``, 2 on bad input (one ``harness: error:`` line per problem, with
``file:line`` for a scenario's mistakes).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness._errors import ConfigError
from harness._fuzz_options import kind_problem
from harness.fuzz import FuzzBounds, FuzzOutcome, Repro, fuzz_scenario, made_repro, repro_command
from harness.runner import AgentUnderTest, Case, CrashSpec, run_case
from harness.scenario import load_scenario, parse_scenario

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from harness.runner import StepTo


def run_fuzz(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``harness fuzz``; bad input raises :class:`~harness.HarnessError` (exit 2)."""
    from harness._options import DEFAULT_CASE_MEMORY_MIB, DEFAULT_CASE_TIMEOUT
    from harness._output import check_writable_folder, removed_if_left_empty
    from harness.fuzz import write_handed_back
    from harness.runner import contained

    # The agent runs in a contained process, sealed as a case's worker is (the real disk
    # read-only), each of its runs within the case time limit: an agent that exits or
    # hangs is a one-line error, never the end or the hang of fuzz. What the search
    # writes (its example database, the repro) it hands back, and this process writes.
    with removed_if_left_empty(args.out):
        check_writable_folder(args.out, "--out")  # up front, here: the search cannot write
        found = contained(lambda step: _fuzzed(args, step), timeout=DEFAULT_CASE_TIMEOUT,
                          agent=args.agent, memory_mib=DEFAULT_CASE_MEMORY_MIB)
        write_handed_back(args.out, found)
    (out or sys.stdout).write(str(found["output"]))
    return int(found["code"])


def _fuzzed(args: argparse.Namespace, step: StepTo) -> dict[str, object]:
    """In the contained process: the search, its exit code, what it printed and what it
    would have written (the example database's changes, the repro)."""
    import io

    from harness.fuzz import HandedBackDatabase
    from harness.runner import FUZZING

    said, databases, repros = io.StringIO(), list[HandedBackDatabase](), list[Repro]()

    def database_at(path: Path) -> HandedBackDatabase:
        databases.append(HandedBackDatabase(path))
        return databases[-1]

    code = _fuzz(args, said, lambda: step(FUZZING), database_at, repros.append)
    return {"code": code, "output": said.getvalue(),
            "databases": [database.sendable() for database in databases],
            "repros": [{"name": repro.path.name, "text": repro.text} for repro in repros]}


def _fuzz(args: argparse.Namespace, out: TextIO, tick: Callable[[], object],
          database_at: Callable[[Path], ExampleDatabase], keep: Callable[[Repro], None]
          ) -> int:
    from harness.runner import dialect_skip

    scenario = load_scenario(args.scenario)
    agent = _agent(args.agent, tuple(args.target))
    skip = dialect_skip(scenario, agent)
    if skip is not None:
        raise ConfigError("SCENARIO", args.scenario, "a scenario in a dialect the agent speaks",
                          skip)
    for kind in args.kind or ():
        kind_problem(kind)
    bounds = FuzzBounds(max_faults=args.max_faults)
    if args.kind:
        bounds = replace(bounds, fault_kinds=tuple(args.kind))
    outcome = fuzz_scenario(scenario, args.scenario, budget=args.budget, seed=args.seed,
                            out=args.out, agent=agent, agent_spec=args.agent,
                            targets=tuple(args.target), bounds=bounds, tick=tick,
                            database_at=database_at)
    tick()  # the repro is run again
    return report(outcome, args, agent, out, keep)


def _agent(spec: str | None, targets: tuple[tuple[str, str], ...]) -> AgentUnderTest | None:
    from harness.intercept import PlainEntry
    from harness.runner import load_agent_factory

    agent = load_agent_factory(spec) if spec is not None else None
    return agent.with_tool_map(targets) if isinstance(agent, PlainEntry) else agent


def report(outcome: FuzzOutcome, args: argparse.Namespace, agent: AgentUnderTest | None,
           out: TextIO, keep: Callable[[Repro], None]) -> int:
    """Print what the search found; ``keep`` the repro when it found something."""
    finding = outcome.found
    if finding is None:
        print(f"harness fuzz: {outcome.runs} schedules, no invariant violated "
              f"(seed {args.seed})", file=out)
        return 0
    command = repro_command(args.scenario, agent_spec=args.agent, budget=args.budget,
                            seed=args.seed, out=args.out)
    found_by = f"{command}  (schedule {outcome.runs_to_find}, shrunk over {outcome.runs} runs)"
    repro = made_repro(finding, args.out, found_by=found_by, agent_spec=args.agent,
                       targets=args.target)
    keep(repro)
    path, replay, lines = repro.path, repro.replay, len(repro.text.splitlines())
    reproduced = _reproduces(repro, finding.schedule.crash, agent)
    print(f"harness fuzz: schedule {outcome.runs_to_find} violated "
          f"{', '.join(v.invariant for v in finding.violated)}; shrunk to "
          f"{finding.schedule.size} change(s) over {outcome.runs} runs", file=out)
    for verdict in finding.violated:
        print(f"  {verdict.invariant}: {verdict.message}", file=out)
    if finding.schedule.size == 0:
        print("the scenario fails as it is, without a fault or a crash: "
              f"see 'harness run {args.scenario}' first", file=out)
    print(f"repro: {path} ({lines} lines)" + ("" if reproduced else
          "; it did NOT fail when run again: the agent is not deterministic"), file=out)
    print(f"replay: {replay}", file=out)
    return 1


def _reproduces(repro: Repro, crash: CrashSpec | None, agent: AgentUnderTest | None) -> bool:
    """Whether the file's text, loaded back and run, fails as ``harness run`` would."""
    scenario = parse_scenario(repro.text.encode("utf-8"), str(repro.path))
    case = Case(scenario.name, repro.path, scenario.seed, crash)
    return run_case(case, scenario, agent).status == "fail"
