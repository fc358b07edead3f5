"""The search: Hypothesis draws schedules, the runner runs them, the first violation is shrunk.

Hypothesis is the engine (generation, shrinking, its example database); this module
hands it one property, "this schedule violates nothing", over the schedules of
:mod:`harness.fuzz._space`, and reads the minimal counterexample back from the
exception of the final replay. The search is deterministic for a seed: Hypothesis
draws from that seed, no check has a wall-clock deadline, and every run is on the
virtual clock. The example database lives under the output folder, keyed by the
scenario, the agent and the bounds, so a failure found once is tried first next time.

    >>> from harness.scenario import Scenario
    >>> s = Scenario(name="hi", dialect="openai", model=[{"turn": 1, "text": "Hi."}],
    ...              expect={"stop_state": "complete"})
    >>> fuzz_scenario(s, "hi.yaml", budget=5, seed=0, out=None).found is None
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.strategies import SearchStrategy
from pydantic import ValidationError

from harness._errors import AgentEntryError, ConfigError, HarnessError, ScenarioError
from harness.fuzz._bounds import FuzzBounds
from harness.fuzz._judge import scheduled_scenario, violations
from harness.fuzz._space import Schedule, crash_candidates, schedule_strategy, varied
from harness.runner import (
    AgentUnderTest,
    Case,
    CaseResult,
    CrashSpec,
    Verdict,
    blocking_tools,
    record_run,
    run_case,
)
from harness.scenario import Scenario

DATABASE_DIR = ".hypothesis"
"""The example database's folder under the output folder."""


@dataclass(frozen=True)
class Finding:
    """A schedule that violates an invariant, the scenario it made and its judged run."""

    schedule: Schedule
    scenario: Scenario
    result: CaseResult

    @property
    def violated(self) -> tuple[Verdict, ...]:
        return violations(self.result)


@dataclass(frozen=True)
class FuzzOutcome:
    """What a search did: the schedules it ran and the minimal finding, if any."""

    runs: int
    """Schedules run, shrinking included (rejected ones not counted)."""
    found: Finding | None
    runs_to_find: int | None = None
    """Schedules run when the first violation appeared."""


class _Violation(Exception):
    """Raised inside the property so Hypothesis shrinks; carries what the run showed."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(", ".join(v.invariant for v in finding.violated))
        self.finding = finding


@dataclass
class _Search:
    base: Scenario
    source: Path
    agent: AgentUnderTest | None
    case: Case
    runs: int = 0
    first_found_at: int | None = None
    tick: Callable[[], object] = lambda: None
    """Called before each run: a contained search restarts its clock."""

    def check(self, schedule: Schedule) -> None:
        candidate = scheduled_scenario(self.base, schedule)
        if candidate is None:
            reject()  # faults that cannot go together: not a schedule at all
        self.runs += 1
        self.tick()
        try:
            result = run_case(replace(self.case, crash=schedule.crash), candidate, self.agent)
        except ScenarioError:
            self.runs -= 1
            reject()  # a fault that does not fit the stream it meets (a split past its end)
        finding = Finding(schedule, candidate, result)
        if finding.violated:
            self.first_found_at = self.first_found_at or self.runs
            raise _Violation(finding)

    def trimmed(self, finding: Finding) -> Finding:
        """``finding`` with every model line dropped that the violation does not need.

        Hypothesis shrinks the schedule; the script is the base scenario's, whose
        branches for other outcomes a repro does not need. Each line is dropped in
        turn, last first, and stays dropped when the same invariant is still violated
        (a request no line answers gets the fake model's unscripted reply) and the
        reference agent fares no worse on it: a repro must stay a scenario a careful
        agent passes, or it proves nothing about the agent under test.
        """
        first = finding.violated[0].invariant
        careful = self._reference_violations(finding.scenario, finding.schedule)
        for index in reversed(range(len(finding.scenario.model))):
            candidate = _without_model_line(finding.scenario, index)
            if candidate is None:
                continue
            result = self._run(candidate, finding.schedule, self.agent)
            if result is None or first not in {v.invariant for v in violations(result)}:
                continue
            if self._reference_violations(candidate, finding.schedule) <= careful:
                finding = Finding(finding.schedule, candidate, result)
        return finding

    def _run(self, scenario: Scenario, schedule: Schedule,
             agent: AgentUnderTest | None) -> CaseResult | None:
        self.runs += 1
        self.tick()
        try:
            return run_case(replace(self.case, crash=schedule.crash), scenario, agent)
        except ScenarioError:
            return None

    def _reference_violations(self, scenario: Scenario, schedule: Schedule) -> set[str]:
        result = self._run(scenario, schedule, None)
        return {"harness"} if result is None else {v.invariant for v in violations(result)}


def _without_model_line(scenario: Scenario, index: int) -> Scenario | None:
    """``scenario`` without its ``index``-th model line; None when that would not validate."""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    data["model"] = [line for i, line in enumerate(data["model"]) if i != index]
    if not data["model"]:
        return None
    try:
        return Scenario.model_validate(data)
    except (ValidationError, HarnessError):
        return None


def fuzz_scenario(base: Scenario, source: Path | str, *, budget: int, seed: int,
                  out: Path | None, agent: AgentUnderTest | None = None,
                  agent_spec: str | None = None, targets: tuple[tuple[str, str], ...] = (),
                  bounds: FuzzBounds | None = None,
                  tick: Callable[[], object] = lambda: None,
                  database_at: Callable[[Path], ExampleDatabase] = DirectoryBasedExampleDatabase,
                  ) -> FuzzOutcome:
    """Search ``budget`` schedules over ``base`` for an invariant violation; shrink the first.

    ``out`` holds Hypothesis's example database (``None``: no database). ``agent`` is the
    agent under test (``None``: the reference agent); ``agent_spec`` and ``targets`` only
    go into the cases' replay commands. ``tick`` is called before each run of the agent.
    ``database_at`` opens the database's folder (a sealed search's keeps its changes in
    memory: :mod:`harness.fuzz._handback`).
    """
    bounds = bounds or FuzzBounds()
    search = _Search(base, Path(source), agent, Case(base.name, Path(source), base.seed,
                                                     agent=agent_spec, targets=targets),
                     tick=tick)
    tick()  # the recorded run that finds the crashes
    strategy = schedule_space(base, agent, bounds)
    database = None if out is None else database_at(
        out / DATABASE_DIR / _database_key(base, agent_spec, targets, bounds))
    # The seed is applied first, the settings around it: ``seed`` alone would switch the
    # database off, and the database is what makes a found failure come first next time.
    prop = settings(
        database=database, max_examples=budget, deadline=None, derandomize=False,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
        verbosity=Verbosity.quiet, print_blob=False,
    )(hypothesis_seed(seed)(given(strategy)(_property(search))))
    try:
        prop()
    except _Violation as violation:
        found_at = search.first_found_at
        return FuzzOutcome(search.runs, search.trimmed(violation.finding), found_at)
    return FuzzOutcome(search.runs, None)


def schedule_space(base: Scenario, agent: AgentUnderTest | None = None,
                   bounds: FuzzBounds | None = None) -> SearchStrategy[Schedule]:
    """The schedules over ``base`` for ``agent``: its turns, its plain tools, its crashes.

    A space of one schedule, the scenario as written, is a :class:`ConfigError`: a search
    over it would report "no invariant violated" as if it had tried something.
    """
    bounds = bounds or FuzzBounds()
    tools, crashes, blocking = plain_tools(base), _crashes(base, agent), blocking_tools(base,
                                                                                        agent)
    if not varied(tools=tools, crashes=crashes, bounds=bounds, blocking=blocking):
        raise ConfigError(
            "--max-faults", bounds.max_faults, "at least 1 for this scenario",
            "With no fault allowed there is nothing to vary: the scenario crashes nowhere "
            "and has no tool whose behaviour a schedule may set, so every schedule would be "
            "the scenario as written; run it once with 'harness run' instead")
    return schedule_strategy(last_turn=base.last_turn, tools=tools, crashes=crashes,
                             bounds=bounds, blocking=blocking)


def plain_tools(base: Scenario) -> list[str]:
    """The tools whose behaviour a schedule may set: those that declare none.

    A declared behaviour is part of the scenario's world, and its script is written for
    it: a model that keeps calling a failing tool (to prove the loop stops it) would,
    with that tool made to succeed, send the same thing again and again by design.

    >>> from harness.scenario import Scenario
    >>> plain_tools(Scenario(name="t", dialect="openai", model=[{"turn": 1, "text": "Hi."}],
    ...     tools={"mail": {"kind": "send"}, "deploy": {"kind": "send",
    ...            "behaviour": {"kind": "failing"}}}, expect={"stop_state": "complete"}))
    ['mail']
    """
    return sorted(name for name, tool in base.tools.items() if tool.behaviour is None)


def _property(search: _Search) -> Callable[[Schedule], None]:
    # Hypothesis wants a plain function to wrap, not a bound method.
    def no_violation(schedule: Schedule) -> None:
        search.check(schedule)

    return no_violation


def _crashes(base: Scenario, agent: AgentUnderTest | None) -> list[CrashSpec]:
    """The crashes a crash-free, fault-free run of the agent allows, in the scenario's classes.

    A scenario that crashes nowhere (``crash.points: none``, the default) has a script
    written for a run that never restarts: a model that repeats a call whatever it is
    told would repeat one of unknown outcome too. Its schedules do not crash either.
    """
    quiet = base.model_copy(update={"faults": [], "crash": base.crash.model_copy(
        update={"points": "none"})})
    recorded = record_run(quiet, agent)
    if recorded.broke_off is not None:
        # Every schedule would end there too, and the checks a schedule keeps (all but
        # the stop state and the effect counts) would find nothing to judge: a search
        # that reported no violation would read as a clean bill of health.
        raise AgentEntryError(
            f"{recorded.broke_off} in its run without faults or crashes (the scenario "
            f"expects '{base.expect.stop_state}'), so no schedule could prove anything of "
            "it; see why with 'harness run' on the scenario")
    if base.crash.points == "none":
        return []
    return crash_candidates(base, recorded.points, recorded.events)


def _database_key(base: Scenario, agent_spec: str | None,
                  targets: tuple[tuple[str, str], ...], bounds: FuzzBounds) -> str:
    """One database per scenario, agent and bounds: a saved failure replays only where it
    means the same schedule."""
    text = repr((base.model_dump(mode="json"), agent_spec, targets, bounds))
    return f"{base.name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
