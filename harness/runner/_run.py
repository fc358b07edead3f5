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
import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, Protocol, TypeVar

from fakes import (
    CRASH_CLASSES,
    LOOP_BOUND_BEHAVIOURS,
    ClockRunner,
    CrashPlan,
    HarnessLimitExceeded,
    ProcessGone,
    SimulatedCrash,
    crash_class_applies,
)
from harness._environment import agent_environ
from harness._errors import (
    AgentEntryError,
    ConfigError,
    FaultError,
    HarnessError,
    ScenarioError,
    got_expected,
    one_of,
)
from harness.checks import check_trace
from harness.intercept import (
    PROCESS_ADVICE,
    PROVIDER_ENVIRONMENT,
    PlainAgent,
    PlainEntry,
    Target,
    called_from_blocking_code,
    guest_factory,
    missing_function,
    provider_environment,
    refused_arguments,
)
from harness.ports import (
    REPLY_STATUSES,
    STOP_STATES,
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    RecoveryReport,
    StopState,
    TranscriptMessage,
)
from harness.runner._never_started import never_started
from harness.runner._observed import observed_transcript
from harness.runner._points import is_world_point
from harness.runner._results import (
    AttemptRow,
    Case,
    CaseResult,
    CrashSpec,
    Verdict,
)
from harness.runner._secrets import SecretLook
from harness.runner._task import task_for
from harness.runner._trace_writer import Ending, write_trace
from harness.runner._world import DISK_ERRORS, PURE_KINDS, World, WorldCrash
from harness.scenario import (
    Scenario,
    check_blocking_behaviours,
    check_call_arguments,
    check_targets,
    did_you_mean,
    fault_error,
)
from harness.trace import (
    CallRecord,
    CrashRecord,
    ExpectationRecord,
    ExpectedEffects,
    HeldAfterReturn,
    IncarnationRecord,
    MessageRecord,
    NeverStartedCall,
    OutcomeRecord,
    Purpose,
    RecoveryRecord,
    RequestRecord,
    SentUsage,
    ToolKindOf,
    Trace,
    TraceExtra,
)

T = TypeVar("T")

AgentUnderTest = AgentFactory | PlainEntry


class RejoinedRun(Protocol):
    """A recorded run a case's incarnation rejoined (harness.runner._explore's Join)."""

    def trace(self, run: _CaseRun) -> Trace:
        """The case's trace: its own records up to the join, then the recorded run's."""
        ...
"""An agent factory over the ports, or a user's plain ``main(prompt)``."""

# Classes that raise an OSError at the point instead of killing the process.
ERROR_CLASSES = DISK_ERRORS
#: Set to 1 to run every case from its start (no recorded run, no rejoining).
REPLAY_VARIABLE = "HARNESS_REPLAY"
# A run that outlives its own deadline by this much virtual time is stuck, not slow.
_GUARD_EXTRA_SECONDS = 3600.0


class Rejoined(BaseException):
    """A recovering incarnation reached a state the recorded run was in: it stops there.

    A ``BaseException``, like a crash, so that the agent's ``except Exception`` lets it by.
    """


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

    def __init__(self, case: Case, scenario: Scenario, factory: AgentUnderTest,
                 second: CrashPlan | WorldCrash | None = None, world: World | None = None
                 ) -> None:
        self.case = case
        self.scenario = scenario
        self.task = task_for(scenario)
        self.world = world or World(scenario, seed=case.seed, plan=_first_plan(case.crash),
                                    world_crash=_world_crash(case.crash))
        self.plain = isinstance(factory, PlainEntry)
        self.guest_sources = _guest_sources(factory)
        self.factory = _bind(factory, scenario, self.world)
        self.second = second
        self.incarnations: list[_Incarnation] = []
        self.recoveries: list[RecoveryRecord] = []
        self.secrets = SecretLook(scenario)
        # What each restart's durable journal proved never started (J4; _never_started).
        self.never_started: list[NeverStartedCall] = []
        # Runs that returned while a worker thread of theirs still slept (CANCEL:held).
        self.held: list[HeldAfterReturn] = []
        self._runner: ClockRunner  # the case's loop, while it runs
        # Set when a recovering incarnation rejoined a recorded run (harness.runner._explore).
        self.joined: RejoinedRun | None = None
        # Called once incarnation 1 has crashed, before the restart: True when the case
        # takes an earlier case's restart from that crash state (it sets ``joined``).
        self.at_first_crash: Callable[[], bool] | None = None

    def run(self) -> Trace:
        # One loop for every incarnation of the case: each leaves nothing behind for
        # the next (ClockRunner), and a loop per incarnation was a tenth of a crash run.
        with self.world.clock.runner() as self._runner:
            return self.finish(self._run_to_stop())

    def finish(self, final: _Incarnation) -> Trace:
        """The trace once the main runs stopped: recovery checked twice, or the rejoined run.

        Runs inside :meth:`run` or :meth:`driven` (recovery needs the case's loop).
        """
        if self.joined is not None:
            return self.joined.trace(self)
        run_points = tuple(p.id for p in self.world.disk.points)
        self._check_recovery_twice()
        return self._trace(final, run_points)

    def run_to_stop(self) -> _Incarnation:
        """Only the runs up to the stop (no recovery check): what a probe needs."""
        with self.driven():
            return self._run_to_stop()

    @contextlib.contextmanager
    def driven(self) -> Iterator[None]:
        """The case's loop, for a caller that runs the stages itself (a recording)."""
        with self.world.clock.runner() as self._runner:
            yield

    # -- the main runs ----------------------------------------------------------
    def _run_to_stop(self) -> _Incarnation:
        disk = self.world.disk
        # A case built from a recorded run starts with incarnation 1 already crashed.
        current = self.incarnations[-1] if self.incarnations else self._run_once(1)
        while current.crashed_at is not None and current.number < 3:
            if current.number == 1 and self.at_first_crash is not None and \
                    self.at_first_crash():
                return current  # the rest is an earlier case's restart (self.joined)
            disk.restart()
            self._note_never_started(current.number + 1)
            if current.number == 1 and self.second is not None:
                self._arm(self.second)
            current = self._run_once(current.number + 1)
        return current

    def _note_never_started(self, incarnation: int) -> None:
        """The calls the files the crash left prove never started, for ``incarnation``."""
        self.never_started += [NeverStartedCall(incarnation, call, tool)
                               for call, tool in never_started(self.world.disk.files())]

    def _arm(self, second: CrashPlan | WorldCrash) -> None:
        """Plan the crash of incarnation 2 or later: at a point of its files, or a world event."""
        if isinstance(second, WorldCrash):
            self.world.arm_crash(second)
        else:
            self.world.disk.plan = second

    def _run_once(self, number: int) -> _Incarnation:
        record = _Incarnation(number, "run")
        self.incarnations.append(record)
        fired_before = self.world.disk.fired
        held_before = len(self.world.clock.held)
        try:
            # Every form of agent, not plain ones only (a plain one enters the rest itself).
            with agent_environ(PROVIDER_ENVIRONMENT), self._contained(number):
                agent = self.factory(self.world.ports(number))
                self.world.returned = False
                record.outcome = checked_outcome(self._run_agent(agent))
        except (Rejoined, ProcessGone):
            pass  # a crashed incarnation's loop that waited on: its crash is recorded below
        except SimulatedCrash as crash:
            # A crash seen first on another thread of the agent (its second call of a
            # parallel pair refused as the process is dead) names no point: the world's
            # crash does, whichever thread the agent heard of it from.
            record.crashed_at = (crash.point_id or self.world.crashed_at
                                 or _fired_id(self.world, fired_before))
        except FaultError as error:  # the scenario asks for what its stream cannot give
            raise fault_error(self.scenario, error) from error
        except AgentEntryError:
            raise
        except Exception as error:  # the agent's own failure is evidence, not a harness bug
            record.error = f"{type(error).__name__}: {error}"
        if self.joined is not None:
            return record  # the rest of its run is the recorded run's
        if record.crashed_at is None and self.world.incarnations.crashed:
            # The agent swallowed the crash (``except BaseException``) and went on:
            # the process is dead all the same, and whatever it returned never counted.
            record.crashed_at = self.world.crashed_at or _fired_id(self.world, fired_before)
            record.outcome = None
        record.ended_at = self.world.clock.now()
        self.held += [HeldAfterReturn(number, returned, until)
                      for returned, until in self.world.clock.held[held_before:]]
        self._look_for_secrets(number)
        return record

    def _look_for_secrets(self, incarnation: int) -> None:
        """J3: what the incarnation's files hold of the case's secrets, crashed or not."""
        self.secrets.after(incarnation, self.world.disk.files, self.world.invocations)

    def _contained(self, number: int) -> contextlib.AbstractContextManager[None]:
        """A factory-form agent's files, sockets and processes, kept in the world."""
        if self.guest_sources is None:
            return contextlib.nullcontext()
        return guest_factory(self.world, number, self.guest_sources)

    def _run_agent(self, agent: Agent) -> object:
        if isinstance(agent, PlainAgent):
            # Its interception is entered with no loop of ours running: a blocking
            # main may start its own loops, an async one is driven on the clock.
            # The scenario's cancels reach an async main's task (PlainAgent.cancel).
            number = self.incarnations[-1].number
            outcome = agent.run_with(self.task, lambda run: self._drive(self._returning(
                self.world.jobs.beside(agent, number, run))),
                cancellable=bool(self.scenario.cancels))
            self.world.returned = True
            return outcome
        number = self.incarnations[-1].number
        return self._drive(self._returning(self.world.jobs.beside(agent, number,
                                                                  agent.run(self.task))))

    async def _returning(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``'s result, noting in the world that the agent's run is over.

        A tool call still in flight then was left behind by the agent, not cut
        by a crash: the world records it as never settled (J7).
        """
        result = await coro
        self.world.returned = True
        return result

    def _drive(self, coro: Coroutine[Any, Any, T]) -> T:
        limit = self.task.deadline_seconds + _GUARD_EXTRA_SECONDS
        return self._runner.run(_guarded(coro, limit))

    # -- I11: recover twice -------------------------------------------------------
    def _check_recovery_twice(self) -> None:
        if self.plain:
            return  # a plain main recovers inside its run; there is no recover() to call
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
        world.returned = False
        report, error = RecoveryReport(), None
        try:
            with agent_environ(PROVIDER_ENVIRONMENT), self._contained(number):
                report = await self.factory(world.ports(number)).recover()
        except SimulatedCrash as crash:
            error = f"crashed during recover: {crash}"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        self.incarnations.append(_Incarnation(number, "recover-check", error=error,
                                              ended_at=world.clock.now()))
        self._look_for_secrets(number)
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
        return write_trace(world, self.case, Ending(
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
            outcome=None if final.outcome is None else self._outcome_record(final),
            recoveries=tuple(self.recoveries),
            # Only a disk error's case reads it: other cases keep their digests.
            expect=expectation(self.scenario, plain=self.plain and error_fired is not None),
            final_incarnation=final.number,
            error=final.error,
            extra=self._extra(final),
            secrets=self.secrets.record(),
        ))

    def _outcome_record(self, final: _Incarnation) -> OutcomeRecord:
        """The agent's outcome; its transcript as the world saw it when it reported none."""
        outcome = final.outcome
        assert outcome is not None
        if not outcome.transcript:
            body = self.world.last_request_body(final.number)
            observed = observed_transcript(self.scenario.dialect, body)
            outcome = replace(outcome, transcript=observed)
        return outcome_record(outcome)

    def _extra(self, final: _Incarnation) -> TraceExtra:
        """What the checkers and the failure report need beyond the records, besides what
        the world recorded itself (the trace writer adds it: harness.runner._trace_writer)."""
        world, scenario, outcome = self.world, self.scenario, final.outcome
        refused = world.databases().refused if self.plain else []
        goals = sum(1 for c in scenario.cancels if c.target == "goal")
        return TraceExtra(
            agent="plain" if self.plain else None,
            foreign_requests=_said(world.foreign),
            foreign_in_tools=dict(world.foreign_in_tools) if world.foreign and
            world.foreign_in_tools else None,
            databases_refused=_said(dict.fromkeys(refused)),
            telemetry_requests=_said(world.telemetry),
            final_answer=outcome.final_text if outcome is not None else None,
            agent_traceback=(outcome.agent_traceback or None) if outcome is not None else None,
            jobs_declared=_said(sorted(scenario.jobs)),
            cancels_declared=len(scenario.cancels) if scenario.cancels else None,
            cancel_hook=bool(world.jobs.hook_offered) if scenario.cancels else None,
            goal_cancels_declared=goals or None,
            # Only when there are some: every other case keeps its digest.
            never_started=tuple(self.never_started) or None,
            held_after_return=tuple(self.held) or None,
            goal_in_requests=world.goal_in_requests(),
            lease_seconds=scenario.goal.lease_seconds if scenario.goal is not None else None,
            max_tool_calls=scenario.budget.max_tool_calls,
            max_jobs=scenario.budget.max_jobs,
            max_job_seconds=scenario.budget.max_job_seconds,
            max_job_output_lines=scenario.budget.max_job_output_lines)


def _said(items: Iterable[str]) -> tuple[str, ...] | None:
    """The items as a trace field: ``None`` when there are none, as the trace leaves them out."""
    return tuple(items) or None


async def _guarded(coro: Coroutine[Any, Any, T], limit: float) -> T:
    try:
        return await asyncio.wait_for(coro, timeout=limit)
    except TimeoutError as error:
        raise HarnessError(f"the agent was still running after {limit:g} virtual seconds") \
            from error


def _first_plan(crash: CrashSpec | None) -> CrashPlan | None:
    if crash is None or is_world_point(crash.point_id):
        return None
    return CrashPlan(crash.point_id, _disk_when(crash), _crash_class(crash.crash_class))


def _disk_when(crash: CrashSpec) -> Literal["before", "after"]:
    if crash.when == "at":
        raise HarnessError(f"{crash.point_id} is a persistence point: crash 'before' or "
                           "'after' it ('at' is for world events)")
    return crash.when


def _world_crash(crash: CrashSpec | None) -> WorldCrash | None:
    if crash is None or not is_world_point(crash.point_id):
        return None
    return WorldCrash(crash.point_id, _crash_class(crash.crash_class))


def check_functions(scenario: Scenario, agent: AgentUnderTest | None = None) -> None:
    """Refuse what would fail a case before it runs, every such error of the file at once.

    A ``target`` or ``--target`` that names no function, a behaviour a blocking target
    cannot wait on, a scripted call whose argument names its tool's own ``target:`` does
    not take (the file's mistake; one a ``--target`` function does not take is the
    scenario's cases' ``unknown``: :mod:`harness.runner._unfit_calls`). ``--target`` and
    the blocking rule belong to a plain agent; the file's own ``target`` lines are checked
    whatever ``agent`` is (``harness validate`` checks them always).
    """
    entry = agent if isinstance(agent, PlainEntry) else None
    if entry is not None:
        _check_tool_map(entry)
    checks: list[Callable[[], None]] = [lambda: check_targets(scenario, missing_function),
              lambda: check_call_arguments(scenario, _target_specs(None, scenario),
                                           refused_arguments)]
    if entry is not None:
        checks.append(lambda: check_blocking_behaviours(
            scenario, blocking_tools(scenario, entry), LOOP_BOUND_BEHAVIOURS))
    errors: list[ScenarioError] = []
    with provider_environment():  # the agent's modules may build clients at import
        for check in checks:
            try:
                check()
            except ScenarioError as error:
                errors += error.errors
    if errors:
        raise ScenarioError.combine(errors)


def _check_tool_map(entry: PlainEntry) -> None:
    for tool, spec in entry.tool_map:
        why = missing_function(spec)
        if why is not None:
            raise ConfigError(entry.tool_map_source, f"{tool}={spec}", "TOOL=MODULE:FUNCTION "
                              "naming a function of the agent's code", why)


def _target_specs(entry: PlainEntry | None, scenario: Scenario) -> dict[str, str]:
    """Each tool's ``module:function``: the file's ``target``, else a plain agent's map."""
    if entry is None:
        return {name: tool.target for name, tool in scenario.tools.items() if tool.target}
    return {target.tool: target.spec for target in _scenario_targets(entry, scenario)}


#: Packages whose agents are the harness's own code (the reference agent): trusted, and
#: run as they always were.
_OWN_AGENTS: Final = ("harness", "fakes")


def _guest_sources(factory: AgentUnderTest) -> tuple[str, ...] | None:
    """The folders of a user's factory's code (read through), or None when no guest
    context is needed: a plain entry contains itself, the harness's own agents are trusted."""
    if isinstance(factory, PlainEntry):
        return None
    module = str(getattr(factory, "__module__", None) or "")
    if module.partition(".")[0] in _OWN_AGENTS:
        return None
    loaded = sys.modules.get(module)
    folders = getattr(loaded, "__path__", None)
    if folders is not None:
        return tuple(str(f) for f in folders)
    file = getattr(loaded, "__file__", None)
    return (os.path.dirname(str(file)),) if file else ()


def _bind(factory: AgentUnderTest, scenario: Scenario, world: World) -> AgentFactory:
    """The factory of a case: a plain entry is bound to the case's world and tool targets."""
    if not isinstance(factory, PlainEntry):
        return factory
    entry = factory.with_targets(_scenario_targets(factory, scenario))

    def build(ports: AgentPorts) -> Agent:
        agent: Agent = PlainAgent(entry, world, ports.incarnation)
        return agent

    return build


def _scenario_targets(entry: PlainEntry, scenario: Scenario) -> tuple[Target, ...]:
    mapped = dict(entry.tool_map)
    return tuple(Target(name, spec.target or mapped[name])
                 for name, spec in scenario.tools.items() if spec.target or name in mapped)


def blocking_tools(scenario: Scenario, agent: AgentUnderTest | None) -> frozenset[str]:
    """The tools ``agent`` reaches through a plain function: no loop-bound behaviour fits them.

    Only a plain entry has targets; a factory over the ports runs every tool on the loop.
    """
    if not isinstance(agent, PlainEntry):
        return frozenset()
    targets = agent.with_targets(_scenario_targets(agent, scenario)).targets
    return frozenset(t.tool for t in targets if called_from_blocking_code(t))


def _crash_class(name: str) -> Any:
    if name not in CRASH_CLASSES:
        raise HarnessError(got_expected("crash class", got=repr(name),
                                        expected=one_of(CRASH_CLASSES)))
    return name


def _fired_id(world: World, before: object) -> str:
    fired = world.disk.fired
    return fired.id if fired is not None and fired is not before else "unknown"


class MalformedOutcome(HarnessError):
    """``run()`` returned something that is not an :class:`~harness.ports.AgentOutcome`, or
    one whose stop state or transcript reply status is none the trace knows."""


def checked_outcome(value: object) -> AgentOutcome:
    """``value`` if it is an :class:`~harness.ports.AgentOutcome`; else :class:`MalformedOutcome`.

    Without an outcome there is no stop state to judge, and every check that
    reads one would say ``unknown``: the run would pass without proving anything.
    A stop state or a reply status outside its vocabulary is refused here too: the
    trace keeps only the words it knows (:data:`~harness.ports.StopState`,
    :data:`~harness.ports.ReplyStatus`), so the checkers never meet a misspelt one.
    """
    if not isinstance(value, AgentOutcome):
        raise MalformedOutcome(got_expected(
            f"run() returned {type(value).__name__} {value!r:.60}",
            expected="an AgentOutcome (harness.ports.AgentOutcome) with the run's stop state"))
    if value.stop_state not in STOP_STATES:
        raise MalformedOutcome(got_expected("AgentOutcome.stop_state",
                                            got=repr(value.stop_state),
                                            expected=one_of(STOP_STATES)))
    for message in value.transcript:
        if message.status is not None and message.status not in REPLY_STATUSES:
            raise MalformedOutcome(got_expected(
                f"the transcript's reply to {message.call_id}: status", got=repr(message.status),
                expected=one_of(REPLY_STATUSES)))
    return value


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


#: What a plain ``main(prompt)`` is expected to end in after the case's disk error, when the
#: scenario does not say: it cannot stop ``infra_paused`` (it can only return or raise), so it
#: is judged by what it can say: it failed. I1 and the side-effect count judge the rest: no
#: duplicate side effect, nothing acknowledged lost.
PLAIN_STOP_AFTER_DISK_ERROR: Final[StopState] = "failed"


def expectation(scenario: Scenario, *, plain: bool = False) -> ExpectationRecord:
    """What the scenario expects, copied into the trace; for a ``plain`` agent, the stop after a
    disk error it can express (:data:`PLAIN_STOP_AFTER_DISK_ERROR`) unless the file says one."""
    tools, effects = scenario.tools, scenario.expect.side_effects
    after_disk_error: StopState = scenario.expect.stop_state_after_disk_error
    if plain and "stop_state_after_disk_error" not in scenario.expect.model_fields_set:
        after_disk_error = PLAIN_STOP_AFTER_DISK_ERROR
    return ExpectationRecord(
        stop_state=scenario.expect.stop_state,
        invariants=tuple(scenario.expect.invariants),
        side_effects=tuple(ExpectedEffects(tool, n) for tool, n in sorted(effects.items())),
        deadline_seconds=scenario.budget.deadline_seconds,
        max_attempts=scenario.budget.max_attempts,
        pure_tools=tuple(sorted(n for n, s in tools.items() if s.kind in PURE_KINDS)),
        tool_kinds=tuple(sorted(ToolKindOf(n, s.kind) for n, s in tools.items())),
        faults=tuple((f.at.turn, f.at.attempt, f.kind) for f in scenario.faults),
        unsafe_tools=tuple(sorted(n for n, s in tools.items() if not s.is_concurrency_safe)),
        idle_bound_seconds=scenario.expect.idle_bound_seconds,
        retry_after_cap_seconds=scenario.expect.retry_after_cap_seconds,
        max_consecutive_429=scenario.expect.max_consecutive_429,
        min_backoff_seconds=scenario.expect.min_backoff_seconds,
        stop_state_after_disk_error=after_disk_error,
        breaker=(breaker.failures_to_open, breaker.cooldown_seconds)
        if (breaker := scenario.expect.breaker) is not None else None,
        max_tokens=scenario.budget.max_tokens,
        max_cost_usd=scenario.budget.max_cost_usd,
    )


# ---------------------------------------------------------------------- public API


def replay_each_case() -> bool:
    """Whether ``HARNESS_REPLAY=1`` asks every case to be run from its start."""
    return os.environ.get(REPLAY_VARIABLE, "") not in ("", "0")


def replayed_trace(case: Case, scenario: Scenario, factory: AgentUnderTest) -> Trace:
    """``case`` run from its start: incarnation 1 up to the crash, and on to the end."""
    second = _second_plan(case, scenario, factory)
    return _CaseRun(case, scenario, factory, second).run()


def _second_plan(case: Case, scenario: Scenario, factory: AgentUnderTest
                 ) -> CrashPlan | WorldCrash | None:
    """The second crash: the scenario's ``crash.then``, or where incarnation 2 first
    touches the disk, found by a run that does not crash it.

    Point ids are counted over the whole world, so the first point of the
    recovering incarnation is only known once it has run; the world is
    deterministic, so the probe reaches exactly the point the real run will.
    """
    crash = case.crash
    then = scenario.crash.then
    if crash is not None and then is not None and crash.crash_class not in ERROR_CLASSES:
        return then_plan(then, crash.crash_class)
    if crash is None or not crash.during_recovery or crash.crash_class in ERROR_CLASSES:
        return None
    probe = _CaseRun(replace(case, crash=replace(crash, during_recovery=False)), scenario, factory)
    probe.run_to_stop()
    later = [p.id for p in probe.world.disk.points if p.generation == 2]
    if not later:
        return None
    point = later[0]
    crash_class = crash.crash_class if crash_class_applies(crash.crash_class, point) \
        else "unsynced_lost"
    return CrashPlan(point, _disk_when(crash), _crash_class(crash_class))


def then_plan(point: str, crash_class: str) -> CrashPlan | WorldCrash:
    """A crash at ``point`` once a later incarnation reaches it, in ``crash_class``.

    >>> then_plan("after_tool:mail#1", "unsynced_lost")
    WorldCrash(point_id='after_tool:mail#1', crash_class='unsynced_lost')
    >>> then_plan("log:write#4", "torn_append_garbage").when
    'after'
    """
    if is_world_point(point):
        return WorldCrash(point, _crash_class(crash_class))
    return CrashPlan(point, "after", _crash_class(crash_class))


#: What each harness limit most likely means about the agent, and what to change.
_LIMIT_ADVICE = {
    "disk_bytes": "the agent writes without end to its files or logs: bound what one run "
                  "writes, or rotate and truncate what it keeps",
    "requests": "the agent asks the model again and again without stopping: cap its turns "
                "and retries from one budget (L3, S8)",
    "process": PROCESS_ADVICE,
    "memory": "the agent holds more memory than a case may: bound what it keeps (a cache, a "
              "history that only grows), or raise --case-memory if it is honest work",
    "output": "the agent prints without end: log less, or to a file it rotates",
}


def limit_result(case: Case, limit: HarnessLimitExceeded) -> CaseResult:
    """A case stopped at a harness limit: one failed ``harness_limit`` verdict.

    The run never finished, so there is no trace to judge; the limit is the verdict.
    It is the agent's doing, not a harness error, so ``error`` stays ``None``.
    """
    detail = str(limit).removeprefix("harness_limit: ")
    verdict = Verdict("harness_limit", "fail", detail, (f"limit: {limit.limit}",),
                      advice=_LIMIT_ADVICE.get(limit.limit, ""))
    return CaseResult(case, None, "stopped at a harness limit", (verdict,), "",
                      crash_reached=False)


def case_result(case: Case, trace: Trace) -> CaseResult:
    """The :class:`CaseResult` of a finished trace."""
    counts = Counter(e.tool for e in trace.effects)
    keys = Counter(e.key for e in trace.effects if not e.idempotent)
    outcome = trace.outcome
    verdicts = check_trace(trace)
    if case.crash is not None and not trace.crash.reached:
        verdicts += (unreached_verdict(case.crash, trace),)
    return CaseResult(
        case=case,
        stop_state=outcome.stop_state if outcome else None,
        stop_reason=outcome.reason if outcome else (trace.error or "no outcome"),
        verdicts=verdicts,
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


def unreached_verdict(crash: CrashSpec, trace: Trace) -> Verdict:
    """``unknown``: the agent under test never reached the case's crash point."""
    reached = [*trace.points, *(trace.extra.world_events or ())]
    hint = did_you_mean(crash.point_id, reached)
    shown = ", ".join(reached[:8]) + (f" (and {len(reached) - 8} more)" if len(reached) > 8
                                       else "")
    message = (f"the agent never reached {crash.point_id}, so this case proves nothing; "
               f"it reached: {shown or 'no point at all'}")
    if hint:
        message += f". {hint}"
    return Verdict("crash", "unknown", message)


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
