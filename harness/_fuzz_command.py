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
from harness.fuzz import FuzzBounds, FuzzOutcome, fuzz_scenario, repro_command, write_repro
from harness.runner import AgentUnderTest, Case, CrashSpec, run_case
from harness.scenario import load_scenario

if TYPE_CHECKING:
    from harness.runner import StepTo


def run_fuzz(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``harness fuzz``; bad input raises :class:`~harness.HarnessError` (exit 2)."""
    from harness._options import DEFAULT_CASE_MEMORY_MIB, DEFAULT_CASE_TIMEOUT
    from harness._output import removed_if_left_empty
    from harness.runner import contained

    # The agent runs in a contained process, each of its runs within the case time limit:
    # an agent that exits or hangs is a one-line error, never the end or the hang of fuzz.
    with removed_if_left_empty(args.out):
        found = contained(lambda step: _fuzzed(args, step), timeout=DEFAULT_CASE_TIMEOUT,
                          agent=args.agent, memory_mib=DEFAULT_CASE_MEMORY_MIB, writes=True)
    (out or sys.stdout).write(str(found["output"]))
    return int(found["code"])


def _fuzzed(args: argparse.Namespace, step: StepTo) -> dict[str, object]:
    """In the contained process: the search, its exit code and what it printed."""
    import io

    from harness.runner import FUZZING

    said = io.StringIO()
    code = _fuzz(args, said, lambda: step(FUZZING))
    return {"code": code, "output": said.getvalue()}


def _fuzz(args: argparse.Namespace, out: TextIO, tick: Callable[[], object]) -> int:
    from harness._output import check_writable_folder
    from harness.runner import dialect_skip

    scenario = load_scenario(args.scenario)
    agent = _agent(args.agent, tuple(args.target))
    skip = dialect_skip(scenario, agent)
    if skip is not None:
        raise ConfigError("SCENARIO", args.scenario, "a scenario in a dialect the agent speaks",
                          skip)
    check_writable_folder(args.out, "--out")
    for kind in args.kind or ():
        kind_problem(kind)
    bounds = FuzzBounds(max_faults=args.max_faults)
    if args.kind:
        bounds = replace(bounds, fault_kinds=tuple(args.kind))
    outcome = fuzz_scenario(scenario, args.scenario, budget=args.budget, seed=args.seed,
                            out=args.out, agent=agent, agent_spec=args.agent,
                            targets=tuple(args.target), bounds=bounds, tick=tick)
    tick()  # the repro is run again
    return report(outcome, args, agent, out)


def _agent(spec: str | None, targets: tuple[tuple[str, str], ...]) -> AgentUnderTest | None:
    from harness.intercept import PlainEntry
    from harness.runner import load_agent_factory

    agent = load_agent_factory(spec) if spec is not None else None
    return agent.with_tool_map(targets) if isinstance(agent, PlainEntry) else agent


def report(outcome: FuzzOutcome, args: argparse.Namespace, agent: AgentUnderTest | None,
           out: TextIO) -> int:
    """Print what the search found; write the repro when it found something."""
    finding = outcome.found
    if finding is None:
        print(f"harness fuzz: {outcome.runs} schedules, no invariant violated "
              f"(seed {args.seed})", file=out)
        return 0
    command = repro_command(args.scenario, agent_spec=args.agent, budget=args.budget,
                            seed=args.seed, out=args.out)
    found_by = f"{command}  (schedule {outcome.runs_to_find}, shrunk over {outcome.runs} runs)"
    path, replay = write_repro(finding, args.out, found_by=found_by, agent_spec=args.agent,
                              targets=args.target)
    lines = len(path.read_text(encoding="utf-8").splitlines())
    reproduced = _reproduces(path, finding.schedule.crash, agent)
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


def _reproduces(path: Path, crash: CrashSpec | None, agent: AgentUnderTest | None) -> bool:
    """Whether the written file, loaded back and run, fails as ``harness run`` would."""
    scenario = load_scenario(path)
    case = Case(scenario.name, path, scenario.seed, crash)
    return run_case(case, scenario, agent).status == "fail"
