"""Run mutants against cases, and the kill matrix of the whole catalogue."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, cast

from harness.mutants._catalogue import Kill, Mutant
from harness.ports import AgentFactory
from harness.runner import Case, CaseResult, CrashSpec, plan_cases, run_case, run_case_twice
from harness.scenario import Scenario, ScenarioError, load_scenario


def crash_spec(label: str) -> CrashSpec:
    """The crash of a case label such as ``journal:fsync#2:after:unsynced_lost[:again]``.

    >>> crash_spec("journal:fsync#2:after:unsynced_lost").point_id
    'journal:fsync#2'
    """
    parts = label.split(":")
    again = parts[-1] == "again"
    if again:
        parts = parts[:-1]
    point, when, crash_class = ":".join(parts[:-2]), parts[-2], parts[-1]
    return CrashSpec(point, cast(Literal["before", "after"], when), crash_class, again)


def run_kill(kill: Kill, factory: AgentFactory, root: Path = Path(".")) -> CaseResult:
    """Run the case ``kill`` names with the agent ``factory`` builds."""
    source = root / kill.scenario
    scenario = load_scenario(source)
    crash = None if kill.crash is None else crash_spec(kill.crash)
    run = run_case_twice if kill.check == "determinism" else run_case
    return run(Case(scenario.name, source, scenario.seed, crash), scenario, factory)


def killed_by(result: CaseResult, check: str) -> bool:
    """Whether ``check`` failed in ``result`` (or warned: a warning catches the bug too)."""
    return any(v.invariant == check and v.status in ("fail", "warn") for v in result.verdicts)


def matrix(mutants: Sequence[Mutant], scenarios: Iterable[tuple[Scenario, Path]], *,
           crashes: bool, twice: bool = False,
           first: bool = False) -> dict[str, dict[str, list[str]]]:
    """For each mutant, each scenario that kills it and the checks that failed there.

    A case kills a mutant when it does not pass; the checks listed are those that
    failed (``error`` for a harness error, ``unreached`` for a crash or fault the
    mutant never reached). ``first`` stops at a mutant's first killing case,
    trying the scenarios its catalogue row names first: a quick survivor check.
    """
    loaded = list(scenarios)
    found: dict[str, dict[str, list[str]]] = {}
    for mutant in mutants:
        kills: dict[str, list[str]] = {}
        for scenario, source in _named_first(mutant, loaded) if first else loaded:
            checks = _scenario_kills(mutant.factory, scenario, source, crashes=crashes,
                                     twice=twice, first=first)
            if checks:
                kills[str(source)] = checks
                if first:
                    break
        found[mutant.name] = kills
    return found


def out_of_reach(mutant: Mutant, *, crashes: bool, twice: bool) -> str | None:
    """Why the options keep every case its catalogue row names from killing ``mutant``, or None.

    Under ``--no-crash`` a mutant killed only by crash cases cannot be killed, and
    without ``--check-determinism`` neither can one only the determinism check catches:
    such a mutant is out of reach, not a survivor.
    """
    needs = []
    if not crashes and all(kill.crash is not None for kill in mutant.kills):
        needs.append("crash cases (run without --no-crash)")
    if not twice and all(kill.check == "determinism" for kill in mutant.kills):
        needs.append("--check-determinism")
    return " and ".join(needs) or None


def _named_first(mutant: Mutant, loaded: list[tuple[Scenario, Path]]
                 ) -> list[tuple[Scenario, Path]]:
    named = {Path(k.scenario).resolve() for k in mutant.kills}
    return sorted(loaded, key=lambda pair: Path(pair[1]).resolve() not in named)


def _scenario_kills(factory: AgentFactory, scenario: Scenario, source: Path, *,
                    crashes: bool, twice: bool, first: bool) -> list[str]:
    try:
        cases = plan_cases(scenario, source, factory) if crashes \
            else [Case(scenario.name, source, scenario.seed)]
    except ScenarioError:
        return ["unreached"]  # the mutant never reaches a crash point the scenario lists
    checks: set[str] = set()
    run = run_case_twice if twice else run_case
    for case in cases:
        result = run(case, scenario, factory)
        if result.passed and not result.warnings:
            continue
        checks |= {v.invariant for v in result.failed_verdicts}
        checks |= {f"{v.invariant} (warn)" for v in result.warnings}
        if result.error is not None:
            checks.add("error")
        if not result.passed and not result.failed_verdicts and result.error is None:
            checks.add("unreached")
        if first:
            break
    return sorted(checks)


def markdown_table(mutants: Sequence[Mutant]) -> str:
    """The catalogue as a Markdown table: mutant, seed section, bug, the cases that kill it."""
    rows = ["| mutant | seed | bug | killed by (scenario [crash case]: check) |",
            "|---|---|---|---|"]
    for m in mutants:
        kills = "<br>".join(f"`{Path(k.scenario).stem}`{f' [{k.crash}]' if k.crash else ''}: "
                            f"{k.check}" for k in m.kills)
        rows.append(f"| `{m.name}` | {m.seed} | {m.bug} | {kills} |")
    return "\n".join(rows)
