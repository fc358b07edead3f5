"""Run one case: an agent over a scenario's world, crashed once (or twice), then judged.

Seed 002 §19.6: a fixed fake model, counting fake tools, and a crash before
and after every write to a durable record. :func:`run_case` plays one such run:

1. incarnation 1 runs ``agent.run(task)``; if the case's crash fires
   (:class:`fakes.SimulatedCrash`) the agent is discarded;
2. the disk restarts into the crash class's durable state and incarnation 2 is
   built from the same world (provider attempt counters, ledger and clock
   persist) and runs to a stop state; with ``during_recovery`` it is crashed
   again at the first persistence point it reaches and incarnation 3 finishes;
3. ``recover()`` is called twice more, on fresh incarnations over the same
   durable state, to compare what they report and write (I11);
4. the trace is judged by :func:`harness.checks.check_trace`.

Example::

    cases = plan_cases(scenario, Path("scenarios/mail.yaml"))
    results = [run_case(case, scenario, agent_factory=MyAgent) for case in cases]
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from fakes import CRASH_CLASSES, CrashPlan, SimulatedCrash, crash_class_applies
from harness._errors import FaultError, HarnessError
from harness.agent import (
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    RecoveryReport,
    TranscriptMessage,
)
from harness.checks import check_trace
from harness.runner._results import AttemptRow, Case, CaseResult, CrashSpec
from harness.runner._task import task_for
from harness.runner._world import PURE_KINDS, World
from harness.scenario import Scenario, check_crash_points, fault_error, load_scenario
from harness.trace import (
    CallRecord,
    CrashRecord,
    EffectRecord,
    ExpectationRecord,
    ExpectedEffects,
    IncarnationRecord,
    MessageRecord,
    OutcomeRecord,
    Purpose,
    RecoveryRecord,
    RequestRecord,
    SentUsage,
    ToolKindOf,
    Trace,
)

T = TypeVar("T")

# Classes that raise an OSError at the point instead of killing the process.
ERROR_CLASSES = frozenset({"eio_on_write", "eio_on_fsync", "enospc_on_write"})
# A run that outlives its own deadline by this much virtual time is stuck, not slow.
_GUARD_EXTRA_SECONDS = 3600.0


def default_agent_factory(ports: AgentPorts) -> Agent:
    """The reference agent (imported only when a run needs it)."""
    from harness.agent import ReferenceAgent

    agent: Agent = ReferenceAgent(ports)
    return agent


@dataclass
class _Incarnation:
    number: int
    purpose: Purpose
    crashed_at: str | None = None
    outcome: AgentOutcome | None = None
    error: str | None = None
    ended_at: float = 0.0


class _CaseRun:
    """The mutable state of one case while it runs."""

    def __init__(self, case: Case, scenario: Scenario, factory: AgentFactory,
                 second: CrashPlan | None = None) -> None:
        self.case = case
        self.scenario = scenario
        self.factory = factory
        self.task = task_for(scenario)
        self.world = World(scenario, seed=case.seed, plan=_first_plan(case.crash))
        self.second = second
        self.incarnations: list[_Incarnation] = []
        self.recoveries: list[RecoveryRecord] = []

    def run(self) -> Trace:
        final = self._run_to_stop()
        run_points = tuple(p.id for p in self.world.disk.points)
        self._check_recovery_twice()
        return self._trace(final, run_points)

    # -- the main runs ----------------------------------------------------------
    def _run_to_stop(self) -> _Incarnation:
        disk = self.world.disk
        current = self._run_once(1)
        while current.crashed_at is not None and current.number < 3:
            disk.restart()
            if current.number == 1 and self.second is not None:
                disk.plan = self.second
            current = self._run_once(current.number + 1)
        return current

    def _run_once(self, number: int) -> _Incarnation:
        record = _Incarnation(number, "run")
        self.incarnations.append(record)
        fired_before = self.world.disk.fired
        try:
            agent = self.factory(self.world.ports(number))
            record.outcome = self._drive(agent.run(self.task))
        except SimulatedCrash as crash:
            record.crashed_at = crash.point_id or _fired_id(self.world, fired_before)
        except FaultError as error:  # the scenario asks for what its stream cannot give
            raise fault_error(self.scenario, error) from error
        except Exception as error:  # the agent's own failure is evidence, not a harness bug
            record.error = f"{type(error).__name__}: {error}"
        record.ended_at = self.world.clock.now()
        return record

    def _drive(self, coro: Coroutine[Any, Any, T]) -> T:
        limit = self.task.deadline_seconds + _GUARD_EXTRA_SECONDS
        return self.world.clock.run(_guarded(coro, limit))

    # -- I11: recover twice -------------------------------------------------------
    def _check_recovery_twice(self) -> None:
        # Both recoveries share one event loop: a loop per incarnation costs more
        # than the recovery itself, and nothing of the first outlives it.
        self._drive(self._recover_twice())

    async def _recover_twice(self) -> None:
        for _ in range(2):
            number = self.world.disk.restart().generation
            self.recoveries.append(await self._recover_once(number))

    async def _recover_once(self, number: int) -> RecoveryRecord:
        world = self.world
        requests, effects = len(world.requests), len(world.ledger.effects)
        report, error = RecoveryReport(), None
        try:
            report = await self.factory(world.ports(number)).recover()
        except SimulatedCrash as crash:
            error = f"crashed during recover: {crash}"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        self.incarnations.append(_Incarnation(number, "recover-check", error=error,
                                              ended_at=world.clock.now()))
        return RecoveryRecord(number, tuple(report.not_started), tuple(report.unknown),
                              tuple(report.repaired_replies), world.files_digest(),
                              len(world.requests) - requests,
                              len(world.ledger.effects) - effects, error)

    # -- the trace ----------------------------------------------------------------
    def _trace(self, final: _Incarnation, points: tuple[str, ...]) -> Trace:
        world, crash = self.world, self.case.crash
        fired = [i.crashed_at for i in self.incarnations if i.crashed_at]
        error_fired = world.disk.fired.id if world.disk.fired and crash and \
            crash.crash_class in ERROR_CLASSES else None
        return Trace(
            case=self.case.case_id,
            scenario=self.scenario.name,
            dialect=self.scenario.dialect,
            seed=self.case.seed,
            crash=CrashRecord(
                planned=None if crash is None else crash.label,
                fired=(fired[0] if fired else error_fired),
                second=fired[1] if len(fired) > 1 else None,
                error_class=crash is not None and crash.crash_class in ERROR_CLASSES,
            ),
            points=points,
            incarnations=tuple(IncarnationRecord(
                i.number, i.purpose, i.crashed_at,
                i.outcome.stop_state if i.outcome else None, i.error, i.ended_at)
                for i in self.incarnations),
            requests=world.request_records(),
            invocations=tuple(sorted(world.invocations, key=lambda r: r.seq)),
            effects=tuple(EffectRecord(e.seq, e.tool, e.key, e.idempotent, e.incarnation, e.at)
                          for e in world.ledger.effects),
            outcome=None if final.outcome is None else outcome_record(final.outcome),
            recoveries=tuple(self.recoveries),
            expect=expectation(self.scenario),
            final_incarnation=final.number,
            error=final.error,
        )


async def _guarded(coro: Coroutine[Any, Any, T], limit: float) -> T:
    try:
        return await asyncio.wait_for(coro, timeout=limit)
    except TimeoutError as error:
        raise HarnessError(f"the agent was still running after {limit:g} virtual seconds") \
            from error


def _first_plan(crash: CrashSpec | None) -> CrashPlan | None:
    if crash is None:
        return None
    return CrashPlan(crash.point_id, crash.when, _crash_class(crash.crash_class))


def _crash_class(name: str) -> Any:
    if name not in CRASH_CLASSES:
        raise HarnessError(f"unknown crash class {name!r}; expected one of {CRASH_CLASSES}")
    return name


def _fired_id(world: World, before: object) -> str:
    fired = world.disk.fired
    return fired.id if fired is not None and fired is not before else "unknown"


def outcome_record(outcome: AgentOutcome) -> OutcomeRecord:
    """The agent's outcome as plain trace data."""
    usage = outcome.billed_usage
    billed = None if usage is None else SentUsage(
        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens or 0,
        usage.cache_write_tokens or 0)
    return OutcomeRecord(
        stop_state=outcome.stop_state, reason=outcome.reason,
        transcript=tuple(_message(m) for m in outcome.transcript),
        billed_usage=billed, context_tokens=outcome.context_tokens, turns=outcome.turns,
        infra_failure=outcome.infra_failure, attempt_ids=tuple(outcome.attempt_ids),
    )


def _message(m: TranscriptMessage) -> MessageRecord:
    calls = tuple(CallRecord(c.call_id, c.name, canonical(c.arguments)) for c in m.tool_calls)
    return MessageRecord(m.role, m.turn_id, m.text, calls, m.attempt_id, m.call_id, m.status,
                         m.synthetic)


def canonical(value: object) -> str:
    """Canonical JSON of a value (sorted keys, compact), to compare arguments.

    >>> canonical({"b": 1, "a": [2]})
    '{"a":[2],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def expectation(scenario: Scenario) -> ExpectationRecord:
    """What the scenario expects, copied into the trace."""
    tools, effects = scenario.tools, scenario.expect.side_effects
    return ExpectationRecord(
        stop_state=scenario.expect.stop_state,
        invariants=tuple(scenario.expect.invariants),
        side_effects=tuple(ExpectedEffects(tool, n) for tool, n in sorted(effects.items())),
        deadline_seconds=scenario.budget.deadline_seconds,
        max_attempts=scenario.budget.max_attempts,
        pure_tools=tuple(sorted(n for n, s in tools.items() if s.kind in PURE_KINDS)),
        tool_kinds=tuple(sorted(ToolKindOf(n, s.kind) for n, s in tools.items())),
    )


# ---------------------------------------------------------------------- public API


def run_trace(case: Case, scenario: Scenario | None = None,
              agent_factory: AgentFactory | None = None) -> Trace:
    """Run ``case`` and return its trace, unjudged (see :func:`run_case`)."""
    scenario = scenario if scenario is not None else load_scenario(case.source)
    factory = agent_factory or default_agent_factory
    second = _second_plan(case, scenario, factory)
    return _CaseRun(case, scenario, factory, second).run()


def _second_plan(case: Case, scenario: Scenario, factory: AgentFactory) -> CrashPlan | None:
    """Where incarnation 2 first touches the disk, found by a run that does not crash it.

    Point ids are counted over the whole world, so the first point of the
    recovering incarnation is only known once it has run; the world is
    deterministic, so the probe reaches exactly the point the real run will.
    """
    crash = case.crash
    if crash is None or not crash.during_recovery or crash.crash_class in ERROR_CLASSES:
        return None
    probe = _CaseRun(replace(case, crash=replace(crash, during_recovery=False)), scenario, factory)
    probe._run_to_stop()
    later = [p.id for p in probe.world.disk.points if p.generation == 2]
    if not later:
        return None
    point = later[0]
    crash_class = crash.crash_class if crash_class_applies(crash.crash_class, point) \
        else "unsynced_lost"
    return CrashPlan(point, crash.when, _crash_class(crash_class))


def run_case(case: Case, scenario: Scenario | None = None,
             agent_factory: AgentFactory | None = None) -> CaseResult:
    """Run one case and judge it.

    ``scenario`` defaults to loading ``case.source``; ``agent_factory`` to the
    reference agent. A harness failure (not the agent's) is reported in
    ``CaseResult.error`` rather than raised, so one broken case never hides
    the others.
    """
    scenario = scenario if scenario is not None else load_scenario(case.source)
    trace = run_trace(case, scenario, agent_factory)
    return case_result(case, trace)


def case_result(case: Case, trace: Trace) -> CaseResult:
    """The :class:`CaseResult` of a finished trace."""
    counts = Counter(e.tool for e in trace.effects)
    keys = Counter(e.key for e in trace.effects if not e.idempotent)
    outcome = trace.outcome
    return CaseResult(
        case=case,
        stop_state=outcome.stop_state if outcome else None,
        stop_reason=outcome.reason if outcome else (trace.error or "no outcome"),
        verdicts=check_trace(trace),
        digest=trace.digest,
        crash_reached=trace.crash.reached,
        side_effects=dict(sorted(counts.items())),
        duplicates=sum(n - 1 for n in keys.values() if n > 1),
        retries=sum(1 for r in trace.requests if r.attempt > 1),
        virtual_seconds=max((i.ended_at for i in trace.incarnations if i.purpose == "run"),
                            default=0.0),
        attempts=attempt_rows(case, trace),
        error=trace.error,
        trace=trace,
    )


def attempt_rows(case: Case, trace: Trace) -> tuple[AttemptRow, ...]:
    """One row per request attempt, usage in the buckets of DESIGN §7.

    ``input_tokens`` is every prompt token (cache reads and writes are parts of
    it); usage is ``None`` where it never reached the client.
    """
    return tuple(_attempt_row(case, trace, r) for r in trace.requests)


def _attempt_row(case: Case, trace: Trace, r: RequestRecord) -> AttemptRow:
    usage = r.usage if r.usage_reported else None
    cache = r.cache
    versions = dict(cache.versions) if cache is not None else {}
    return AttemptRow(
        scenario=trace.scenario, case_id=case.case_id, seed=case.seed,
        request_index=r.index, turn=r.turn, attempt=r.attempt,
        model=r.model or "fake-model", started_at=r.started_at,
        first_byte_at=r.first_byte_at, ended_at=r.ended_at,
        outcome=_row_outcome(r.delivery, r.status, r.truncated),
        input_tokens=None if usage is None else usage.input_tokens,
        cache_read_tokens=None if usage is None else usage.cache_read_tokens,
        cache_write_tokens=None if usage is None else usage.cache_write_tokens,
        output_tokens=None if usage is None else usage.output_tokens,
        cache_miss=cache.miss if cache is not None else None,
        retry_layer=r.retry_layer,
        attempt_id=r.attempt_id,
        provider=trace.dialect,
        cache_write_5m_tokens=None if usage is None or cache is None else cache.write_5m_tokens,
        cache_write_1h_tokens=None if usage is None or cache is None else cache.write_1h_tokens,
        prompt_version=versions.get("system"),
        tool_list_version=versions.get("tools"),
        instructions_version=versions.get("instructions"),
        compaction_version=versions.get("compaction"),
    )


def _row_outcome(delivery: str, status: int, truncated: bool) -> str:
    if delivery == "http_error":
        return f"http_{status}"
    if delivery == "complete" and truncated:
        return "truncated"
    return delivery


def record_points(scenario: Scenario, agent_factory: AgentFactory | None = None,
                  seed: int | None = None) -> list[str]:
    """Every persistence point a crash-free run reaches, in order (no recovery checks)."""
    case = Case(scenario.name, Path(f"<scenario {scenario.name}>"),
                scenario.seed if seed is None else seed)
    run = _CaseRun(case, scenario, agent_factory or default_agent_factory)
    run._run_to_stop()
    return [p.id for p in run.world.disk.points]


def _is_fsync(point: str) -> bool:
    op = point.rpartition(":")[2].partition("#")[0]
    return op in ("fsync", "fsync_dir")


def crash_specs(scenario: Scenario, points: Sequence[str]) -> list[CrashSpec]:
    """The crashes to try at ``points``: fsync points first, ``after`` before ``before``.

    DESIGN §3: "crash after each fsync first: that is where real bugs live".
    """
    ordered = [p for p in points if _is_fsync(p)] + [p for p in points if not _is_fsync(p)]
    specs: list[CrashSpec] = []
    for point in ordered:
        for when in ("after", "before") if _is_fsync(point) else ("before", "after"):
            specs += [CrashSpec(point, when, c) for c in scenario.crash.classes
                      if crash_class_applies(c, point)]
    if scenario.crash.during_recovery:
        specs += [replace(s, during_recovery=True) for s in list(specs)
                  if s.crash_class not in ERROR_CLASSES]
    return specs


def plan_cases(scenario: Scenario, source: Path | str,
               agent_factory: AgentFactory | None = None) -> list[Case]:
    """The no-crash case, then one case per selected point x when x applicable class.

    ``crash.points``: ``none`` (only the no-crash case), ``all``, or a list of
    ids checked against a recorded run (an unknown id is a
    :class:`~harness.ScenarioError` located in the file).
    """
    source = Path(source)
    base = Case(scenario.name, source, scenario.seed)
    selection = scenario.crash.points
    if selection == "none":
        return [base]
    recorded = list(dict.fromkeys(record_points(scenario, agent_factory)))
    check_crash_points(scenario, recorded)
    points = recorded if selection == "all" else [p for p in recorded if p in selection]
    specs = crash_specs(scenario, points)
    if recorded:
        # After the last point the run is over and its state durable: a recovery
        # may have nothing to write, hence no point to crash at again.
        specs = [s for s in specs if not (s.during_recovery and s.when == "after"
                                          and s.point_id == recorded[-1])]
    return [base] + [replace(base, crash=spec) for spec in specs]
