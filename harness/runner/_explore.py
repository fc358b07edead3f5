"""Crash exploration in linear time: record a scenario's run once, start each crash from it.

Replaying every crash case from the start costs a scenario the square of its length
(seed 002 §19.6 asks for a crash before and after every durable write). ALICE and
CrashMonkey record a workload once and build each crash state from the record; the
world here is deterministic, so this goes further:

1. **Record once.** The uncrashed run of a scenario is run once, and the world is
   copied at every persistence point (before and after its operation) and every
   world event: durable and volatile bytes, ledger, provider (its requests, attempt
   counts, prompt cache and their random streams), clock, counters. A crash case
   starts from the copy at its point, crashes it in its class there, and only the
   recovering incarnation runs. A point where a stream is open or a tool call runs
   is not copied (the crash would cut them as the agent unwinds): its first case
   runs from the start until its crash, and from there on as the others (3.). Its
   other classes share that first incarnation: the crash keeps what it found
   before its class decided what survives (:class:`fakes.CrashSource`), and where
   the dying agent never read the class (the crash it met is the only thing of the
   class that reaches it) its unwinding was the same in every class, so each other
   class's crashed world is the unwound one with that class's files.
2. **Rejoin.** Each request the recorded run sent is keyed by what the rest of the
   run depends on (:meth:`World.state_key`: the request itself, durable bytes,
   ledger, provider state, clock). When a recovering incarnation is about to send a
   request with a key the recorded run had, the rest is the recorded run's by
   determinism: the case stops there and its trace is the recorded run's suffix,
   renumbered (incarnations, request indices, sequence numbers, point ids).
3. **Share a restart.** Crashes at different points often leave one state (every
   ``unsynced_lost`` point between two fsyncs where no request or effect came
   between). A crashed world is keyed by what its restart depends on
   (:meth:`World.crash_state_key`: the files the crash left, ledger, provider,
   clock, world events); a case whose key an earlier case had runs nothing after its
   crash: its trace is its own records up to the crash, then the earlier case's
   restart, renumbered as a rejoin is (CrashMonkey, too, tests each distinct crash
   state once).
4. **Checked.** The first case a recording serves each way (from a copy, rejoined,
   shared, from a shared first incarnation), and one in 32 of each after, are also
   replayed from the start; if a digest differs (an agent that is not deterministic,
   or that acts while it unwinds from a crash), every case of the scenario replays
   and the results say so (``CaseResult.exploration``).

An unchanged agent (``main(prompt)``) is explored the same way: a crash kills its
process, so what its restart meets is the world alone (the crash disk its files and
databases live on, the provider, the ledger, the clock), and that is what is copied.
Its modules are imported afresh by the restart either way.

Error classes (an ``EIO`` the agent lives through), second crashes during recovery,
and scenarios with background jobs, cancels or a goal (:func:`unrecorded_parts`)
always replay. ``HARNESS_REPLAY=1`` (``harness run --replay``) turns all of it off;
a test runs the shipped suite both ways and requires equal digests.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from fakes import (
    CASE_THREADS,
    IncomingRequest,
    PersistencePoint,
    VirtualClock,
    crash_class_applies,
)
from harness.runner._ledger_pipe import (
    PipeWitness,
    after_parts,
    joined_parts,
    parts_of,
    sent_bytes,
    with_parts,
)
from harness.runner._points import is_world_point
from harness.runner._results import Case, CrashSpec
from harness.runner._run import (
    ERROR_CLASSES,
    AgentUnderTest,
    Rejoined,
    _CaseRun,
    _crash_class,
    _first_plan,
    _guarded,
    _Incarnation,
    replayed_trace,
)
from harness.runner._trace_writer import world_effects
from harness.runner._world import World
from harness.scenario import Scenario
from harness.trace import HeldAfterReturn, Trace

Exploration = Literal["recorded", "rejoined", "replayed"]
"""How a case ran: from a recorded copy, rejoining the recorded run, or from its start.

A case that shared an earlier case's restart is ``recorded``: which case ran first
depends on what else its process ran, and a case's result must not."""
_Made = Literal["recorded", "rejoined", "shared", "inflight", "replayed"]
"""How a trace was made here: as :data:`Exploration`, from an earlier case's restart, or
from an earlier case's first incarnation (:class:`FirstLife`)."""
# How a case made each way says it ran, unless told otherwise.
_REPORTED: Final[dict[_Made, Exploration]] = {
    "recorded": "recorded", "rejoined": "rejoined", "shared": "recorded",
    "inflight": "recorded", "replayed": "replayed"}

# Of the cases served from a recording, one in this many is replayed as well to check it.
_SAMPLE_EVERY: Final = 32
# Recordings kept per process: a worker runs the cases of a few scenarios at a time.
_KEPT: Final = 8
# Crash states are remembered with the trace of the case that reached each first, for
# the scenario whose cases run now, up to this many trace points in all: a trace weighs
# about 130 bytes per point (a 32-turn run's 155 KB), so this is some 50 MB.
_SHARED_POINTS_KEPT: Final = 400_000
# First incarnations kept for the other classes of points no copy holds: one world each,
# dropped once every class of its point ran (the plan runs them one after the other).
_FIRST_LIVES_KEPT: Final = 16


@dataclass
class FirstLife:
    """A case's first incarnation, run from the start to its crash at a point no copy
    holds, as the other classes of that crash take it.

    ``world`` is the world once the crashed agent had unwound, before the restart; its
    disk kept what the crash found (:meth:`fakes.CrashDisk.crashed_as`).
    """

    world: World
    incarnation: _Incarnation
    held: tuple[HeldAfterReturn, ...]
    classes_left: set[str]


@dataclass(frozen=True)
class Mark:
    """How far a run had got when it sent one request: the counts its records are at."""

    requests: int
    invocations: int
    effects: int
    points: int
    point_counts: tuple[tuple[tuple[str, str], int], ...]
    events: int
    foreign: int
    telemetry: int

    @classmethod
    def of(cls, world: World) -> Mark:
        disk = world.disk
        return cls(len(world.requests), world._invocation_seq, len(world.ledger.effects),
                   len(disk.points), tuple(sorted(disk._counts.items())), len(world.events),
                   len(world.foreign), len(world.telemetry))


class Recording:
    """One scenario's uncrashed run, with the world copied at each of its points."""

    def __init__(self, case: Case, scenario: Scenario, factory: AgentUnderTest) -> None:
        self.factory = factory
        self.copies: dict[tuple[str, str], World | None] = {}
        self.marks: dict[str, Mark] = {}
        # The requests themselves: most requests after a restart differ from every one
        # of the recorded run, and this tells so without keying the whole world.
        self.requests_sent: set[tuple[object, ...]] = set()
        self.fallback: str | None = None
        # Crash states already run, by World.crash_state_key: the first case's trace
        # and its counts at the crash.
        self.crash_states: dict[str, tuple[Trace, Mark]] = {}
        # The crash states among them whose restart rejoined the recorded run.
        self.rejoining: set[str] = set()
        self._shared_points = 0
        self.shared_restarts = 0  # cases that took an earlier case's restart
        # First incarnations of points no copy holds, by (point, when), for their other
        # classes; and how many cases took one, how many first incarnations ran there.
        self.first_lives: OrderedDict[tuple[str, str], FirstLife] = OrderedDict()
        self.first_lives_shared = 0
        self.first_lives_run = 0
        self._served: dict[str, int] = {}
        run = _CaseRun(replace(case, crash=None), scenario, factory)
        world = run.world
        world.disk.observer = self._at_point
        world.on_event = self._at_event
        world.on_request = self._at_request
        world.on_tool_settled = self._at_tool_settled
        self._world = world
        self._after_tool: str | None = None
        self._thread = threading.current_thread()
        with run.driven():
            final = run._run_to_stop()
            world.disk.observer = world.on_event = world.on_request = None
            world.on_tool_settled = None
            self.run = run
            self.base = run.finish(final)

    def _at_point(self, point: PersistencePoint, when: str) -> None:
        self.copies[(point.id, when)] = self._copy()

    def _at_event(self, event: str) -> None:
        # A crash at before_request raises where the request is accepted, before
        # any response exists: the request stays as it is, whatever the client.
        self.copies[(event, "at")] = self._copy(
            but_the_last_request=event.startswith("before_request:"))
        if event.startswith("after_tool:"):
            # Reached inside the tool call, whose record is still open: a crash here
            # closes it at once (the call's own ``finally``, with no wait between), so
            # the world as the crash leaves it is the one when the call settles.
            self._after_tool = event

    def _at_tool_settled(self) -> None:
        event, self._after_tool = self._after_tool, None
        if event is not None and self.copies.get((event, "at")) is None:
            self.copies[(event, "at")] = self._copy()

    def _copy(self, *, but_the_last_request: bool = False) -> World | None:
        world = self._world
        if world.in_flight(but_the_last_request=but_the_last_request) or \
                not self._in_case_thread() or _other_tasks():
            return None
        return world.copy()

    def _in_case_thread(self) -> bool:
        """Whether the point is reached by the case: its own thread or one it started.

        A crash refuses every later world operation from any thread, so where the
        point was reached does not change the crashed world; the sampled replays
        (:meth:`checked`) catch an agent whose threads make it otherwise.
        """
        current = threading.current_thread()
        return current is self._thread or current in CASE_THREADS

    def _at_request(self, incoming: IncomingRequest, incarnation: int) -> None:
        world = self._world
        if incarnation == 1 and not world.in_flight():
            self.marks.setdefault(world.state_key(incoming), Mark.of(world))
            self.requests_sent.add(_sent(incoming))

    def sampled(self, how: _Made) -> bool:
        """Whether this case is one of the sample replayed to check the recording.

        The first case served each way, then one in :data:`_SAMPLE_EVERY`.
        """
        served = self._served[how] = self._served.get(how, 0) + 1
        return served % _SAMPLE_EVERY == 1

    def checked(self, case: Case, scenario: Scenario, trace: Trace, how: _Made,
                reported: Exploration | None = None) -> tuple[Trace, Exploration]:
        """``trace`` and how the case ran (``reported``, where given); or, where this case
        is one of the sample and its replay differs, the replay, and every later case of
        the scenario replays."""
        if how != "replayed" and self.sampled(how):
            replayed = replayed_trace(case, scenario, self.factory)
            if replayed.digest != trace.digest:
                self.fallback = (f"a {how} case differed from its replay ({case.case_id}); "
                                 "every case of the scenario replays")
                return replayed, "replayed"
        if how == "shared":
            self.shared_restarts += 1
        return trace, reported or _REPORTED[how]

    def remember(self, state: str, trace: Trace, at_crash: Mark, *, rejoined: bool) -> None:
        """Keep ``trace``'s restart (what follows the crash) as the restart from crash
        state ``state``, within the budget; ``rejoined``: that restart rejoined the
        recorded run."""
        restart = suffix_of(trace, at_crash, incarnation=2)
        if self._shared_points + len(restart.points) <= _SHARED_POINTS_KEPT:
            self.crash_states[state] = (restart, at_crash)
            self._shared_points += len(restart.points)
            if rejoined:
                self.rejoining.add(state)

    def forget_crash_states(self) -> None:
        self.crash_states.clear()
        self.rejoining.clear()
        self._shared_points = 0
        self.first_lives.clear()

    def keep_first_life(self, case: Case, scenario: Scenario, run: _CaseRun) -> None:
        """Keep ``run``'s first incarnation, crashed and unwound, for the other classes of
        its crash: only where no code read the class of the crash it met."""
        crash, world = case.crash, run.world
        source = world.disk.crash_source
        if crash is None or source is None or source.class_read or \
                len(run.incarnations) != 1:
            return
        classes: set[str] = {
            c for c in scenario.crash.classes
            if c not in ERROR_CLASSES and crash_class_applies(c, crash.point_id)}
        classes.discard(crash.crash_class)
        if not classes:
            return
        self.first_lives[(crash.point_id, crash.when)] = FirstLife(
            world.copy(), replace(run.incarnations[0]), tuple(run.held), classes)
        while len(self.first_lives) > _FIRST_LIVES_KEPT:
            self.first_lives.popitem(last=False)

    def first_life(self, crash: CrashSpec) -> FirstLife | None:
        """The kept first incarnation for ``crash``'s point, if one is kept for its class;
        taken for that class (the last class's takes it away)."""
        key = (crash.point_id, crash.when)
        life = self.first_lives.get(key)
        if life is None or crash.crash_class not in life.classes_left:
            return None
        life.classes_left.discard(crash.crash_class)
        if not life.classes_left:
            del self.first_lives[key]
        return life

    def crashed_world(self, crash: CrashSpec) -> World | None:
        """A copy of the world crashed at ``crash``, or None when the case must replay."""
        at_event = is_world_point(crash.point_id)
        copied = self.copies.get((crash.point_id, "at" if at_event else crash.when))
        if copied is None:
            return None
        world = copied.copy()
        disk = world.disk
        # No agent runs in a copy: there are no threads of its to wait for.
        settle, disk.before_crash = disk.before_crash, None
        if at_event:
            world.crashed_at = crash.point_id
            disk.crash_at_event(crash.point_id, _crash_class(crash.crash_class))
        else:
            disk.plan = _first_plan(crash)
            disk.crash_here(disk.points[-1], _crash_class(crash.crash_class))
        disk.before_crash = settle
        return world


def _other_tasks() -> bool:
    """Whether the agent has tasks besides the one at the point (parallel tool calls).

    They would go on for a moment after a crash, until the loop is shut down, and a
    copy of the world taken now would miss what they did.
    """
    try:
        current = asyncio.current_task()
        tasks = asyncio.all_tasks()
    except RuntimeError:
        return False  # blocking code in the case's own thread: no loop, no tasks
    return any(not task.done() and task is not current and not _harmless(task)
               and not _awaits(task, current) for task in tasks)


def _awaits(task: asyncio.Task[object], current: asyncio.Task[object] | None) -> bool:
    """Whether ``task`` is blocked on ``current``, itself or through tasks blocked on it.

    Such a task (the runner's own wrapper, a framework running each turn in a task
    of its own) cannot act before ``current`` ends: after a crash its unwinding is
    ``current``'s, as the frames of ``current`` itself are.
    """
    seen: set[int] = set()
    waiter = getattr(task, "_fut_waiter", None)
    while isinstance(waiter, asyncio.Task) and id(waiter) not in seen:
        if waiter is current:
            return True
        seen.add(id(waiter))
        waiter = getattr(waiter, "_fut_waiter", None)
    return False


def _harmless(task: asyncio.Task[object]) -> bool:
    """The runner's own guard around the agent, a bare timer, an async generator's
    finalizer or a client's ``aclose``: none of them acts on the world.

    The loop schedules ``aclose()`` of an async generator the garbage collector found
    unfinished (an HTTP client's byte stream the agent stopped reading); when that
    happens depends on every allocation before it, other tests' included, so counting
    it would make a point copyable in one process and not in another.
    """
    coro = task.get_coro()
    if type(coro).__name__ == "async_generator_athrow":
        return True
    code = getattr(coro, "cr_code", None)
    # An SDK client's finalizer schedules its own ``aclose()`` when the collector
    # finds it (the openai SDK does): when depends on the process's history, as
    # above. With no stream open (checked first) closing a client cannot touch the
    # world.
    return code in _HARMLESS_CODE or getattr(code, "co_name", None) == "aclose"


_HARMLESS_CODE: Final = frozenset({_guarded.__code__, VirtualClock.sleep.__code__})


@dataclass(frozen=True)
class Join:
    """Where a case joined a run already traced: that run's and the case's counts then.

    ``source`` is the recorded run's trace or an earlier case's; the case's
    incarnation ``incarnation`` goes on as the source's ``source_incarnation`` did.
    """

    source: Trace
    recorded: Mark
    case: Mark
    incarnation: int
    source_incarnation: int = 1
    trimmed: bool = False
    """``source`` holds only what follows ``recorded`` (:func:`suffix_of`)."""

    def _from(self, count: int) -> int:
        return 0 if self.trimmed else count

    def trace(self, run: _CaseRun) -> Trace:
        """The case's own records up to the join, then the source's, renumbered."""
        base, m, c, world = self.source, self.recorded, self.case, run.world
        shift = self.incarnation - self.source_incarnation
        start = self._from
        requests = world.request_records()[:c.requests] + tuple(
            replace(r, index=r.index - m.requests + c.requests, incarnation=r.incarnation + shift)
            for r in base.requests[start(m.requests):])
        invocations = tuple(sorted((i for i in world.invocations if i.seq <= c.invocations),
                                   key=lambda i: i.seq)) + tuple(
            replace(i, seq=i.seq - m.invocations + c.invocations,
                    incarnation=i.incarnation + shift)
            for i in base.invocations if i.seq > m.invocations)
        effects = world_effects(world)[:c.effects] + tuple(
            replace(e, seq=e.seq - m.effects + c.effects, incarnation=e.incarnation + shift)
            for e in base.effects[start(m.effects):])
        points = tuple(p.id for p in world.disk.points[:c.points]) + tuple(
            _renumbered(p, dict(m.point_counts), dict(c.point_counts))
            for p in base.points[start(m.points):])
        own = run._trace(run.incarnations[-1], ())  # crash record, earlier incarnations
        incarnations = (*(i for i in own.incarnations if i.number < self.incarnation),
                        *(replace(i, number=i.number + shift) for i in base.incarnations
                          if i.number >= self.source_incarnation))
        recorded = base.extra
        extra = replace(
            recorded,
            world_events=_joined(world.events[:c.events],
                                 (recorded.world_events or ())[start(m.events):]),
            foreign_requests=_joined(world.foreign[:c.foreign],
                                     (recorded.foreign_requests or ())[start(m.foreign):]),
            telemetry_requests=_joined(world.telemetry[:c.telemetry],
                                       (recorded.telemetry_requests or ())[start(m.telemetry):]))
        joined = replace(base, case=own.case, crash=own.crash, points=points,
                         incarnations=incarnations, requests=requests, invocations=invocations,
                         effects=effects, extra=extra,
                         final_incarnation=base.final_incarnation + shift,
                         recoveries=tuple(replace(r, incarnation=r.incarnation + shift)
                                          for r in base.recoveries))
        # The case's world stopped at the join: its whole stream, then the source's.
        return with_parts(joined, joined_parts(
            parts_of(own), parts_of(base),
            drop=(start(m.effects), start(m.requests), m.invocations), shift=shift,
            calls=c.invocations))


def suffix_of(trace: Trace, mark: Mark, incarnation: int) -> Trace:
    """What a :class:`Join` with ``trimmed`` reads of ``trace``: its records after
    ``mark`` and its incarnations from ``incarnation`` on.

    A remembered restart is kept this way: its records up to the crash are the
    recording's own, and keeping them again for every crash state made the memory
    kept grow with the square of a scenario's length.
    """
    said = trace.extra
    extra = replace(
        said,
        world_events=_after(said.world_events, mark.events),
        foreign_requests=_after(said.foreign_requests, mark.foreign),
        telemetry_requests=_after(said.telemetry_requests, mark.telemetry))
    suffix = replace(trace, requests=trace.requests[mark.requests:],
                     invocations=tuple(i for i in trace.invocations if i.seq > mark.invocations),
                     effects=trace.effects[mark.effects:], points=trace.points[mark.points:],
                     incarnations=tuple(i for i in trace.incarnations
                                        if i.number >= incarnation),
                     extra=extra)
    return with_parts(suffix, after_parts(parts_of(trace),
                                          (mark.effects, mark.requests, mark.invocations)))


def _no_secrets(run: _CaseRun, source: Trace) -> bool:
    """Whether neither the case so far nor the run it would join has a secret (J3).

    A joined trace takes the source's findings in the agent's files; where there are
    secrets, what the case's own files held before the join may differ from what the
    source's did, so such a case runs on instead.
    """
    return source.secrets is None and not run.secrets.any_to_look_for(run.world.invocations)


def _joined(own: Sequence[str], recorded: Sequence[str]) -> tuple[str, ...] | None:
    """The case's own lines, then the recording's; ``None`` when there are none."""
    return (*own, *recorded) or None


def _after(lines: tuple[str, ...] | None, count: int) -> tuple[str, ...] | None:
    """The lines after the first ``count``, as a kept restart reads them."""
    return lines if lines is None else lines[count:]


def _renumbered(point_id: str, recorded: dict[tuple[str, str], int],
                case: dict[tuple[str, str], int]) -> str:
    """``journal:fsync#7`` of the recorded run as the case numbers it (ids count per world)."""
    head, _, number = point_id.rpartition("#")
    role, _, op = head.partition(":")
    shifted = int(number) - recorded.get((role, op), 0) + case.get((role, op), 0)
    return f"{head}#{shifted}"


def _sent(incoming: IncomingRequest) -> tuple[object, ...]:
    return (incoming.method, incoming.url, tuple(sorted(incoming.headers.items())),
            incoming.body)


class _Joiner:
    """Stops a recovering incarnation at the first request the recorded run also sent."""

    def __init__(self, run: _CaseRun, recording: Recording) -> None:
        self.run, self.recording = run, recording
        run.world.on_request = self.at_request

    def at_request(self, incoming: IncomingRequest, incarnation: int) -> None:
        world = self.run.world
        if incarnation < 2 or _sent(incoming) not in self.recording.requests_sent or \
                world.in_flight() or not _no_secrets(self.run, self.recording.base):
            return
        mark = self.recording.marks.get(world.state_key(incoming))
        if mark is None:
            return
        self.run.joined = Join(self.recording.base, mark, Mark.of(world), incarnation)
        witness = world.ledger.witness
        if isinstance(witness, PipeWitness):  # checked against the run it joins
            witness.joined(world.ledger.stream, sent_bytes(incoming))
        world.incarnations.crash()  # whatever the stopped agent still tries is refused
        raise Rejoined


# -- the per-process store of recordings ------------------------------------------------

_RECORDINGS: OrderedDict[tuple[object, ...], Recording] = OrderedDict()
# Recordings made per scenario and agent (:func:`agent_kind`): a factory built anew for
# every case (a hook returning a fresh closure) would record the scenario again and
# again; past this, that agent's cases replay. Counted per agent, not per scenario: other
# agents that ran the scenario earlier in the process (mutants, say) must not change how
# this one's cases run.
_MADE: Counter[tuple[object, ...]] = Counter()
_REMADE_AT_MOST: Final = 3


def recording_for(case: Case, scenario: Scenario, factory: AgentUnderTest
                  ) -> Recording | None:
    """The recording of ``case``'s scenario for ``factory``, made on first use.

    None when the scenario was recorded too often already (see :data:`_MADE`).
    """
    where: tuple[object, ...] = (scenario.name, scenario.model_dump_json(), case.seed,
                                 str(case.source))
    key: tuple[object, ...] = (*where, factory_key(factory))
    try:
        hash(key)
    except TypeError:  # an unhashable factory object: the recording keeps it alive
        key = (*where, "id", id(factory))
    if next(reversed(_RECORDINGS), key) != key:  # another scenario's cases begin
        for other in _RECORDINGS.values():
            other.forget_crash_states()
    recording = _RECORDINGS.get(key)
    if recording is None:
        made = (*where, agent_kind(factory))
        if _MADE[made] >= _REMADE_AT_MOST:
            return None
        _MADE[made] += 1
        recording = _RECORDINGS[key] = Recording(case, scenario, factory)
        while len(_RECORDINGS) > _KEPT:
            _RECORDINGS.popitem(last=False)
    _RECORDINGS.move_to_end(key)
    return recording


def agent_kind(factory: object) -> object:
    """What a factory built anew for each case shares with the ones built before it.

    A closure that :func:`factory_key` tells apart by value is its own kind (two mutants
    are two agents), and so is an object that compares by value (``--agent`` entries); one
    it cannot tell apart (a value that does not hash, an object equal only to itself) is
    known by its code, else its type.

    >>> def make(flaw):
    ...     return lambda ports: (flaw, ports)
    >>> agent_kind(make("a")) == agent_kind(make("a")) != agent_kind(make("b"))
    True
    >>> def unkeyed(flaws):
    ...     return lambda ports: (flaws, ports)
    >>> agent_kind(unkeyed(["a"])) == agent_kind(unkeyed(["b"]))
    True
    >>> from harness.intercept import PlainEntry
    >>> entry = agent_kind(PlainEntry("a:main"))
    >>> entry == agent_kind(PlainEntry("a:main")) != agent_kind(PlainEntry("b:main"))
    True
    """
    key = factory_key(factory)
    if key is not factory:
        return key
    if type(factory).__eq__ is not object.__eq__:
        try:
            hash(factory)
        except TypeError:
            pass
        else:
            return factory
    return getattr(factory, "__code__", None) or type(factory)


def factory_key(factory: object) -> object:
    """What tells two agent factories apart: a closure by its code and what it closed over.

    A hook may build its factory anew for every case (``minimal_factory("no_fsync")``);
    two such closures with the same code and equal values build the same agent.

    >>> def make(flaw):
    ...     return lambda ports: (flaw, ports)
    >>> factory_key(make("a")) == factory_key(make("a")) != factory_key(make("b"))
    True
    """
    code = getattr(factory, "__code__", None)
    if code is None:
        return factory
    cells = getattr(factory, "__closure__", None) or ()
    try:
        key = (code, tuple(c.cell_contents for c in cells), getattr(factory, "__defaults__", None))
        hash(key)
    except (TypeError, ValueError):  # an unhashable value, or a cell still empty
        return factory
    return key


def unrecorded_parts(scenario: Scenario) -> list[str]:
    """The parts of ``scenario``'s world a recording neither copies nor keys: it replays.

    Background jobs and cancels are driven by timers on the case's event loop, and the
    goal service's lease epochs rise with every restart; a copy of the world taken at a
    persistence point would lose the first, and a key that leaves the second out could
    rejoin a run under another epoch. Such scenarios run each case from its start.
    """
    return [part for part, used in (("jobs", bool(scenario.jobs)),
                                    ("cancels", bool(scenario.cancels)),
                                    ("goal", scenario.goal is not None)) if used]


def explored_trace(case: Case, scenario: Scenario, factory: AgentUnderTest
                   ) -> tuple[Trace, Exploration] | None:
    """``case``'s trace from its scenario's recording, or None where it must replay."""
    crash = case.crash
    if crash is None:
        return _uncrashed(case, scenario, factory)
    if crash is None or crash.during_recovery or crash.crash_class in ERROR_CLASSES or \
            scenario.crash.then is not None or unrecorded_parts(scenario):
        return None
    recording = recording_for(case, scenario, factory)
    if recording is None or recording.fallback is not None:
        return None
    world = recording.crashed_world(crash)
    if world is None:
        life = recording.first_life(crash)
        if life is not None:
            return _from_first_life(case, scenario, factory, recording, life)
        return _from_its_start(case, scenario, factory, recording)
    run = _CaseRun(case, scenario, factory, world=world)
    run.incarnations.append(_Incarnation(1, "run", crashed_at=crash.point_id,
                                         ended_at=world.clock.now()))
    state, at_crash, trace = _restart_of_an_earlier_case(run, recording)
    if trace is not None:
        return recording.checked(case, scenario, trace, "shared")
    _Joiner(run, recording)
    checked = recording.checked(case, scenario, run.run(),
                                "rejoined" if run.joined is not None else "recorded")
    if checked[1] != "replayed":
        recording.remember(state, checked[0], at_crash, rejoined=run.joined is not None)
    return checked


def _restart_of_an_earlier_case(run: _CaseRun, recording: Recording
                                ) -> tuple[str, Mark, Trace | None]:
    """The crashed ``run``'s state key and mark, and the trace it takes when an earlier
    case crashed into the same state (that case's restart is this one's); None: none did,
    or its restart read a secret this run's files never held."""
    run._look_for_secrets(1)  # what incarnation 1's files held when it crashed, as a replay
    world = run.world
    state, at_crash = world.crash_state_key(), Mark.of(world)
    shared = recording.crash_states.get(state)
    if shared is None or not _no_secrets(run, shared[0]):
        return state, at_crash, None
    return state, at_crash, Join(*shared, at_crash, incarnation=2, source_incarnation=2,
                                 trimmed=True).trace(run)


def _from_its_start(case: Case, scenario: Scenario, factory: AgentUnderTest,
                    recording: Recording) -> tuple[Trace, Exploration]:
    """A case whose point no copy holds (a stream open, a tool call running there): its
    first incarnation runs from the start, and from its crash on it is as a case from a
    copy. Its crash state is keyed as theirs are: an earlier case's restart from the same
    state is its restart, and its own restart is kept for the cases after it.

    Such a case reports how it would have run had it been the first from its state
    (``replayed``, or ``rejoined`` where that restart rejoined the recorded run): which
    case ran first depends on what else its process ran, and a case's result must not.
    """
    run = _CaseRun(case, scenario, factory)
    _Joiner(run, recording)
    run.world.disk.keep_crash_source = True
    recording.first_lives_run += 1
    crashed: list[tuple[str, Mark]] = []
    shared_from: list[str] = []

    def at_first_crash() -> bool:
        world = run.world
        if world.in_flight():
            return False  # as a copy is never taken there: the crash may not be whole yet
        recording.keep_first_life(case, scenario, run)
        state, at_crash = world.crash_state_key(), Mark.of(world)
        crashed.append((state, at_crash))
        shared = recording.crash_states.get(state)
        if shared is None or not _no_secrets(run, shared[0]):
            return False
        run.joined = Join(*shared, at_crash, incarnation=2, source_incarnation=2, trimmed=True)
        shared_from.append(state)
        return True

    run.at_first_crash = at_first_crash
    trace = run.run()
    if shared_from:
        trace, how = recording.checked(case, scenario, trace, "shared")
        if how == "replayed":
            return trace, how
        return trace, "rejoined" if shared_from[0] in recording.rejoining else "replayed"
    rejoined = run.joined is not None
    checked = recording.checked(case, scenario, trace, "rejoined" if rejoined else "replayed")
    if crashed and recording.fallback is None:
        state, at_crash = crashed[0]
        recording.remember(state, checked[0], at_crash, rejoined=rejoined)
    return checked


def _from_first_life(case: Case, scenario: Scenario, factory: AgentUnderTest,
                     recording: Recording, life: FirstLife) -> tuple[Trace, Exploration]:
    """A case whose point no copy holds, in another class than the case whose first
    incarnation ``life`` is: that incarnation, with the files this class leaves, then the
    restart as :func:`_from_its_start` runs it (and says so alike)."""
    crash = case.crash
    assert crash is not None
    world = life.world.copy()
    world.disk.crashed_as(_crash_class(crash.crash_class))
    world.disk.plan = _first_plan(crash)
    recording.first_lives_shared += 1
    run = _CaseRun(case, scenario, factory, world=world)
    run.incarnations.append(replace(life.incarnation))
    run.held = list(life.held)
    state, at_crash, shared_trace = _restart_of_an_earlier_case(run, recording)
    if shared_trace is not None:
        checked = recording.checked(case, scenario, shared_trace, "inflight",
                                    "rejoined" if state in recording.rejoining else "replayed")
        if recording.fallback is None:
            recording.shared_restarts += 1
        return checked
    _Joiner(run, recording)
    trace = run.run()
    rejoined = run.joined is not None
    checked = recording.checked(case, scenario, trace, "inflight",
                                "rejoined" if rejoined else "replayed")
    if recording.fallback is None:
        recording.remember(state, checked[0], at_crash, rejoined=rejoined)
    return checked


def _uncrashed(case: Case, scenario: Scenario, factory: AgentUnderTest
               ) -> tuple[Trace, Exploration] | None:
    """The case without a crash is the recorded run itself: run once, it serves both.

    A scenario is recorded for its crash cases anyway, and its uncrashed run is what
    the recording runs; the case that has no crash takes that run's trace (made the
    first time either is asked for) instead of running the agent again. Only where
    the scenario's crash cases could use the recording.
    """
    if scenario.crash.points == "none" or unrecorded_parts(scenario):
        return None
    recording = recording_for(case, scenario, factory)
    if recording is None:
        return None
    # The recording may have been made for one of the crash cases: the same run.
    base = recording.base
    return with_parts(replace(base, case=case.case_id), parts_of(base)), "replayed"

