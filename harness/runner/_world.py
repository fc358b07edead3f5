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

This module holds the world itself: its state, its ports, its world events and
crash points, and its copies. Its parts live beside it, one job each: what a
scenario declares, built as fakes (:mod:`harness.runner._world_build`); what the
provider was asked and answered, recorded as it streams
(:mod:`harness.runner._world_streams`); the tools as an incarnation holds them
(:mod:`harness.runner._world_tools`); and where intercepted requests go
(:mod:`harness.runner._world_route`).

Example::

    world = World(scenario, seed=7)
    ports = world.ports(incarnation=1)
"""


from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

import fakes
from fakes import (
    LOOP_BOUND_BEHAVIOURS,
    CrashClass,
    CrashDisk,
    CrashPlan,
    FakeProvider,
    IncomingRequest,
    Latency,
    ScriptedResponse,
    ToolLedger,
    VirtualClock,
    chat_view,
    wait_before_headers,
)
from harness._errors import AgentEntryError
from harness.intercept import foreign_line, sends_by_itself
from harness.ports import AgentPorts, Dialect, ToolContext, ToolInvocation, asked_for
from harness.runner._goal_seen import revisions_in
from harness.runner._jobs import WorldJobs
from harness.runner._ledger_pipe import StreamTiming, installed, sent_bytes
from harness.runner._model import ScriptedModel
from harness.runner._sampling import carries_loop, output_limit_of, sampling_of
from harness.runner._world_build import (
    CALENDAR_ORIGIN,
    cache_config,
    client_base_url,
    fault_plan,
    provider_conditions,
    quota_of,
    world_tool,
)
from harness.runner._world_route import WorldRoute
from harness.runner._world_streams import (
    Accepted,
    Pending,
    RecordedBody,
    StreamEvent,
    StreamRecord,
    after_cuts,
    answered_record,
    refused_record,
    request_record,
    sent_replies,
    stop_sequences,
)
from harness.runner._world_tools import (
    PURE_KINDS,
    JumpClock,
    RecordingTool,
    finish_without_loop,
    functions_on_stack,
    loop_bound_message,
)
from harness.scenario import Scenario, fake_verifier
from harness.trace import (
    AskedOutput,
    ChildEnvironment,
    GoalInRequest,
    InlineResult,
    InvocationRecord,
    RefusedTurn,
    RequestRecord,
    SampledRequest,
)

STATE_DIR = "/state"
# Crash classes that raise an OSError at the point instead of killing the process.
DISK_ERRORS = frozenset({"eio_on_write", "eio_on_fsync", "enospc_on_write"})


@dataclass(frozen=True)
class WorldCrash:
    """Crash the agent at a world event (see :mod:`harness.runner._points`)."""

    point_id: str
    crash_class: CrashClass


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
        if isinstance(self.clock, VirtualClock):
            self.clock.process_dead = self.incarnations.dead
        self.ledger = ToolLedger(self.clock, self.incarnations)
        witness = installed()
        if witness is not None:  # a sealed worker: each effect is told to the harness
            self.ledger.witness, self.ledger.stream = witness, witness.opened()
            if isinstance(self.clock, VirtualClock):  # and each move of its clock
                self.clock.witness, self.clock.stream = witness, self.ledger.stream
                if self.clock.now():  # the harness's begins at 0
                    with witness.holding():
                        witness.moved(self.ledger.stream, self.clock.now(), "start", 0.0)
        self.model = ScriptedModel(scenario, self._applied_effects, self._calls_run_before,
                                   self._calls_answered_before)
        self._faults = fault_plan(scenario)
        # The phrases of the scenario's looping answers (retry:doom-loop); none: not noted.
        self._loop_phrases = tuple(dict.fromkeys(
            f.phrase for faults in self._faults.values() for f in faults
            if isinstance(f, fakes.DoomLoop)))
        self.provider = FakeProvider(scenario.dialect, self._respond, self._faults, seed=seed,
                                     cache=cache_config(scenario),
                                     latency=Latency() if scenario.provider.latency else None,
                                     conditions=provider_conditions(scenario),
                                     quota=quota_of(scenario), clock=self.clock.now,
                                     calendar_origin=CALENDAR_ORIGIN,
                                     models=_listed_models(scenario))
        self.tools = {name: world_tool(name, spec, self.ledger)
                      for name, spec in scenario.tools.items()}
        self.requests: list[Pending] = []
        self.invocations: list[InvocationRecord] = []
        # What each child of a subprocess tool received, by name (env:children).
        self._children: list[ChildEnvironment] = []
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
        # The stop sequences the agent's requests asked for, in the order first asked.
        self.stop_sequences: dict[str, None] = {}
        # Requests refused for tool calls without results, named by their turn (the report's).
        self.refused_turns: list[RefusedTurn] = []
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
        return tuple(GoalInRequest(p.record.index, p.goal_revisions) for p in self.requests)

    def sampled_requests(self) -> tuple[SampledRequest, ...] | None:
        """How each request sampled, for a scenario with a looping answer (retry:doom-loop);
        ``None`` elsewhere, so those traces keep their digests."""
        if not self._loop_phrases:
            return None
        return tuple(SampledRequest(p.record.index, p.sampling, p.carries_loop)
                     for p in self.requests)

    def asked_outputs(self) -> tuple[AskedOutput, ...] | None:
        """The output limit each request asked for, for a scenario that declares the model's
        ceiling (S6:limit); ``None`` elsewhere, so those traces keep their digests."""
        if self.scenario.provider.max_output_tokens is None:
            return None
        return tuple(AskedOutput(p.record.index, p.output_limit) for p in self.requests)

    def inline_results(self) -> tuple[InlineResult, ...] | None:
        """Each tool result each request carried and its size, for a scenario that declares
        ``expect.max_tool_result_chars`` (context:tool-output); ``None`` elsewhere, so those
        traces keep their digests."""
        if self.scenario.expect.max_tool_result_chars is None:
            return None
        return tuple(InlineResult(p.record.index, call_id, chars)
                     for p in self.requests for call_id, chars in p.result_sizes)

    def loop_phrases(self) -> tuple[str, ...] | None:
        """The phrases of the scenario's looping answers; ``None`` when it has none."""
        return self._loop_phrases or None

    def note_child_environment(self, record: ChildEnvironment) -> None:
        """A subprocess tool is starting a child with this environment."""
        self._children.append(record)

    def child_environments(self) -> tuple[ChildEnvironment, ...] | None:
        """What each child of a subprocess tool received, for a scenario with such a tool
        (empty: none started); ``None`` elsewhere, so those traces keep their digests."""
        if not any(t.behaviour.kind == "subprocess" for t in self.tools.values()) and \
                not any(job.env is not None for job in self.scenario.jobs.values()):
            return None
        return tuple(self._children)

    def goal_tick(self) -> None:
        """Land the user's goal edits that are due before the next thing the world sees."""
        if self.goals is not None:
            self.goals.tick()

    def disk_error_raised(self) -> bool:
        """Whether the case's disk error (EIO, ENOSPC, not a crash) has been raised yet."""
        plan, fired = self.disk.plan, self.disk.fired
        return plan is not None and fired is not None and plan.crash_class in DISK_ERRORS

    def _calls_run_before(self) -> set[str]:
        """The ids of the calls an incarnation before the current one ran."""
        current = self.incarnations.current
        return {i.call_id for i in self.invocations
                if i.incarnation < current and not i.refused}

    def _calls_answered_before(self) -> dict[str, list[Sequence[object]]]:
        """The ids of the calls an incarnation before the current one got whole, each with
        the conversations (the requests' messages) it was the answer to."""
        current = self.incarnations.current
        answered: dict[str, list[Sequence[object]]] = {}
        if current == 1:
            return answered
        for p in self.requests:
            if p.record.incarnation >= current or not p.got_whole:
                continue
            assert p.response is not None
            for call in p.response.tool_calls:
                answered.setdefault(call.call_id, []).append(p.messages())
        return answered

    def _recalled(self) -> list[object]:
        """What the scripted model reads of the incarnations so far once the next one asks
        (:meth:`_calls_run_before`, :meth:`_calls_answered_before`): the calls they ran,
        and the calls they got whole, each with the conversation it answered.

        A restart that asks a turn again in another conversation gets new call ids where
        the crashed incarnation had got that turn's answer whole, the same ids where it
        had not: two crashes that leave the same files but not the same answers read
        whole (mid-stream, and once the stream ended) do not restart alike.
        """
        ran = sorted({i.call_id for i in self.invocations if not i.refused})
        answered = sorted((call.call_id, p.conversation_key()) for p in self.requests
                          if p.got_whole and p.response is not None
                          for call in p.response.tool_calls)
        return [ran, answered]

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
        tools = {name: RecordingTool(self, tool) for name, tool in self.tools.items()}
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
                                 base_url=client_base_url(self.provider.base_url))

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
        record = StreamRecord(accepted.pending, self.clock, self.stream_event,
                              self.stream_ended_teller())
        stream = RecordedBody(accepted.plan.steps, record, request)
        return httpx.Response(accepted.plan.status, headers=list(accepted.plan.headers),
                              stream=stream)

    def accept(self, incoming: IncomingRequest, incarnation: int) -> Accepted | None:
        """Record ``incoming`` and plan its answer; None when a dead incarnation sent it.

        Any transport (the ports' client, the intercepted httpx and httpx2 ones)
        serves a request through here, so the record is the same whoever sent it.
        """
        if incarnation != self.incarnations.current or self.incarnations.crashed:
            # A request from a dead process never reaches the model (DESIGN §3).
            self._refuse(incarnation, incoming)
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
        response = after_cuts(self._last_response, faults)
        # The conversation as its family reads it (Responses and Gemini as Chat Completions).
        body = seen.chat if seen.chat is not None else seen.json
        if seen.refused_turn is not None:
            self.refused_turns.append(RefusedTurn(len(self.requests) + 1, *seen.refused_turn))
        self.stop_sequences.update(dict.fromkeys(stop_sequences(seen.json)))
        now = self._arrived(incoming, incarnation, seen.turn, seen.attempt)
        record = answered_record(seen, plan, response, body, index=len(self.requests) + 1,
                           incarnation=incarnation, now=now, faults=kinds)
        if self.scenario.provider.context_window is not None or self.scenario.training_data:
            # The compaction checks and train:no-patch read each reply a request carried.
            record = replace(record, replies=sent_replies(self.scenario.dialect, seen.json))
        pending = Pending(record, response, body, cut_short=plan.cut_short)
        if self.goals is not None and self.scenario.provider.context_window is not None:
            pending.goal_revisions = revisions_in(self.goals.revisions, seen.json)
        if self._loop_phrases:
            pending.sampling = sampling_of(seen.json)
            pending.carries_loop = carries_loop(self.scenario.dialect, body, self._loop_phrases)
        if self.scenario.provider.max_output_tokens is not None:
            pending.output_limit = output_limit_of(seen.json)
        if self.scenario.expect.max_tool_result_chars is not None:
            pending.result_sizes = tuple((r.call_id, len(r.text)) for r in (
                record.replies or sent_replies(self.scenario.dialect, seen.json)))
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

    def stream_event(self, pending: Pending, event: StreamEvent) -> None:
        """A 200 stream's first event arrived, or the whole of it did."""
        record = pending.record
        if record.status != 200 or record.turn <= 0:
            return
        if event == "after_response" and pending.delivered_bytes < record.planned_bytes:
            return
        self.reach(f"{event}:{record.turn}")

    def stream_ended_teller(self) -> Callable[[Pending, str, StreamTiming], None] | None:
        """In a sealed worker, what tells the harness how a stream's timing ended."""
        return None if self.ledger.witness is None else self._stream_ended

    def _stream_ended(self, pending: Pending, how: str, timing: StreamTiming) -> None:
        witness = self.ledger.witness
        if witness is not None and timing.ended_at is not None:
            witness.ended(self.ledger.stream, pending.record.index, how,
                          first=timing.first_byte_at, end=timing.ended_at,
                          silence=timing.longest_silence, size=timing.delivered_bytes)

    def invocation_started(self, record: InvocationRecord) -> float:
        """When the invocation ``record`` (its start time unset) started; in a sealed
        worker, told to the harness with it (:mod:`harness.runner._ledger_pipe`)."""
        witness = self.ledger.witness
        if witness is None:
            return self.clock.now()
        return witness.called(self.ledger.stream, record.seq, tool=record.tool,
                              kind=record.kind, call_id=record.call_id,
                              arguments=record.arguments, incarnation=record.incarnation,
                              refused=record.refused, after_error=record.after_disk_error,
                              now=self.clock.now)

    def invocation_settled(self, record: InvocationRecord, *, left: bool) -> float | None:
        """When the invocation ``record`` (its end unset) ended, None where ``left``
        running; in a sealed worker, told to the harness with it."""
        witness = self.ledger.witness
        if witness is None:
            return None if left else self.clock.now()
        return witness.settled(self.ledger.stream, record.seq, outcome=record.outcome,
                               result=record.result, now=None if left else self.clock.now)

    def effect_applied(self, tool: str) -> None:
        """A side effect of ``tool`` is in the ledger (the K-th of that tool)."""
        count = self.ledger.tool_counts().get(tool, 0)
        if count:
            self.reach(f"after_tool:{tool}#{count}")

    # -- an unchanged agent's tools and files --------------------------------------
    async def call_tool(self, tool: str, arguments: dict[str, Any], incarnation: int) -> Any:
        """Run scenario tool ``tool`` for an agent that called its target function.

        A subprocess tool's function called with an ``env`` mapping hands the child that
        environment, as ``subprocess.run(..., env=...)`` would: it is the child's, not an
        argument of the model's call, and never reaches the trace (env:children).
        """
        arguments, handed = _handed_environment(self.tools[tool], arguments)
        recording, context = self._tool_call(tool, arguments, incarnation, self.clock)
        return await recording.run(arguments, replace(context, env=handed))

    def call_tool_blocking(self, tool: str, arguments: dict[str, Any], incarnation: int) -> Any:
        """The same from blocking code: the tool's own waits move the clock directly."""
        behaviour = self.tools[tool].behaviour.kind
        if behaviour in LOOP_BOUND_BEHAVIOURS:
            # Refused before it starts: with no loop running, the wait would fail inside
            # asyncio and read as the agent's own exception.
            raise AgentEntryError(loop_bound_message(tool, behaviour))
        recording, context = self._tool_call(tool, arguments, incarnation, JumpClock(self.clock))
        return finish_without_loop(recording.run(arguments, context), tool)

    def _tool_call(self, tool: str, arguments: dict[str, Any], incarnation: int,
                   clock: Any) -> tuple[RecordingTool, ToolContext]:
        call_id, turn = self.match_call(tool, arguments, incarnation)
        invocation = ToolInvocation(f"turn_{turn}", call_id, tool, arguments)
        context = ToolContext(invocation, f"exec_{self._invocation_seq + 1}", self.run_id,
                              incarnation, clock)
        return RecordingTool(self, self.tools[tool]), context

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
        candidates = [(call, p.record.turn) for p in reversed(self.requests)
                      if p.response is not None for call in p.response.tool_calls
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
        last = next((p for p in reversed(self.requests) if p.record.incarnation == incarnation),
                    None)
        if last is None or last.response is None or last.ended == "open":
            return None
        ran = {i.call_id for i in self.invocations if i.incarnation == incarnation}
        waiting = list(dict.fromkeys(call.name for call in last.response.tool_calls
                                     if call.call_id not in ran))
        if len(waiting) > 1:
            on_stack = functions_on_stack()
            waiting = [name for name in waiting if name in on_stack]
        return waiting[0] if len(waiting) == 1 else None

    def files(self) -> Any:
        """The agent's own files on this world's crash disk (one working folder per case)."""
        if self._files is None:
            from harness.intercept import AgentFiles

            # The folder the run started in is shown as the working folder, read through.
            self._files = AgentFiles(self.disk, start_folder=os.getcwd())
        return self._files

    def databases(self) -> Any:
        """The agent's SQLite databases, kept on this world's crash disk."""
        if self._databases is None:
            from harness.intercept import WorldDatabases

            self._databases = WorldDatabases(self.disk, start=self.files().start)
        return self._databases

    def last_request_body(self, incarnation: int) -> Mapping[str, object] | None:
        """The JSON of the newest request ``incarnation`` got answered (its conversation)."""
        for pending in reversed(self.requests):
            if pending.record.incarnation == incarnation and pending.body is not None:
                return pending.body
        return None

    def route(self, incarnation: int) -> WorldRoute:
        """Where ``incarnation``'s intercepted HTTP requests go (see :mod:`harness.intercept`)."""
        return WorldRoute(self, incarnation)

    def _refuse(self, incarnation: int, incoming: IncomingRequest | None = None) -> None:
        now = self._arrived(incoming, incarnation, 0, 0)
        record = refused_record(len(self.requests) + 1, incarnation, now)
        self.requests.append(Pending(record, ended_at=now, ended="refused"))

    def _arrived(self, incoming: IncomingRequest | None, incarnation: int, turn: int,
                 attempt: int) -> float:
        """The virtual time a request the world records arrived at; in a sealed worker,
        told to the harness with it (:mod:`harness.runner._ledger_pipe`)."""
        witness = self.ledger.witness
        if witness is None:
            return self.clock.now()
        sent = b"" if incoming is None else sent_bytes(incoming)
        return witness.asked(self.ledger.stream, self.provider.dialect, turn=turn,
                             attempt=attempt, incarnation=incarnation, sent=sent,
                             now=self.clock.now)

    def request_records(self) -> tuple[RequestRecord, ...]:
        return tuple(request_record(p, self.scenario.dialect) for p in self.requests)

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
        the clock, provider, tools, world events and what the model recalls of the
        crashed incarnations (:meth:`_recalled`) the restarted agent meets are the
        same. Where and how the crash happened is left out: two crashes that leave
        the same state have the same future.
        """
        return self._key(["crashed", self._recalled()], 0, self.disk.crash_state_key())

    def _key(self, head: list[object], turn: int, disk: bytes) -> str:
        from hashlib import sha256

        provider = self.provider
        parts: list[object] = [
            *head, self.clock.now(), len(provider.requests),
            sorted((t, n) for t, n in provider._attempts.items() if t >= turn),
            # Not zipped strictly: an agent that changes the ledger in its process leaves
            # the two lists apart, and the harness's own ledger judges that (``judge``).
            len(self.ledger.details),
            [(e.tool, e.key, e.idempotent, repr(detail))
             for e, detail in zip(self.ledger.effects, self.ledger.details, strict=False)],
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
        memo: dict[int, Any] = {id(self.scenario): self.scenario, id(self._faults): self._faults,
                                id(self.ledger.witness): self.ledger.witness}
        shared: list[object] = [*self.invocations, *self.ledger.effects, *self.disk.points,
                                *self.provider.requests, self.model._by_turn]
        shared += [p for p in self.requests if p.ended != "open"]
        # Values nothing changes once made: the provider's checked fault plan, wire
        # dialect and conditions, each tool's behaviour, the scripted responses, the
        # requests' records (frozen), and the last conversation seen (only read, to share
        # the next request's equal messages).
        provider = self.provider
        shared += [provider._faults, provider._wire, provider.conditions,
                   provider._last_turns, provider._last_chat, self._last_response,
                   *(tool.behaviour for tool in self.tools.values())]
        shared += [p.response for p in self.requests] + [p.record for p in self.requests]
        for item in shared:
            memo[id(item)] = item
        hooks = self.on_event, self.on_request, self.on_tool_settled, self.disk.observer
        # The copy has none.
        self.on_event = self.on_request = self.on_tool_settled = self.disk.observer = None
        try:
            copied = copy.deepcopy(self, memo)
        finally:
            self.on_event, self.on_request, self.on_tool_settled, self.disk.observer = hooks
        witness = self.ledger.witness
        if witness is not None:  # the copy's effects, requests and time from here on are its own
            copied.ledger.stream = witness.forked(self.ledger.stream)
            if copied.clock.witness is not None:
                copied.clock.stream = copied.ledger.stream
        return copied

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


def _handed_environment(tool: fakes.WorldTool, arguments: dict[str, Any]
                        ) -> tuple[dict[str, Any], dict[str, str] | None]:
    """The arguments without the environment a subprocess tool's caller handed, and that."""
    env = arguments.get("env")
    if tool.behaviour.kind != "subprocess" or not isinstance(env, Mapping):
        return arguments, None
    rest = {name: value for name, value in arguments.items() if name != "env"}
    return rest, {str(name): str(value) for name, value in env.items()}


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def _parsed(text: str) -> object:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return None


# The names the runner's other modules import from here (some now live in the parts).
__all__ = ["DISK_ERRORS", "PURE_KINDS", "STATE_DIR", "World", "WorldCrash", "fault_plan"]


def _listed_models(scenario: Scenario) -> tuple[str, ...]:
    """The models ``GET /v1/models`` lists: the scenario's, then its backup when it has one."""
    provider = scenario.provider
    backup = () if provider.backup_model is None else (provider.backup_model,)
    return (provider.model, *backup)
