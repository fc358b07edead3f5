"""The outside world of one case, built from a scenario; it survives every crash.

DESIGN §3: a run has two domains. The agent process (the agent object, its
memory, its unsynced bytes) dies at a crash; the world — the virtual clock,
the fake provider and the requests it saw, the tool ledger, the durable bytes of
the :class:`~fakes.CrashDisk` — carries on. Each incarnation gets new
:class:`~harness.ports.AgentPorts` over the same world, with its own HTTP
client and tool handles that the world refuses once that incarnation is dead.

The world also records what it saw, for the trace: every request with what was
sent back (complete or not, truncated or not, which faults), every tool
invocation with its arguments and incarnation.

Example::

    world = World(scenario, seed=7)
    ports = world.ports(incarnation=1)
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal

import httpx

import fakes
from fakes import (
    BEHAVIOURS,
    BROKEN_STREAM_FAULTS,
    LOOP_BOUND_BEHAVIOURS,
    CacheConfig,
    CacheOutcome,
    CrashClass,
    CrashDisk,
    CrashPlan,
    DeadIncarnationError,
    FakeProvider,
    IncomingRequest,
    Latency,
    ResponsePlan,
    ScriptedResponse,
    Step,
    Text,
    ToolLedger,
    VirtualClock,
    WorldTool,
    chat_view,
    play_steps,
    wait_before_headers,
)
from harness._errors import AgentEntryError
from harness.agent import ATTEMPT_ID_HEADER, RETRY_LAYER_HEADER, StreamConfig, parse_retry_after
from harness.intercept import (
    Served,
    absorbed,
    calling_library,
    foreign_line,
    sends_by_itself,
    telemetry_answer,
    telemetry_line,
)
from harness.ports import SPECS, AgentPorts, Dialect, ToolContext, ToolInvocation, asked_for
from harness.runner._goal_seen import revisions_in
from harness.runner._jobs import WorldJobs
from harness.runner._model import UNSCRIPTED_TEXT, ScriptedModel
from harness.runner._observed import observed_transcript
from harness.runner._usage_seen import usage_seen
from harness.scenario import Scenario, ToolDeclaration, fake_verifier
from harness.trace import (
    CacheRecord,
    Delivery,
    GoalInRequest,
    InvocationOutcome,
    InvocationRecord,
    RequestRecord,
    SegmentVersion,
    SentCall,
    SentReply,
    SentUsage,
)

STATE_DIR = "/state"
# Crash classes that raise an OSError at the point instead of killing the process.
DISK_ERRORS = frozenset({"eio_on_write", "eio_on_fsync", "enospc_on_write"})
# Unix time of virtual t=0, the fakes' calendar origin, to read an HTTP-date Retry-After.
_CALENDAR_ORIGIN = StreamConfig().clock_epoch_unix
PURE_KINDS = fakes.PURE_TOOL_KINDS


def fault_plan(scenario: Scenario) -> dict[tuple[int, int], tuple[fakes.Fault, ...]]:
    """The scenario's faults as fakes, keyed (turn, attempt), in file order.

    >>> fault_plan(Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
    ...                     expect={"stop_state": "complete"}))
    {}
    """
    plan: dict[tuple[int, int], list[fakes.Fault]] = {}
    for fault in scenario.faults:
        fake = fakes.FAULT_KINDS[fault.kind](**fault.fake_fields())
        plan.setdefault((fault.at.turn, fault.at.attempt), []).append(fake)
    return {key: tuple(faults) for key, faults in plan.items()}


def _quota(scenario: Scenario) -> fakes.Quota | None:
    declared = scenario.provider.quota
    return None if declared is None else fakes.Quota(**declared.model_dump())


def world_tool(name: str, spec: ToolDeclaration, ledger: ToolLedger) -> WorldTool:
    """The fake tool a scenario declares."""
    behaviour = None
    if spec.behaviour is not None:
        behaviour = fakes.Behaviour(spec.behaviour.kind, **spec.behaviour.fake_fields())
    return WorldTool(spec.kind, ledger, name=name, behaviour=behaviour,
                     concurrency_safe=spec.concurrency_safe)


StreamEvent = Literal["mid_stream", "after_response"]


@dataclass(frozen=True)
class WorldCrash:
    """Crash the agent at a world event (see :mod:`harness.runner._points`)."""

    point_id: str
    crash_class: CrashClass


@dataclass
class _Pending:
    """A request in flight: the fields the stream fills in as it is played."""

    index: int
    incarnation: int
    turn: int
    attempt: int
    started_at: float
    status: int
    faults: tuple[str, ...]
    planned_bytes: int
    response: ScriptedResponse | None
    first_byte_at: float | None = None
    ended_at: float | None = None
    delivered_bytes: int = 0
    ended: str = "open"  # eof, reset, closed, cancelled, refused, timeout
    cut_short: bool = False  # a reset or a hang kept bytes of the answer from the client
    model: str | None = None  # as the request named it
    cache: CacheOutcome | None = None  # the prompt cache's verdict, when it is on
    attempt_id: str | None = None  # the agent's own id for the attempt, if it sent one
    retry_layer: str | None = None
    retry_after: float | None = None  # the wait the answer asked for, in seconds
    last_chunk_at: float | None = None
    longest_silence: float = 0.0
    delivered: bytearray | None = None  # the bytes the client was sent, for usage_seen
    body: Mapping[str, object] | None = None  # the request's JSON, for the observed transcript
    condition: str | None = None  # context_overflow or outage, when one answered
    unfit: tuple[tuple[str, str], ...] = ()  # (kind, why): fakes.ProviderRequest.unfit
    prompt_tokens: int | None = None
    replies: tuple[SentReply, ...] = ()
    goal_revisions: tuple[int, ...] = ()  # I5:context: the goal revisions it told the model


@dataclass(frozen=True)
class Accepted:
    """A request the world took: the provider's plan, and the record the stream fills in."""

    plan: ResponsePlan
    pending: _Pending


class World:
    """Everything that outlives the agent; see the module docstring."""

    def __init__(self, scenario: Scenario, *, seed: int, plan: CrashPlan | None = None,
                 world_crash: WorldCrash | None = None, clock: Any = None) -> None:
        self.scenario = scenario
        self.seed = seed
        # A served world (harness serve) reads real time; every other world is virtual.
        self.clock: VirtualClock = clock if clock is not None else VirtualClock()
        self.disk = CrashDisk(plan=plan, seed=seed)
        self.incarnations = self.disk.incarnations
        self.ledger = ToolLedger(self.clock, self.incarnations)
        self.model = ScriptedModel(scenario, self._applied_effects)
        self._faults = fault_plan(scenario)
        self.provider = FakeProvider(scenario.dialect, self._respond, self._faults, seed=seed,
                                     cache=_cache_config(scenario),
                                     latency=Latency() if scenario.provider.latency else None,
                                     conditions=provider_conditions(scenario),
                                     quota=_quota(scenario), clock=self.clock.now,
                                     calendar_origin=_CALENDAR_ORIGIN,
                                     models=(scenario.provider.model,))
        self.tools = {name: world_tool(name, spec, self.ledger)
                      for name, spec in scenario.tools.items()}
        self.requests: list[_Pending] = []
        self.invocations: list[InvocationRecord] = []
        self._last_response: ScriptedResponse | None = None
        self._invocation_seq = 0
        # World events in the order first reached (the agent-neutral crash points).
        self.events: list[str] = []
        self._events_seen: set[str] = set()
        self._world_crash = world_crash
        self.crashed_at: str | None = None
        # Requests to hosts that are not a fake provider (refused, reported), each naming
        # the library that sent it; and the telemetry answered instead (information).
        self.foreign: list[str] = []
        # How many of them each tool made while it ran as the agent's own function (no
        # target: the harness did not run it), in the order first seen.
        self.foreign_in_tools: dict[str, int] = {}
        # Requests to the fake provider in another dialect than the scenario's (answered 404).
        self.misdialed: list[str] = []
        self.telemetry: list[str] = []
        self.absorb: tuple[str, ...] = tuple(scenario.absorb)
        self._files: Any = None
        self._databases: Any = None
        self.returned = False  # the current incarnation's run() has returned
        # Told of every world event as it is first reached (a recording run keeps the
        # world's state there), and of every request a living incarnation sends before
        # the provider sees it (a case may stop there: see harness.runner._explore).
        self.on_event: Callable[[str], None] | None = None
        self.on_request: Callable[[IncomingRequest, int], None] | None = None
        # Told when a tool call's record is final (ended, or cut by a crash at its
        # after_tool event): where a crash there leaves the world.
        self.on_tool_settled: Callable[[], None] | None = None
        self.jobs = WorldJobs(self)  # background jobs and cancels (seed 002 §19.4)
        self.goals = _goal_service(self)

    def _position(self) -> tuple[int, int]:
        """Requests and tool invocations so far: where a goal-service event stands among them."""
        return len(self.requests), self._invocation_seq

    def goal_in_requests(self) -> tuple[GoalInRequest, ...] | None:
        """What each request told the model of the goal, for a goal under a context window
        (I5:context); ``None`` elsewhere, so those traces keep their digests."""
        if self.goals is None or self.scenario.provider.context_window is None:
            return None
        return tuple(GoalInRequest(p.index, p.goal_revisions) for p in self.requests)

    def goal_tick(self) -> None:
        """Land the user's goal edits that are due before the next thing the world sees."""
        if self.goals is not None:
            self.goals.tick()

    def disk_error_raised(self) -> bool:
        """Whether the case's disk error (EIO, ENOSPC, not a crash) has been raised yet."""
        plan, fired = self.disk.plan, self.disk.fired
        return plan is not None and fired is not None and plan.crash_class in DISK_ERRORS

    def _applied_effects(self) -> dict[str, int]:
        """Side effects in the ledger per tool: what the scripted model may look at."""
        return self.ledger.tool_counts()

    def next_invocation_seq(self) -> int:
        """Numbers invocations in the order they started (they may end out of order)."""
        self._invocation_seq += 1
        return self._invocation_seq

    @property
    def run_id(self) -> str:
        return f"{self.scenario.name}-{self.seed}"

    # -- ports ----------------------------------------------------------------
    def ports(self, incarnation: int) -> AgentPorts:
        """The ports of ``incarnation``: a fresh HTTP client and tool handles over this world."""
        tools = {name: _RecordingTool(self, tool) for name, tool in self.tools.items()}
        return AgentPorts(
            http=self._http_client(incarnation),
            endpoint=self.provider.endpoint,
            dialect=self.scenario.dialect,
            disk=self.disk.for_incarnation(incarnation),
            state_dir=STATE_DIR,
            tools=tools,
            clock=self.clock,
            seed=self.seed,
            incarnation=incarnation,
            run_id=self.run_id,
            jobs=self.jobs.port(incarnation),
            goals=None if self.goals is None else self.goals.port(incarnation),
        )

    def _http_client(self, incarnation: int) -> httpx.AsyncClient:
        async def handle(request: httpx.Request) -> httpx.Response:
            return await self._serve(request, incarnation)

        return httpx.AsyncClient(transport=httpx.MockTransport(handle),
                                 base_url=_client_base_url(self.provider.base_url))

    # -- provider -------------------------------------------------------------
    def _respond(self, request: fakes.ProviderRequest) -> ScriptedResponse:
        response = self.model.respond(request)
        self._last_response = response
        return response

    async def _serve(self, request: httpx.Request, incarnation: int) -> httpx.Response:
        await request.aread()
        incoming = IncomingRequest(request.method, str(request.url), dict(request.headers),
                                   request.content)
        accepted = self.accept(incoming, incarnation)
        if accepted is None:
            return httpx.Response(599, content=b"dead incarnation")
        # The ports' client has no connect phase: an unaccepted connection is a wait.
        await wait_before_headers(accepted.plan.before_connect + accepted.plan.before_headers)
        stream = _RecordedBody(accepted.plan.steps, accepted.pending, self, request)
        return httpx.Response(accepted.plan.status, headers=list(accepted.plan.headers),
                              stream=stream)

    def accept(self, incoming: IncomingRequest, incarnation: int) -> Accepted | None:
        """Record ``incoming`` and plan its answer; None when a dead incarnation sent it.

        Any transport (the ports' client, the intercepted httpx and httpx2 ones)
        serves a request through here, so the record is the same whoever sent it.
        """
        if incarnation != self.incarnations.current or self.incarnations.crashed:
            # A request from a dead process never reaches the model (DESIGN §3).
            self._refuse(incarnation)
            return None
        self.goal_tick()
        if self.on_request is not None:
            self.on_request(incoming, incarnation)
        self._last_response = None
        plan = self.provider.plan(incoming)
        seen = self.provider.requests[-1]
        # A fault this request's stream could not take was left out: it is not one it met.
        left_out = {kind for kind, _ in seen.unfit}
        faults = tuple(f for f in self._faults.get((seen.turn, seen.attempt), ())
                       if f.kind not in left_out)
        # A quota's 429 is named beside the scripted faults: it came from load, not the script.
        kinds = tuple(f.kind for f in faults) + ((f"quota:{seen.quota}",) if seen.quota else ())
        pending = _Pending(len(self.requests) + 1, incarnation, seen.turn, seen.attempt,
                           self.clock.now(), plan.status, kinds,
                           len(plan.body), _after_cuts(self._last_response, faults))
        pending.cut_short = plan.cut_short
        pending.model = _requested_model(seen.chat or seen.json)
        pending.cache = seen.cache
        pending.attempt_id = seen.headers.get(ATTEMPT_ID_HEADER)
        pending.retry_layer = seen.headers.get(RETRY_LAYER_HEADER)
        # The conversation as its family reads it (Responses and Gemini as Chat Completions).
        pending.body = seen.chat if seen.chat is not None else seen.json
        pending.retry_after = asked_wait(plan.headers, self.clock.now())
        pending.condition, pending.prompt_tokens = seen.condition, seen.prompt_tokens
        pending.unfit = seen.unfit
        if self.scenario.provider.context_window is not None:
            pending.replies = sent_replies(self.scenario.dialect, seen.json)
            if self.goals is not None:
                pending.goal_revisions = revisions_in(self.goals.revisions, seen.json)
        self.requests.append(pending)
        if seen.turn > 0:
            self.reach(f"before_request:{seen.turn}")
        return Accepted(plan, pending)

    # -- world events and their crash points ------------------------------------
    def tool_call_ids(self, tool: str) -> list[str]:
        """The ids of every call of ``tool`` the model has sent, oldest first."""
        return [c.call_id for p in self.requests if p.response is not None
                for c in p.response.tool_calls if c.name == tool]

    def reach(self, event: str) -> None:
        """Note that the world reached ``event``; crash here if the case says so.

        Only the first time counts: the crash is one-shot, and a restarted agent
        that reaches the same event again is not crashed twice.
        """
        if event in self._events_seen:
            return
        self._events_seen.add(event)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        plan = self._world_crash
        if plan is None or plan.point_id != event:
            return
        self._world_crash = None
        self.crashed_at = event
        raise self.disk.crash_at_event(event, plan.crash_class)

    def arm_crash(self, crash: WorldCrash) -> None:
        """Crash at ``crash``'s event when it is first reached from now on (a second crash)."""
        self._world_crash = crash

    def stream_event(self, pending: _Pending, event: StreamEvent) -> None:
        """A 200 stream's first event arrived, or the whole of it did."""
        if pending.status != 200 or pending.turn <= 0:
            return
        if event == "after_response" and pending.delivered_bytes < pending.planned_bytes:
            return
        self.reach(f"{event}:{pending.turn}")

    def effect_applied(self, tool: str) -> None:
        """A side effect of ``tool`` is in the ledger (the K-th of that tool)."""
        count = self.ledger.tool_counts().get(tool, 0)
        if count:
            self.reach(f"after_tool:{tool}#{count}")

    # -- an unchanged agent's tools and files --------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], incarnation: int) -> Any:
        """Run scenario tool ``tool`` for an agent that called its target function."""
        recording, context = self._tool_call(tool, arguments, incarnation, self.clock)
        return await recording.run(arguments, context)

    def call_tool_blocking(self, tool: str, arguments: dict[str, Any], incarnation: int) -> Any:
        """The same from blocking code: the tool's own waits move the clock directly."""
        behaviour = self.tools[tool].behaviour.kind
        if behaviour in LOOP_BOUND_BEHAVIOURS:
            # Refused before it starts: with no loop running, the wait would fail inside
            # asyncio and read as the agent's own exception.
            raise AgentEntryError(loop_bound_message(tool, behaviour))
        recording, context = self._tool_call(tool, arguments, incarnation, _JumpClock(self.clock))
        return _finish_without_loop(recording.run(arguments, context), tool)

    def _tool_call(self, tool: str, arguments: dict[str, Any], incarnation: int,
                   clock: Any) -> tuple[_RecordingTool, ToolContext]:
        call_id, turn = self.match_call(tool, arguments, incarnation)
        invocation = ToolInvocation(f"turn_{turn}", call_id, tool, arguments)
        context = ToolContext(invocation, f"exec_{self._invocation_seq + 1}", self.run_id,
                              incarnation, clock)
        return _RecordingTool(self, self.tools[tool]), context

    def match_call(self, tool: str, arguments: Mapping[str, Any], incarnation: int
                   ) -> tuple[str, int]:
        """The model's call an invocation answers: the harness matches it, not the agent.

        The newest call of ``tool`` with exactly these arguments that this
        incarnation has not run yet; else the newest whose arguments these extend
        (:func:`harness.ports.asked_for`); else the newest such call with other
        arguments (I7 then says the arguments differ); else an unmatched id.
        """
        wanted = _canonical(dict(arguments))
        used = {i.call_id for i in self.invocations if i.incarnation == incarnation}
        candidates = [(call, p.turn) for p in reversed(self.requests) if p.response is not None
                      for call in p.response.tool_calls
                      if call.name == tool and call.call_id not in used]
        for call, turn in candidates:
            if _canonical(_parsed(call.argument_text)) == wanted:
                return call.call_id, turn
        # An agent may add arguments of its own (an idempotency key) to the model's.
        for call, turn in candidates:
            if asked_for(_parsed(call.argument_text), dict(arguments)):
                return call.call_id, turn
        if candidates:
            return candidates[0][0].call_id, candidates[0][1]
        return f"unmatched_{len(self.invocations) + 1}", 0

    def note_foreign(self, what: str, library: str, incarnation: int) -> None:
        """List an outside call, and count it against the tool it was made in, if one was
        running as the agent's own function (see :meth:`_untargeted_tool_running`)."""
        self.foreign.append(foreign_line(what, library))
        if sends_by_itself(library):  # its own telemetry, whatever runs around it
            return
        tool = self._untargeted_tool_running(incarnation)
        if tool is not None:
            self.foreign_in_tools[tool] = self.foreign_in_tools.get(tool, 0) + 1

    def _untargeted_tool_running(self, incarnation: int) -> str | None:
        """The tool the agent is running itself now, when that is clear; else None.

        An agent runs the tools the model's last answer asked for between that answer
        and its next request. A call the harness ran (a target) has an invocation;
        the others run the agent's own function. Of several, the one whose name is a
        function on the stack; none, or more than one: not clear.
        """
        last = next((p for p in reversed(self.requests) if p.incarnation == incarnation), None)
        if last is None or last.response is None or last.ended == "open":
            return None
        ran = {i.call_id for i in self.invocations if i.incarnation == incarnation}
        waiting = list(dict.fromkeys(call.name for call in last.response.tool_calls
                                     if call.call_id not in ran))
        if len(waiting) > 1:
            on_stack = _functions_on_stack()
            waiting = [name for name in waiting if name in on_stack]
        return waiting[0] if len(waiting) == 1 else None

    def files(self) -> Any:
        """The agent's own files on this world's crash disk (one working folder per case)."""
        if self._files is None:
            from harness.intercept import AgentFiles

            self._files = AgentFiles(self.disk)
        return self._files

    def databases(self) -> Any:
        """The agent's SQLite databases, kept on this world's crash disk."""
        if self._databases is None:
            from harness.intercept import WorldDatabases

            self._databases = WorldDatabases(self.disk)
        return self._databases

    def last_request_body(self, incarnation: int) -> Mapping[str, object] | None:
        """The JSON of the newest request ``incarnation`` got answered (its conversation)."""
        for pending in reversed(self.requests):
            if pending.incarnation == incarnation and pending.body is not None:
                return pending.body
        return None

    def route(self, incarnation: int) -> WorldRoute:
        """Where ``incarnation``'s intercepted HTTP requests go (see :mod:`harness.intercept`)."""
        return WorldRoute(self, incarnation)

    def _refuse(self, incarnation: int) -> None:
        now = self.clock.now()
        self.requests.append(_Pending(len(self.requests) + 1, incarnation, 0, 0, now, 599, (),
                                      0, None, None, now, 0, "refused"))

    def request_records(self) -> tuple[RequestRecord, ...]:
        return tuple(_record(p, self.scenario.dialect) for p in self.requests)

    def in_flight(self, *, but_the_last_request: bool = False) -> bool:
        """Whether a stream is open or a tool call is running (a crash now cuts them).

        ``but_the_last_request``: leave out the request just accepted, not yet
        answered (a crash at its ``before_request`` leaves it as it is: no response
        exists for the client to close).
        """
        requests = self.requests[:-1] if but_the_last_request else self.requests
        return any(p.ended == "open" for p in requests) or \
            any(i.outcome == "running" for i in self.invocations)

    def state_key(self, incoming: IncomingRequest) -> str:
        """What the rest of a run depends on when ``incoming`` is about to be answered.

        Two worlds with one key answer this request and every later one alike: the
        same request, virtual time, answers still to come (the provider's request
        count names them; attempts of this turn and later ones pick their faults; the
        prompt cache), tool state, world events already reached and disk. The
        history that led there (which incarnation, how many crashes) is left out.
        """
        turn = _turn_of(self.scenario.dialect, incoming.body)
        request: list[object] = [incoming.method, incoming.url,
                                 sorted(incoming.headers.items()), incoming.body]
        return self._key(request, turn, self.disk.state_key())

    def crash_state_key(self) -> str:
        """What the next incarnation's run depends on, once a crash has been applied.

        Two crashed worlds with one key restart alike: the same files survived, and
        the clock, provider, tools and world events the restarted agent meets are the
        same. Where and how the crash happened is left out: two crashes that leave
        the same state have the same future.
        """
        return self._key(["crashed"], 0, self.disk.crash_state_key())

    def _key(self, head: list[object], turn: int, disk: bytes) -> str:
        from hashlib import sha256

        provider = self.provider
        parts: list[object] = [
            *head, self.clock.now(), len(provider.requests),
            sorted((t, n) for t, n in provider._attempts.items() if t >= turn),
            [(e.tool, e.key, e.idempotent, repr(e.detail)) for e in self.ledger.effects],
            repr(self.ledger.world), sorted(self._events_seen), provider.quota.state(),
        ]
        cache = provider.cache
        if cache is not None:  # its state has no public face: read it as it is
            parts += [cache._rng.getstate(), sorted(cache._entries.items()), cache._written]
        digest = sha256(repr(parts).encode())
        digest.update(disk)
        return digest.hexdigest()

    def copy(self) -> World:
        """An independent copy of this world, sharing only what is never changed again.

        Records already closed (answered requests, settled invocations, effects, points)
        and the scenario are shared; everything that can still change is copied.
        """
        memo: dict[int, Any] = {id(self.scenario): self.scenario, id(self._faults): self._faults}
        shared: list[object] = [*self.invocations, *self.ledger.effects, *self.disk.points,
                                *self.provider.requests, self.model._by_turn]
        shared += [p for p in self.requests if p.ended != "open"]
        # Values nothing changes once made: the provider's checked fault plan, wire
        # dialect and conditions, each tool's behaviour, the scripted responses, and the
        # last conversation seen (only read, to share the next request's equal messages).
        provider = self.provider
        shared += [provider._faults, provider._wire, provider.conditions,
                   provider._last_turns, provider._last_chat, self._last_response,
                   *(tool.behaviour for tool in self.tools.values())]
        shared += [p.response for p in self.requests]
        for item in shared:
            memo[id(item)] = item
        hooks = self.on_event, self.on_request, self.on_tool_settled, self.disk.observer
        # The copy has none.
        self.on_event = self.on_request = self.on_tool_settled = self.disk.observer = None
        try:
            return copy.deepcopy(self, memo)
        finally:
            self.on_event, self.on_request, self.on_tool_settled, self.disk.observer = hooks

    def files_digest(self) -> str:
        """sha256 over every file's current bytes, by path (what recovery wrote)."""
        from hashlib import sha256

        digest = sha256()
        for path, data in self.disk.files().items():
            digest.update(path.encode() + b"\0" + sha256(data).digest())
        return digest.hexdigest()


def _goal_service(world: World) -> fakes.GoalService | None:
    """The goal service of a scenario with a ``goal`` block (seed 002 §19.3)."""
    goal = world.scenario.goal
    if goal is None:
        return None
    return fakes.GoalService(goal.fake_goal(), fake_verifier(world.scenario.verifier),
                             clock=world.clock, incarnations=world.incarnations,
                             applied=world._applied_effects, position=world._position,
                             edits=goal.fake_edits(),
                             lease_seconds=goal.lease_seconds or fakes.LEASE_SECONDS)


@functools.cache
def _client_base_url(base_url: str) -> httpx.URL:
    """``base_url`` parsed once, ending in ``/`` as httpx would make it for each client.

    Parsing it again for every incarnation's client cost more than the rest of
    building the client.
    """
    url = httpx.URL(base_url)
    if url.raw_path.endswith(b"/"):
        return url
    return url.copy_with(raw_path=url.raw_path + b"/")


def _after_cuts(response: ScriptedResponse | None, faults: tuple[fakes.Fault, ...]
                ) -> ScriptedResponse | None:
    """The response as sent: the provider applies argument cuts before rendering."""
    if response is None:
        return None
    for fault in faults:
        if isinstance(fault, fakes.TruncatedToolArguments | fakes.InvalidToolArguments):
            response = fault.apply_response(response)
    return response


class _RecordedBody(httpx.AsyncByteStream):
    """Plays a plan's steps and notes how far the client got, on the virtual clock."""

    def __init__(self, steps: tuple[Step, ...], pending: _Pending, world: World,
                 request: httpx.Request) -> None:
        self._steps = steps
        self._record = _StreamRecord(world, pending)
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        record, first = self._record, True
        try:
            async for chunk in self._play():
                record.on_chunk(chunk)
                yield chunk
                if first:
                    record.after_first_chunk()
                first = False
        except asyncio.CancelledError:
            record.on_end("cancelled")
            raise
        except httpx.ReadError:
            record.on_end("reset")
            raise
        except GeneratorExit:
            record.on_end("closed")
            raise
        record.on_end("eof")

    def _play(self) -> AsyncIterator[bytes]:
        return play_steps(self._steps, self._reset)

    def _reset(self) -> Exception:
        return httpx.ReadError("[Errno 104] Connection reset by peer", request=self._request)

    async def aclose(self) -> None:
        self._record.on_end("closed")


def _record(p: _Pending, dialect: str) -> RequestRecord:
    response = p.response
    delivery = _delivery(p)
    text = "".join(part.text for part in response.parts if isinstance(part, Text)) \
        if response else ""
    calls = tuple(SentCall(c.call_id, c.name, c.argument_text)
                  for c in (response.tool_calls if response else ()))
    usage = _sent_usage(p)
    reported = delivery == "complete" and usage is not None and not (
        dialect == "openai" and "no_usage_chunk" in p.faults)
    return RequestRecord(
        index=p.index, incarnation=p.incarnation, turn=p.turn, attempt=p.attempt,
        started_at=p.started_at, first_byte_at=p.first_byte_at, ended_at=p.ended_at,
        status=p.status, faults=p.faults, planned_bytes=p.planned_bytes,
        delivered_bytes=p.delivered_bytes, delivery=delivery,
        truncated=response is not None and response.finish == "length",
        finish=response.finish if response else None,
        model=p.model or (response.model if response else None), text=text, calls=calls,
        usage=usage, usage_reported=reported, unscripted=text == UNSCRIPTED_TEXT,
        cache=_cache_record(p.cache), attempt_id=p.attempt_id, retry_layer=p.retry_layer,
        retry_after=p.retry_after, longest_silence=p.longest_silence,
        usage_seen=usage if reported else _seen(dialect, p, delivery),
        offered_tools=offered_tools(p.body),
        prompt_tokens=p.prompt_tokens, replies=p.replies, condition=p.condition,
        unfit_faults=p.unfit,
    )


def _seen(dialect: str, p: _Pending, delivery: str) -> SentUsage | None:
    """The usage among a broken stream's bytes (a whole stream's is its reported usage)."""
    if delivery not in ("partial", "broken") or not p.delivered:
        return None
    seen = usage_seen(dialect, bytes(p.delivered))
    return None if seen is None else SentUsage(seen[0], seen[1])


def asked_wait(headers: tuple[tuple[str, str], ...], now: float) -> float | None:
    """The wait in seconds an answer's retry headers ask for (``None``: none asked).

    >>> asked_wait((("retry-after", "20"),), now=0.0)
    20.0
    """
    return parse_retry_after(dict(headers), now_unix=_CALENDAR_ORIGIN + now)


def provider_conditions(scenario: Scenario) -> fakes.ProviderConditions:
    """The scenario's context window and outages, as the fake provider holds them."""
    declared = scenario.provider
    window = fakes.ContextWindow(declared.context_window) if declared.context_window else None
    outages = tuple(fakes.Outage(o.start_seconds, o.end_seconds, o.answer)
                    for o in declared.outages)
    return fakes.ProviderConditions(window, outages)


def sent_replies(dialect: str, body: Mapping[str, object] | None) -> tuple[SentReply, ...]:
    """Every tool reply a request carried, by call id, as the model would read it."""
    return tuple(SentReply(m.call_id, m.text) for m in observed_transcript(dialect, body)
                 if m.role == "tool" and m.call_id is not None)


def offered_tools(body: Mapping[str, object] | None) -> tuple[str, ...] | None:
    """The names of the tools a request offers the model, in either family's shape.

    >>> offered_tools({"tools": [{"type": "function", "function": {"name": "mail"}},
    ...                          {"name": "notes", "input_schema": {}}]})
    ('mail', 'notes')
    >>> offered_tools({"messages": []}) is None
    True
    """
    tools = body.get("tools") if body is not None else None
    if not isinstance(tools, list):
        return None
    names = []
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            if isinstance(name, str):
                names.append(name)
    return tuple(names)


def _sent_usage(p: _Pending) -> SentUsage | None:
    """What the stream said it cost: the cache's verdict when the cache is on, else the script's."""
    if p.response is None:
        return None
    usage = p.response.usage
    if p.cache is not None:
        usage = p.cache.usage(fakes.output_tokens(p.response))
    elif p.prompt_tokens is not None:
        # Under a context window the provider bills the prompt it measured.
        return SentUsage(p.prompt_tokens, usage.output_tokens, usage.cache_read_tokens,
                         usage.cache_write_tokens)
    return SentUsage(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                     usage.cache_write_tokens)


def _cache_record(outcome: CacheOutcome | None) -> CacheRecord | None:
    if outcome is None:
        return None
    return CacheRecord(miss=outcome.miss, write_5m_tokens=outcome.cache_write_5m_tokens,
                       write_1h_tokens=outcome.cache_write_1h_tokens,
                       versions=tuple(SegmentVersion(*v) for v in sorted(outcome.versions.items())))


def _cache_config(scenario: Scenario) -> CacheConfig | None:
    provider = scenario.provider
    if not provider.prompt_cache:
        return None
    return CacheConfig(server_miss_rate=provider.server_miss_rate)


def _requested_model(body: Mapping[str, object] | None) -> str | None:
    model = body.get("model") if body is not None else None
    return model if isinstance(model, str) else None


def _delivery(p: _Pending) -> Delivery:
    if p.ended == "refused":
        return "refused"
    if p.status != 200:
        return "http_error"
    if p.cut_short or p.delivered_bytes < p.planned_bytes:
        return "partial"
    if BROKEN_STREAM_FAULTS.intersection(p.faults):
        return "broken"
    return "complete"


class _RecordingTool:
    """A world tool as one incarnation holds it: every invocation goes in the world's log."""

    def __init__(self, world: World, tool: WorldTool) -> None:
        self._world = world
        self._tool = tool

    @property
    def name(self) -> str:
        return self._tool.name

    @property
    def concurrency_safe(self) -> bool:
        return self._tool.concurrency_safe

    @property
    def idempotent(self) -> bool:
        return self._tool.idempotent

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        world = self._world
        world.goal_tick()
        seq = world.next_invocation_seq()
        started = world.clock.now()
        alive = context.incarnation == world.incarnations.current and not \
            world.incarnations.crashed
        args = json.loads(json.dumps(dict(arguments), sort_keys=True, default=str))
        outcome: InvocationOutcome = "refused"
        after_error = world.disk_error_raised()

        returned: str | None = None

        def record(ended_at: float | None, outcome: InvocationOutcome) -> InvocationRecord:
            return InvocationRecord(seq, self._tool.name, self._tool.kind,
                                    context.invocation.call_id, args, context.incarnation,
                                    started, ended_at, not alive,
                                    outcome if alive else "refused", after_error, returned)

        # Noted at the start, so a call the agent walked away from and that never
        # settles is still seen running (J7); replaced when it ends.
        slot = len(world.invocations)
        world.invocations.append(record(None, "running"))
        try:
            result = await self._tool.run(arguments, context)
            outcome = "ok"
            returned = json.dumps(result, sort_keys=True, default=str)
            if self._tool.kind not in PURE_KINDS:
                world.effect_applied(self._tool.name)
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            # Ended only by the loop's teardown after run() returned: left running.
            left = world.returned
            world.invocations[slot] = record(None if left else world.clock.now(),
                                             "abandoned" if left else outcome)
            if world.on_tool_settled is not None:
                world.on_tool_settled()


def _functions_on_stack() -> set[str]:
    """The names of the functions running in this thread now."""
    names: set[str] = set()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        names.add(frame.f_code.co_name)
        frame = frame.f_back
    return names


def _dialect_called(url: str, scenario_dialect: str) -> str | None:
    """The dialect whose API ``url`` calls; None for a host no fake provider serves.

    Chat Completions and Responses share a host, so the path decides; a path no
    dialect of the host knows goes to the scenario's provider (which answers 404).
    """
    parsed = httpx.URL(url)
    on_host = [dialect for dialect, spec in SPECS.items() if spec.host == parsed.host]
    called = [dialect for dialect in on_host if fakes.WIRE[dialect].route(parsed.path)]
    if called:
        return called[0]
    if scenario_dialect in on_host:
        return scenario_dialect
    return on_host[0] if on_host else None


class WorldRoute:
    """An incarnation's intercepted HTTP requests, served by the world (any transport)."""

    def __init__(self, world: World, incarnation: int) -> None:
        self._world = world
        self._incarnation = incarnation
        self.clock = world.clock

    def serve(self, request: IncomingRequest) -> Served | None:
        world = self._world
        dialect = _dialect_called(request.url, world.scenario.dialect)
        if dialect is None:
            return self._outside(request)
        if dialect != world.scenario.dialect:
            world.misdialed.append(f"{request.method} {httpx.URL(request.url).path} "
                                   f"({dialect})")
            return _wrong_dialect(world.scenario.dialect, request)
        accepted = world.accept(request, self._incarnation)
        if accepted is None:  # a dead incarnation: the process is gone, so is its request
            raise DeadIncarnationError(f"request {request.url}", self._incarnation,
                                       world.incarnations.current)
        plan = accepted.plan
        return Served(plan.status, plan.headers, plan.before_headers, plan.steps,
                      _StreamRecord(world, accepted.pending), plan.before_connect)


    def _outside(self, request: IncomingRequest) -> Served | None:
        """Telemetry is answered and listed; any other outside call is refused and listed."""
        world = self._world
        entry = absorbed(request.method, request.url, world.absorb)
        if entry is None:
            world.note_foreign(f"{request.method} {request.url}", calling_library(),
                               self._incarnation)
            return None
        if threading.current_thread() in fakes.CASE_THREADS:
            # A thread the case did not start (a trace exporter started at import)
            # sends when real time says so: answered, but not the case's record.
            world.telemetry.append(telemetry_line(request.method, request.url, entry))
        return telemetry_answer(entry)

    def refuse(self, what: str, library: str) -> None:
        """Note a refused socket (a name lookup, a connection) the agent's process tried."""
        self._world.note_foreign(what, library, self._incarnation)


def _wrong_dialect(dialect: str, request: IncomingRequest) -> Served:
    path = httpx.URL(request.url).path
    message = (f"this scenario speaks {dialect}; the agent called {path} "
               f"(declare the dialects the agent speaks to skip such scenarios)")
    body = json.dumps({"error": {"type": "not_found_error", "message": message}}).encode()
    headers = (("content-type", "application/json"),)
    return Served(404, headers, (), (fakes.Emit(body),), None)


class _StreamRecord:
    """Notes how far the client read a served stream, and reaches the stream's world events.

    Every transport's body reports here (the ports' client and the intercepted
    httpx and httpx2 ones), so the record of a stream is the same whoever read it.
    """

    def __init__(self, world: World, pending: _Pending) -> None:
        self._world = world
        self._pending = pending

    def on_chunk(self, data: bytes) -> None:
        pending = self._pending
        if pending.first_byte_at is None:
            pending.first_byte_at = self._world.clock.now()
        self._note_silence()
        pending.delivered_bytes += len(data)
        if pending.delivered is None:
            pending.delivered = bytearray()
        pending.delivered += data

    def after_first_chunk(self) -> None:
        self._world.stream_event(self._pending, "mid_stream")

    def on_end(self, how: str) -> None:
        pending = self._pending
        if pending.ended != "open":
            return
        self._note_silence()
        pending.ended = how
        pending.ended_at = self._world.clock.now()
        if how in ("eof", "closed"):
            # An SDK closes the stream once it read the terminal event, without
            # asking for an end it knows is there: the whole answer is in its hands.
            self._world.stream_event(pending, "after_response")

    def _note_silence(self) -> None:
        """Measure the gap since the last chunk: what an idle watchdog must bound (S1)."""
        pending, now = self._pending, self._world.clock.now()
        if pending.last_chunk_at is not None:
            pending.longest_silence = max(pending.longest_silence, now - pending.last_chunk_at)
        if pending.first_byte_at is not None:
            pending.last_chunk_at = now


class _JumpClock:
    """The world clock for tools called from blocking code: a wait moves time at once."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock

    def now(self) -> float:
        return self._clock.now()

    async def sleep(self, seconds: float) -> None:
        self._clock.advance(seconds)


def _finish_without_loop(coro: Coroutine[Any, Any, Any], tool: str) -> Any:
    """Run a tool that never suspends (instant, slow, failing) to its end, with no loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AgentEntryError(loop_bound_message(tool))


def loop_bound_message(tool: str, behaviour: str | None = None) -> str:
    """Why ``tool`` cannot run (with ``behaviour``) from blocking code, and the two fixes."""
    waits = (f"has behaviour {behaviour!r}, which waits" if behaviour is not None
             else "waits")
    return (f"tool {tool!r} {waits} on the event loop, but "
            "its target is a plain function called from blocking code: make the target "
            "async, or give the tool another behaviour (one of "
            f"{', '.join(k for k in BEHAVIOURS if k not in LOOP_BOUND_BEHAVIOURS)})")


def _turn_of(dialect: Dialect, body: bytes) -> int:
    """The turn a request body asks for, as the provider counts it (0: not a chat request)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return 0
    if not isinstance(parsed, dict):
        return 0
    messages = chat_view(dialect, parsed).get("messages")
    if not isinstance(messages, list):
        return 0
    return 1 + sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def _parsed(text: str) -> object:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return None
