"""The outside world of one case, built from a scenario; it survives every crash.

DESIGN §3: a run has two domains. The agent process (the agent object, its
memory, its unsynced bytes) dies at a crash; the world — the virtual clock,
the fake provider and the requests it saw, the tool ledger, the durable bytes of
the :class:`~fakes.CrashDisk` — carries on. Each incarnation gets new
:class:`~harness.agent.AgentPorts` over the same world, with its own HTTP
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
import functools
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

import fakes
from fakes import (
    BROKEN_STREAM_FAULTS,
    CacheConfig,
    CacheOutcome,
    CrashDisk,
    CrashPlan,
    FakeProvider,
    Hang,
    IncomingRequest,
    Latency,
    Reset,
    ScriptedResponse,
    Step,
    Text,
    ToolLedger,
    VirtualClock,
    WorldTool,
    play_steps,
    wait_before_headers,
)
from harness.agent import ATTEMPT_ID_HEADER, RETRY_LAYER_HEADER, AgentPorts, ToolContext
from harness.runner._model import UNSCRIPTED_TEXT, ScriptedModel
from harness.scenario import Scenario
from harness.scenario import ToolSpec as ScenarioTool
from harness.trace import (
    CacheRecord,
    Delivery,
    InvocationRecord,
    RequestRecord,
    SegmentVersion,
    SentCall,
    SentUsage,
)

STATE_DIR = "/state"
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


def world_tool(name: str, spec: ScenarioTool, ledger: ToolLedger) -> WorldTool:
    """The fake tool a scenario declares."""
    behaviour = None
    if spec.behaviour is not None:
        behaviour = fakes.Behaviour(spec.behaviour.kind, **spec.behaviour.fake_fields())
    return WorldTool(spec.kind, ledger, name=name, behaviour=behaviour,
                     concurrency_safe=spec.concurrency_safe)


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
    ended: str = "open"  # eof, reset, closed, cancelled, refused
    cut_short: bool = False  # the plan itself ends in a reset or a hang
    model: str | None = None  # as the request named it
    cache: CacheOutcome | None = None  # the prompt cache's verdict, when it is on
    attempt_id: str | None = None  # the agent's own id for the attempt, if it sent one
    retry_layer: str | None = None


class World:
    """Everything that outlives the agent; see the module docstring."""

    def __init__(self, scenario: Scenario, *, seed: int, plan: CrashPlan | None = None) -> None:
        self.scenario = scenario
        self.seed = seed
        self.clock = VirtualClock()
        self.disk = CrashDisk(plan=plan, seed=seed)
        self.incarnations = self.disk.incarnations
        self.ledger = ToolLedger(self.clock, self.incarnations)
        self.model = ScriptedModel(scenario)
        self._faults = fault_plan(scenario)
        self.provider = FakeProvider(scenario.dialect, self._respond, self._faults, seed=seed,
                                     cache=_cache_config(scenario),
                                     latency=Latency() if scenario.provider.latency else None)
        self.tools = {name: world_tool(name, spec, self.ledger)
                      for name, spec in scenario.tools.items()}
        self.requests: list[_Pending] = []
        self.invocations: list[InvocationRecord] = []
        self._last_response: ScriptedResponse | None = None
        self._invocation_seq = 0

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
        if incarnation != self.incarnations.current or self.incarnations.crashed:
            # A request from a dead process never reaches the model (DESIGN §3).
            self._refuse(incarnation)
            return httpx.Response(599, content=b"dead incarnation")
        incoming = IncomingRequest(request.method, str(request.url), dict(request.headers),
                                   request.content)
        self._last_response = None
        plan = self.provider.plan(incoming)
        seen = self.provider.requests[-1]
        faults = self._faults.get((seen.turn, seen.attempt), ())
        pending = _Pending(len(self.requests) + 1, incarnation, seen.turn, seen.attempt,
                           self.clock.now(), plan.status, tuple(f.kind for f in faults),
                           len(plan.body), _after_cuts(self._last_response, faults))
        pending.cut_short = any(isinstance(step, Reset | Hang) for step in plan.steps)
        pending.model = _requested_model(seen.json)
        pending.cache = seen.cache
        pending.attempt_id = seen.headers.get(ATTEMPT_ID_HEADER)
        pending.retry_layer = seen.headers.get(RETRY_LAYER_HEADER)
        self.requests.append(pending)
        await wait_before_headers(plan.before_headers)
        stream = _RecordedBody(plan.steps, pending, self.clock, request)
        return httpx.Response(plan.status, headers=list(plan.headers), stream=stream)

    def _refuse(self, incarnation: int) -> None:
        now = self.clock.now()
        self.requests.append(_Pending(len(self.requests) + 1, incarnation, 0, 0, now, 599, (),
                                      0, None, None, now, 0, "refused"))

    def request_records(self) -> tuple[RequestRecord, ...]:
        return tuple(_record(p, self.scenario.dialect) for p in self.requests)

    def files_digest(self) -> str:
        """sha256 over every file's current bytes, by path (what recovery wrote)."""
        from hashlib import sha256

        digest = sha256()
        for path, data in self.disk.files().items():
            digest.update(path.encode() + b"\0" + sha256(data).digest())
        return digest.hexdigest()


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

    def __init__(self, steps: tuple[Step, ...], pending: _Pending, clock: VirtualClock,
                 request: httpx.Request) -> None:
        self._steps = steps
        self._pending = pending
        self._clock = clock
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = self._pending
        try:
            async for chunk in self._play():
                if pending.first_byte_at is None:
                    pending.first_byte_at = self._clock.now()
                pending.delivered_bytes += len(chunk)
                yield chunk
        except asyncio.CancelledError:
            self._end("cancelled")
            raise
        except httpx.ReadError:
            self._end("reset")
            raise
        except GeneratorExit:
            self._end("closed")
            raise
        self._end("eof")

    def _play(self) -> AsyncIterator[bytes]:
        return play_steps(self._steps, self._reset)

    def _reset(self) -> Exception:
        return httpx.ReadError("[Errno 104] Connection reset by peer", request=self._request)

    def _end(self, how: str) -> None:
        if self._pending.ended == "open":
            self._pending.ended = how
            self._pending.ended_at = self._clock.now()

    async def aclose(self) -> None:
        self._end("closed")


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
    )


def _sent_usage(p: _Pending) -> SentUsage | None:
    """What the stream said it cost: the cache's verdict when the cache is on, else the script's."""
    if p.response is None:
        return None
    usage = p.response.usage
    if p.cache is not None:
        usage = p.cache.usage(fakes.output_tokens(p.response))
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
        seq = world.next_invocation_seq()
        started = world.clock.now()
        alive = context.incarnation == world.incarnations.current and not \
            world.incarnations.crashed
        args = json.loads(json.dumps(dict(arguments), sort_keys=True, default=str))
        outcome = "refused"
        try:
            result = await self._tool.run(arguments, context)
            outcome = "ok"
            return result
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception:
            outcome = "error"
            raise
        finally:
            world.invocations.append(InvocationRecord(
                seq, self._tool.name, self._tool.kind, context.invocation.call_id, args,
                context.incarnation, started, world.clock.now(), not alive,
                outcome if alive else "refused"))
