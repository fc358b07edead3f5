"""Planning a scenario's cases: the crash-free recorded run, the crashes to try, a sample.

A scenario's cases are its uncrashed run and one case per crash point x when x
applicable crash class (DESIGN §3). The agent's own points come from a crash-free
run of it (:func:`record_run`); world events are named by the scenario. Running a
case is :mod:`harness.runner._run`'s, choosing how: :mod:`harness.runner._case`.

Example::

    cases = plan_cases(scenario, Path("scenarios/mail.yaml"))
    quick = sample_cases(cases)   # the uncrashed cases and one case per kind of crash
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fakes import crash_class_applies
from harness.intercept import PlainEntry, provider_environment, schemas_derived_once
from harness.ports import StopState
from harness.runner._points import is_world_point
from harness.runner._results import Case, CrashSpec
from harness.runner._run import (
    ERROR_CLASSES,
    AgentUnderTest,
    _CaseRun,
    _Incarnation,
    check_functions,
    default_agent_factory,
)
from harness.runner._unfit_calls import unfit_call
from harness.scenario import Scenario


def record_points(scenario: Scenario, agent_factory: AgentUnderTest | None = None,
                  seed: int | None = None) -> list[str]:
    """Every persistence point a crash-free run reaches, in order (no recovery checks)."""
    return record_run(scenario, agent_factory, seed).points


@dataclass(frozen=True)
class RecordedRun:
    """What a crash-free run of the agent reached, in order, and how it ended."""

    points: list[str]
    """The agent's own persistence points."""
    events: list[str]
    """The world events (``after_tool:mail#1``…), crash points of their own."""
    broke_off: str | None = None
    """Why the run ended early, when the agent raised and so stopped otherwise than the
    scenario expects: the points after that are missing, and a list or a search built
    on them would prove nothing of the rest."""


def record_run(scenario: Scenario, agent_factory: AgentUnderTest | None = None,
               seed: int | None = None) -> RecordedRun:
    """The agent's own persistence points and the world events of a crash-free run, in order."""
    case = Case(scenario.name, Path(f"<scenario {scenario.name}>"),
                scenario.seed if seed is None else seed)
    run = _CaseRun(case, scenario, agent_factory or default_agent_factory)
    final = run.run_to_stop()
    return RecordedRun([p.id for p in run.world.disk.points], list(run.world.events),
                       _broke_off(final, scenario.expect.stop_state))


def _broke_off(final: _Incarnation, expected: StopState) -> str | None:
    """The agent's exception that ended ``final`` otherwise than ``expected``, if one did.

    A plain agent that raises where the scenario expects it to (an authentication error
    the run stops ``blocked`` on) ended as it should: only an unexpected raise counts.
    """
    if final.error is not None:
        return f"the agent raised {final.error}"
    outcome = final.outcome
    if outcome is None or outcome.agent_traceback is None or outcome.stop_state == expected:
        return None
    return outcome.reason


def _is_fsync(point: str) -> bool:
    op = point.rpartition(":")[2].partition("#")[0]
    return op in ("fsync", "fsync_dir", "commit")


def crash_specs(scenario: Scenario, points: Sequence[str]) -> list[CrashSpec]:
    """The crashes to try at ``points``: fsync points first, ``after`` before ``before``.

    DESIGN §3: "crash after each fsync first: that is where real bugs live".
    A world event (``after_tool:mail#1``…) is crashed ``at``, in every class
    that kills the process; it is never crashed again during recovery.
    """
    world = [p for p in points if is_world_point(p)]
    disk = [p for p in points if not is_world_point(p)]
    ordered = [p for p in disk if _is_fsync(p)] + [p for p in disk if not _is_fsync(p)]
    specs: list[CrashSpec] = []
    for point in ordered:
        for when in ("after", "before") if _is_fsync(point) else ("before", "after"):
            specs += [CrashSpec(point, when, c) for c in scenario.crash.classes
                      if crash_class_applies(c, point)]
    if scenario.crash.during_recovery:
        specs += [replace(s, during_recovery=True) for s in list(specs)
                  if s.crash_class not in ERROR_CLASSES]
    specs += [CrashSpec(point, "at", c) for point in world for c in scenario.crash.classes
              if c not in ERROR_CLASSES]
    return specs


def crash_kind(spec: CrashSpec) -> tuple[str, str, str, bool]:
    """What a crash is, whichever occurrence of its point it strikes.

    The point without its ordinal (``journal:fsync#3`` is ``journal:fsync``), with
    when, class and whether it strikes again during recovery.

    >>> crash_kind(CrashSpec("journal:fsync#3", "after", "unsynced_lost"))
    ('journal:fsync', 'after', 'unsynced_lost', False)
    """
    return spec.point_id.partition("#")[0], spec.when, spec.crash_class, spec.during_recovery


def sample_cases(cases: Sequence[Case]) -> list[Case]:
    """The uncrashed cases and, of each kind of crash (:func:`crash_kind`), one case.

    The one is the kind's middle occurrence in the plan, where the run is under way
    rather than starting or ending. A quick pass over a suite whose every case a
    slower pass (``harness run``) covers: each kind of persistence point is crashed
    in each class, before and after, once. The plan's order is kept, and the choice
    is a pure function of the plan, so every pytest-xdist worker collects the same.
    """
    by_kind: dict[tuple[str, str, str, bool], list[int]] = {}
    for index, case in enumerate(cases):
        if case.crash is not None:
            by_kind.setdefault(crash_kind(case.crash), []).append(index)
    chosen = {indices[(len(indices) - 1) // 2] for indices in by_kind.values()}
    return [case for index, case in enumerate(cases)
            if case.crash is None or index in chosen]


def plan_cases(scenario: Scenario, source: Path | str,
               agent_factory: AgentUnderTest | None = None) -> list[Case]:
    """The no-crash case, then one case per selected point x when x applicable class.

    ``crash.points``: ``none`` (only the no-crash case), ``all`` (every point of
    the agent's own files that a recorded run reaches), or a list of ids: the
    agent's own points and world events (:mod:`harness.runner._points`), with
    ``all`` among them for every point of the agent's own files as well. A
    listed point the agent under test never reaches still gets its cases; they
    end ``unknown`` with the reason, so one agent's file layout never stops a run.
    """
    source = Path(source)
    base = Case(scenario.name, source, scenario.seed)
    if isinstance(agent_factory, PlainEntry):
        check_functions(scenario, agent_factory)
        with provider_environment(), schemas_derived_once():
            # Its libraries imported before any case: what a framework does once per
            # process at import (a price list fetched, telemetry) never lands in
            # whichever case happens to run first. The schemas its framework derives
            # from the tools at import are kept, as an incarnation's are: the first
            # incarnation, importing the agent afresh, finds them.
            agent_factory.load()
    selection = scenario.crash.points
    if selection == "none":
        return [base]
    listed = ["all"] if selection == "all" else list(dict.fromkeys(selection))
    # A script the agent's tools cannot take is not played, not even to list points.
    needs_record = any(not is_world_point(p) for p in listed) \
        and unfit_call(scenario, agent_factory) is None
    recorded = list(dict.fromkeys(record_points(scenario, agent_factory))) if needs_record else []
    wanted = [p for p in listed if p != "all"]
    reached = [p for p in recorded if "all" in listed or p in wanted]
    points = reached + [p for p in wanted if p not in reached]
    specs = crash_specs(scenario, points)
    if recorded:
        # After the last point the run is over and its state durable: a recovery
        # may have nothing to write, hence no point to crash at again.
        specs = [s for s in specs if not (s.during_recovery and s.when == "after"
                                          and s.point_id == recorded[-1])]
    return [base] + [replace(base, crash=spec) for spec in specs]
