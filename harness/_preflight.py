"""The checks made before the first case: one function for ``harness run`` and ``validate``.

``validate`` makes every check ``run`` makes before a case runs, by calling the same
:func:`preflight`, so a file ``validate`` passes is a file ``run`` starts: the files
load, ``--agent`` imports, ``--target`` names a declared tool and a function, every
``target`` imports, each scripted call's arguments bind to its target's signature,
and the crash plan is made. Every error of every file is collected; one file's
mistake never hides the next one. ``thorough`` (``validate``) adds what ``run`` only
meets mid-run or reports as ``unknown``: a fault that does not fit the stream it
meets, and, with ``--agent``, a listed point of the agent's own files that its
recorded run never reaches and every reason the agent's crash-free case is ``unknown``
for the scenario as written (a stall ``after_events: 3`` the whole answers it asks for
cannot take, a tool it never offers; :func:`harness.runner.check_played`)::

    checked = preflight(Request(["scenarios/"], agent="myagent:main"), thorough=True)
    for error in checked.errors:
        print(error.message)   # scenarios/book.yaml:12:14: crash.points[0]: …
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness._errors import ConfigError, ScenarioError
from harness._options import with_absorbed, with_overrides
from harness.scenario import did_you_mean

if TYPE_CHECKING:
    from harness.runner import AgentUnderTest, Case, CrashSpec, StepTo
    from harness.scenario import Scenario

# A long point list drowns the message; `harness points` shows them all.
_SHOWN_POINTS = 10


@dataclass(frozen=True)
class Request:
    """What the command line asks to run (or check): the files and the agent with its options."""

    paths: Sequence[str]
    agent: str | None = None
    targets: tuple[tuple[str, str], ...] = ()
    absorb: tuple[str, ...] = ()
    dialects: tuple[str, ...] = ()
    crash: str | None = None
    """A name of :data:`harness._options.CRASH_SETTINGS` (``--crash``); None: as-written."""
    seed: int | None = None
    crash_at: CrashSpec | None = None


@dataclass(frozen=True)
class Preflight:
    """The checked run: the scenarios, the agent, the planned cases, and every error found."""

    files: int
    loaded: list[tuple[Scenario, Path]]
    """Every scenario that loaded, in file order."""
    spoken: list[tuple[Scenario, Path]]
    """Those in a dialect the agent speaks (the others were skipped, a line each)."""
    agent: AgentUnderTest | None
    planned: list[tuple[Case, Scenario]] = field(default_factory=list)
    errors: list[ScenarioError] = field(default_factory=list)

    def raise_errors(self) -> None:
        """Raise one :class:`ScenarioError` listing every error, if any was found."""
        if self.errors:
            raise ScenarioError.combine(self.errors)


def preflight(request: Request, *, thorough: bool = False,
              timeout: float | None = None, longer: str = "",
              memory_mib: int | None = None) -> Preflight:
    """Check and plan ``request`` before any case runs; see the module docstring.

    A mistake in the command line itself (``--agent``, ``--target``, ``--crash-at``)
    raises :class:`~harness.ConfigError`; mistakes in files are collected. With a
    ``timeout`` (the command line's), every step that runs agent code (its import, its
    targets', its planning run) runs contained (:mod:`harness.runner._guest`), each
    step within ``timeout`` real seconds (``longer`` says how to give more) and ``memory_mib``
    MiB (default: a case's); the returned ``agent`` is then ``None``.
    """
    files, loaded, errors = load_each(request.paths, crash=request.crash, seed=request.seed)
    loaded = [(with_absorbed(scenario, request.absorb), source) for scenario, source in loaded]
    if timeout is not None:
        return _contained_preflight(request, files, loaded, errors, thorough=thorough,
                                    timeout=timeout, longer=longer, memory_mib=memory_mib)
    agent = load_agent(request.agent, request.targets)
    spoken, planned, found = _agent_checks(request, loaded, agent, thorough)
    return Preflight(files, loaded, spoken, agent, planned, errors + found)


def _agent_checks(request: Request, loaded: list[tuple[Scenario, Path]],
                  agent: AgentUnderTest | None, thorough: bool
                  ) -> tuple[list[tuple[Scenario, Path]], list[tuple[Case, Scenario]],
                             list[ScenarioError]]:
    """The checks that need the agent: the scenarios it speaks, their cases, their errors."""
    # A target is checked against every scenario named, spoken or not: skipping one for
    # its dialect does not make its tools' names wrong.
    check_target_names(request.targets, [scenario for scenario, _ in loaded])
    spoken = speaking(loaded, agent, request.dialects)
    planned: list[tuple[Case, Scenario]] = []
    errors: list[ScenarioError] = []
    for scenario, source in spoken:
        cases, found = _check_file(scenario, source, request, agent, thorough)
        planned += [(case, scenario) for case in cases]
        errors += found
    return spoken, planned, errors


def _contained_preflight(request: Request, files: int, loaded: list[tuple[Scenario, Path]],
                         errors: list[ScenarioError], *, thorough: bool, timeout: float,
                         longer: str, memory_mib: int | None) -> Preflight:
    """:func:`preflight`'s agent checks in a contained process; what they found as data."""
    from harness._options import DEFAULT_CASE_MEMORY_MIB
    from harness.runner import Case, CrashSpec, contained, tool_env_names

    found = contained(lambda step: _checks_as_data(request, loaded, thorough, step),
                      timeout=timeout, longer=longer,
                      tool_names=tool_env_names(scenario for scenario, _ in loaded),
                      agent=request.agent, memory_mib=memory_mib or DEFAULT_CASE_MEMORY_MIB)
    sys.stderr.write(found["said"])  # the skipped scenarios' lines
    spoken = [loaded[index] for index in found["spoken"]]
    planned = []
    for index, crash in found["planned"]:
        scenario, source = loaded[index]
        spec = None if crash is None else CrashSpec(crash[0], crash[1], crash[2], crash[3])
        planned.append((Case(scenario.name, source, scenario.seed, spec), scenario))
    errors = errors + [ScenarioError(e["path"], e["line"], e["column"], e["problem"],
                                     got=e["got"], expected=e["expected"], hint=e["hint"])
                       for e in found["errors"]]
    return Preflight(files, loaded, spoken, None, planned, errors)


def _checks_as_data(request: Request, loaded: list[tuple[Scenario, Path]], thorough: bool,
                    step: StepTo) -> dict[str, object]:
    """Run in the contained process: import the agent, plan; the outcome as JSON data."""
    import contextlib
    import io

    from harness.runner import PLANNING

    agent = load_agent(request.agent, request.targets)
    step(PLANNING)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        spoken, planned, errors = _agent_checks(request, loaded, agent, thorough)
    index = {id(scenario): i for i, (scenario, _) in enumerate(loaded)}
    return {
        "said": said.getvalue(),
        "spoken": [index[id(scenario)] for scenario, _ in spoken],
        "planned": [[index[id(scenario)], None if case.crash is None else [
            case.crash.point_id, case.crash.when, case.crash.crash_class,
            case.crash.during_recovery]] for case, scenario in planned],
        "errors": [{"path": e.path, "line": e.line, "column": e.column, "problem": e.problem,
                    "got": e.got, "expected": e.expected, "hint": e.hint} for e in errors],
    }


def load_each(paths: Sequence[str], *, crash: str | None, seed: int | None
              ) -> tuple[int, list[tuple[Scenario, Path]], list[ScenarioError]]:
    """The number of files, the scenarios that load (with the overrides) and every error."""
    from harness.scenario import load_each as load_files

    files, loaded, errors = load_files(paths)
    return len(files), [(with_overrides(scenario, crash=crash, seed=seed), file)
                        for scenario, file in loaded], errors


def load_agent(spec: str | None, targets: Sequence[tuple[str, str]] = ()
               ) -> AgentUnderTest | None:
    """The ``--agent`` agent (with the ``--target`` tool functions), or ``None``: the reference."""
    from harness.intercept import PlainEntry
    from harness.runner import load_agent_factory

    agent = load_agent_factory(spec) if spec is not None else None
    if isinstance(agent, PlainEntry):
        return agent.with_tool_map(tuple(targets))
    return agent


def check_target_names(targets: Sequence[tuple[str, str]], scenarios: Sequence[Scenario]
                       ) -> None:
    """Refuse a ``--target`` for a tool that no scenario of the run declares."""
    declared = sorted({name for scenario in scenarios for name in scenario.tools})
    for tool, spec in targets:
        if tool not in declared:
            raise ConfigError("--target", f"{tool}={spec}",
                              "the name of a tool the scenarios declare: "
                              + (", ".join(declared) or "(they declare none)"),
                              did_you_mean(tool, declared))


def speaking(loaded: list[tuple[Scenario, Path]], agent: AgentUnderTest | None,
             dialects: Sequence[str]) -> list[tuple[Scenario, Path]]:
    """The scenarios the agent speaks the dialect of; a line on stderr for each one skipped."""
    from harness.runner import dialect_skip

    kept = []
    for scenario, source in loaded:
        reason = dialect_skip(scenario, agent, dialects)
        if reason is None:
            kept.append((scenario, source))
        else:
            print(f"SKIPPED {source}: {reason}", file=sys.stderr)
    return kept


def plan(scenario: Scenario, source: Path, crash_at: CrashSpec | None,
         agent: AgentUnderTest | None = None, crash: str | None = None) -> list[Case]:
    """The cases of one scenario: as it says (thinned by the crash setting ``crash``), or
    only ``--crash-at`` (which must be reached)."""
    from harness import runner
    from harness._options import chosen_cases
    from harness.runner import Case

    if crash_at is None:
        return chosen_cases(runner.plan_cases(scenario, source, agent), crash)
    from harness.runner import is_world_point

    if is_world_point(crash_at.point_id):  # reached or not, the case says so itself
        return [Case(scenario.name, source, scenario.seed, crash_at)]
    known = list(runner.record_points(scenario, agent))
    if crash_at.point_id not in known:
        shown = ", ".join(repr(point) for point in known[:_SHOWN_POINTS]) or "none"
        if len(known) > _SHOWN_POINTS:
            shown += f" (and {len(known) - _SHOWN_POINTS} more)"
        raise ConfigError("--crash-at", crash_at.point_id,
                          f"a point the recorded run of {source} reaches: {shown}",
                          did_you_mean(crash_at.point_id, known))
    return [Case(scenario.name, source, scenario.seed, crash_at)]


def _check_file(scenario: Scenario, source: Path, request: Request,
                agent: AgentUnderTest | None, thorough: bool
                ) -> tuple[list[Case], list[ScenarioError]]:
    """The cases of one file and every error found in it; a check that needs what an
    earlier one refused (a run needs its targets) is left out rather than failing twice."""
    from harness import runner
    from harness.intercept import PlainEntry

    errors: list[ScenarioError] = []
    if thorough or isinstance(agent, PlainEntry):
        errors += _errors_of(lambda: runner.check_functions(scenario, agent))
    if thorough and not errors:  # a call a --target refuses: run's unknown, validate's error
        errors += _errors_of(lambda: runner.check_fit(scenario, agent))
    cases: list[Case] = []
    planning: list[ScenarioError] = []
    if not errors:
        planning = _errors_of(lambda: cases.extend(plan(scenario, source, request.crash_at,
                                                        agent, request.crash)))
    errors += planning
    if thorough and not planning:  # a plan that failed met the unfit fault already
        errors += _errors_of(lambda: _faults_fit(scenario, source))
    if thorough and request.agent is not None and not errors:
        errors += _errors_of(lambda: _own_points_reached(scenario, agent))
        errors += _errors_of(lambda: _played(scenario, source, agent))
    return cases, errors


def _errors_of(check: Callable[[], object]) -> list[ScenarioError]:
    try:
        check()
    except ScenarioError as error:
        return error.errors
    return []


def _faults_fit(scenario: Scenario, source: Path) -> None:
    """Run the scenario once, crash-free, with the reference agent: a fault that does not fit
    the stream the script renders (a split past its end) raises at its line, as in run."""
    from harness import runner

    if scenario.faults:
        runner.run_case(runner.Case(scenario.name, source, scenario.seed), scenario)


def _played(scenario: Scenario, source: Path, agent: AgentUnderTest | None) -> None:
    """Run the agent's crash-free case as ``run`` does: each reason it is ``unknown`` for
    the scenario as written (a fault its requests cannot take, a tool it never offers,
    ``points: all`` with no point of its own) raises at its line, in ``run``'s words."""
    from harness import runner

    case = runner.Case(scenario.name, source, scenario.seed)
    runner.check_played(scenario, runner.run_case(case, scenario, agent))


def _own_points_reached(scenario: Scenario, agent: AgentUnderTest | None) -> None:
    """Each listed point of the agent's own files its recorded run reaches, or an error on
    the point's line. Only with ``--agent``: a point belongs to one agent's file layout."""
    from harness import runner
    from harness.runner import is_world_point
    from harness.scenario import check_crash_points

    points = scenario.crash.points
    if isinstance(points, str):
        return
    own = [p for p in points if p != "all" and not is_world_point(p)]
    if own:
        recorded = runner.record_points(scenario, agent)
        # World events and 'all' are no file's points: count them reached.
        check_crash_points(scenario, [*recorded, *(p for p in points if p not in own)])


