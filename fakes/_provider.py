"""The fake provider's transport-neutral core: a request in, a timed plan of bytes out.

:class:`FakeProvider` answers each request from a responder (the reactive fake
model), bends the answer with the faults keyed to the request's
``(turn, attempt)``, and returns a :class:`ResponsePlan`. It does no I/O; the
adapters (respx/httpx, httpx2) play a plan as a live response.

Standing conditions (:mod:`fakes._conditions`) come first: inside an outage
every request fails, and a prompt longer than the context window gets the
dialect's context-length error, whatever the script says.

``turn`` is 1 + the number of assistant messages in the request's
``messages``; ``attempt`` counts the requests this provider has seen for that
turn. Both live in the provider, which is part of the world, so "the first
attempt of turn 2 gets a 429" holds across agent crashes and restarts.

An agent may hold its whole conversation in one message and send no assistant
message at all (DSPy's ``ReAct`` writes its trajectory so far into the user
message, and asks for the final answer with other instructions). A request with
no assistant message that repeats one seen before is that request's turn again (a
retry, or a restart asking the same); a new one with the previous request's roles
in the same order, a user message last, asks the next turn. Any other is turn 1,
as the count says (a restart that adds the prompt again has a message more).

Example::

    provider = FakeProvider(
        "openai",
        ScriptedResponse((Text("Hi!"),), "stop", ScriptedUsage(12, 3)),
        faults={(1, 1): (HttpError(429, retry_after=2),)},
    )
    async with provider.httpx2_client() as http:
        client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                    http_client=http, max_retries=0)
        ...
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple, TypeVar, final
from urllib.parse import urlsplit

from fakes import _endpoints
from fakes._cache import CacheConfig, CacheOutcome, PromptCache
from fakes._conditions import ProviderConditions
from fakes._crashdisk import HarnessLimitExceeded
from fakes._dialects import WIRE, WireDialect, chat_view
from fakes._faults import (
    FaultContext,
    Timeline,
    apply_frames,
    apply_response,
    apply_timeline,
    error_body,
    error_headers,
    wait_step,
)
from fakes._held import HeldConversations
from fakes._latency import Latency
from fakes._pairing import PairingCheck, is_assistant
from fakes._quota import Quota, QuotaWindow, quota_error, rate_limit_headers
from fakes._script import DEFAULT_MODEL, ScriptedResponse, Text
from fakes._segments import prompt_view, unmarked
from fakes._tokenizer import count_tokens
from fakes._transport import IncomingRequest, ResponsePlan
from fakes._wire import Emit, Frame, Hang, Pause, RenderContext, Reset
from harness._errors import ConfigError, FaultError
from harness.ports import (
    CALENDAR_ORIGIN_UNIX,
    ByteFault,
    CutToolArguments,
    Dialect,
    DoomLoop,
    Fault,
    FrameFault,
    HttpError,
    LineEnding,
    LineEndings,
    OutageAnswer,
    StallBeforeHeaders,
    StallConnecting,
    check_dialect,
    check_faults,
    rng_stream,
)

if TYPE_CHECKING:
    import httpx
    import httpx2

# A fixed `created` keeps bytes identical across runs; nothing reads it as a clock.
_CREATED = 1_735_689_600


@dataclass(frozen=True)
class ProviderRequest:
    """A request the provider has seen, with its place in the conversation.

    ``json`` is the parsed body (``None`` if it was not a JSON object); ``turn``
    and ``attempt`` are 0 for requests that never reached the model (wrong
    path, unreadable body). ``cache`` is what the prompt cache did for it, when
    the provider has one (see :class:`~fakes.PromptCache`). ``chat`` is the
    body as its dialect's family reads it (see :func:`~fakes.chat_view`): the
    conversation the scripted model and the checkers read, whatever the dialect.
    ``streams`` says whether the request asked for a stream.
    """

    method: str
    url: str
    headers: Mapping[str, str]
    json: Mapping[str, object] | None
    turn: int
    attempt: int
    cache: CacheOutcome | None = None
    # What the provider's standing conditions did (fakes._conditions): "context_overflow"
    # or "outage" when one answered instead of the script; the prompt's tokens when a
    # context window is set.
    condition: str | None = None
    prompt_tokens: int | None = None
    #: The limit of the provider's quota that refused it with a 429 ("requests", "tokens" …).
    quota: str | None = None
    chat: Mapping[str, object] | None = None
    streams: bool = True
    #: Faults keyed to this request that its stream could not take (the agent asked for
    #: a whole answer, or a shorter one), as (kind, why). They were left out, and a case
    #: proves nothing about them (harness.checks: faults).
    unfit: tuple[tuple[str, str], ...] = ()
    #: For a request refused for tool calls without results (turn and attempt 0: it never
    #: reached the model), the turn it was for and the attempt it would have been.
    refused_turn: tuple[int, int] | None = None


Responder = Callable[[ProviderRequest], ScriptedResponse]
FaultPlan = Mapping[tuple[int, int], Sequence[Fault]]


#: The most requests one provider answers (a case's turns times their attempts): far above
#: any honest run; an agent that never stops asking is stopped with a harness_limit.
MAX_REQUESTS = 2_000


@final
class FakeProvider:
    """A scripted model behind a fake HTTP API; see the module docstring."""

    def __init__(
        self,
        dialect: Dialect,
        responder: ScriptedResponse | Responder,
        faults: FaultPlan | None = None,
        seed: int = 0,
        *,
        cache: CacheConfig | PromptCache | None = None,
        latency: Latency | None = None,
        max_requests: int = MAX_REQUESTS,
        conditions: ProviderConditions | None = None,
        quota: Quota | None = None,
        clock: Callable[[], float] | None = None,
        calendar_origin: float = CALENDAR_ORIGIN_UNIX,
        models: Sequence[str] = (DEFAULT_MODEL,),
    ) -> None:
        self.dialect: Dialect = check_dialect(dialect)
        self._wire: WireDialect = WIRE[self.dialect]
        self.max_requests = max_requests
        if not isinstance(responder, ScriptedResponse) and not callable(responder):
            raise ConfigError(
                "responder", responder, "a ScriptedResponse or a callable returning one"
            )
        self._responder = responder
        self._faults: Mapping[tuple[int, int], tuple[Fault, ...]] = \
            _check_fault_plan(faults or {})
        self.seed = seed
        self.requests: list[ProviderRequest] = []
        # The messages of the last request, which the next one mostly repeats (see _record).
        self._last_turns: list[object] = []
        self._last_chat: list[object] = []
        self._pairing = PairingCheck(self.dialect)
        self._attempts: dict[int, int] = {}
        # Requests with no assistant message: the turn each asked, and the last one asked.
        self._prompt_turns: dict[str, int] = {}
        self._last_prompt: tuple[list[object], int] | None = None
        # Opt-in: without a cache, usage is the script's, byte for byte as before.
        self.cache = _prompt_cache(cache, self.dialect, seed)
        # Opt-in too: without it the first byte leaves at once, as the timing tests expect.
        self.latency = latency
        # Opt-in as well: a context window and outages hold for every request alike.
        self.conditions = conditions or ProviderConditions()
        # Every answer states the limits; only a declared quota ever answers 429 for them.
        self.quota = QuotaWindow(quota)
        self._now = clock or _loop_time
        self._calendar_origin = calendar_origin
        # Conversations held on the server (Anthropic threads, Responses' previous_response_id).
        self.held = HeldConversations()
        #: The models ``GET /v1/models`` lists (the first is the scenario's).
        self.models: tuple[str, ...] = tuple(models) or (DEFAULT_MODEL,)
        self._check_static_faults()

    def use_faults(self, faults: Mapping[tuple[int, int], tuple[Fault, ...]]) -> None:
        """Read the fault plan from ``faults`` from now on: a plan that changes while it
        serves (``harness serve``'s control API arms faults at run time)."""
        self._faults = faults

    @property
    def endpoint(self) -> str:
        """The absolute URL streams are POSTed to (Gemini: with ``{model}`` to fill in)."""
        return self._wire.spec.origin + self._wire.spec.stream_path("{model}")

    @property
    def base_url(self) -> str:
        """The ``base_url`` the official SDK of this dialect expects."""
        return self._wire.spec.origin + self._wire.spec.sdk_base

    @property
    def origin(self) -> str:
        """Scheme and host every request to this provider goes to."""
        return self._wire.spec.origin

    def attempts(self, turn: int) -> int:
        """How many requests this provider has seen for ``turn``."""
        return self._attempts.get(turn, 0)

    def plan(self, request: IncomingRequest) -> ResponsePlan:
        """Record ``request`` and decide the whole response to it (no I/O).

        Every answer carries the dialect's rate-limit headers, as they stand once
        this request was admitted (or refused).
        """
        plan = self._plan(request)
        limits = rate_limit_headers(self.dialect, self.quota, self._now(), self._calendar_origin)
        return replace(plan, headers=plan.headers + limits)

    def _plan(self, request: IncomingRequest) -> ResponsePlan:
        number = len(self.requests) + 1
        if number > self.max_requests:
            raise HarnessLimitExceeded("requests", f"the agent sent more than "
                                       f"{self.max_requests:,} requests to the model")
        request_id = _derived_id("req_", self.seed, "request", number)
        body = _parse_json(request.body)
        if body is not None:
            body = self._wire.request_body(dict(body))
        path = urlsplit(request.url).path
        route = self._wire.route(path)
        other = self._other_endpoint(request.method, path, body, request_id,
                                     urlsplit(request.url).query)
        if other is not None:
            self._record(request, body, turn=0, attempt=0)
            return other
        if route is None or request.method != "POST":
            self._record(request, body, turn=0, attempt=0)
            error = HttpError(404, message=f"Invalid URL ({request.method} {path})")
            return self._error_plan(error, request_id, ())
        model, streams = route
        unknown = None
        if body is not None:
            body, unknown = self.held.expand(self.dialect, body)
        if unknown is not None:
            self._record(request, body, turn=0, attempt=0)
            if self.dialect == "openai-responses":  # the API names the field and a code
                return self._json_error_plan(400, _endpoints.not_found_body(
                    unknown, "previous_response_id", "previous_response_not_found"), request_id)
            error = HttpError(404 if self.dialect == "anthropic" else 400, message=unknown)
            return self._error_plan(error, request_id, ())
        chat = chat_view(self.dialect, body or {}, model)
        messages = chat.get("messages")
        if not isinstance(messages, list):
            self._record(request, body, turn=0, attempt=0)
            error = HttpError(400, message=f"{self._wire.spec.conversation}: field "
                                           "required (a list)")
            return self._error_plan(error, request_id, ())
        # Shared first: the pairing check then knows the messages it read last time.
        self._share(body, chat)
        unpaired = self._unpaired(messages, request_id)
        if unpaired is not None:
            recorded = self._record(request, body, turn=0, attempt=0, shared=True)
            # Not counted as an attempt (faults and world events key on the ones the
            # model saw); named by its turn for the report.
            turn = 1 + sum(1 for m in messages if is_assistant(m))
            self.requests[-1] = replace(
                recorded, refused_turn=(turn, self._attempts.get(turn, 0) + 1))
            return self._bad_request_plan(unpaired, request_id)
        turn = 1 + self._pairing.assistant_messages
        turn = self._prompt_turn(messages) if turn == 1 else self._not_prompt_held(turn)
        attempt = self._attempts[turn] = self._attempts.get(turn, 0) + 1
        recorded = self._measured(self._record(
            request, body, turn=turn, attempt=attempt, chat=chat,
            streams=_wants_stream(body) if streams is None else streams, shared=True))
        standing = self._condition_plan(recorded, request_id)
        if standing is not None:
            return standing
        faults = tuple(self._faults.get((turn, attempt), ()))
        # The static probe (number 0) renders the script's own stream: a fault that
        # does not fit it is the scenario's mistake and is refused at its line. Later,
        # a fault that does not fit the stream this agent asked for is left out.
        unfit: list[tuple[str, str]] | None = [] if number else None
        with _naming_the_fault(faults, turn, attempt):
            plan = self._faulted_plan(recorded, request_id, number, faults, unfit)
        if unfit:  # plan() appended the record just now, synchronously: it is the last one
            self.requests[-1] = replace(self.requests[-1], unfit=tuple(unfit))
        return plan

    def _prompt_turn(self, sent: list[object]) -> int:
        """The turn of a request with no assistant message (see the module docstring).

        Read without Anthropic's ``cache_control`` marks: a mark moved or dropped (a
        restarted agent that marks otherwise) asks nothing new.
        """
        messages = unmarked(sent)
        key = json.dumps(messages, sort_keys=True, default=str)
        turn = self._prompt_turns.get(key)
        if turn is None:
            last = self._last_prompt
            turn = last[1] + 1 if last is not None and _asks_on(last[0], messages) else 1
            self._prompt_turns[key] = turn
        self._last_prompt = (messages, turn)
        return turn

    def _not_prompt_held(self, turn: int) -> int:
        """``turn``, counted by assistant messages: the next request with none starts anew."""
        self._last_prompt = None
        return turn

    def _other_endpoint(self, method: str, path: str, body: Mapping[str, object] | None,
                        request_id: str, query: str = "") -> ResponsePlan | None:
        """Models, embeddings, a stored response or its input items (fakes._endpoints),
        else None."""
        found = _endpoints.answer(self.dialect, method, path, body, seed=self.seed,
                                  models=self.models, stored=self.held.responses,
                                  input_items=self.held.input_items, query=query)
        if found is None:
            return None
        if isinstance(found, str):
            return self._error_plan(HttpError(400, message=found), request_id, ())
        if method == "DELETE":
            self.held.forget(path.rsplit("/", 1)[-1])
        return self._json_error_plan(found.status, found.body, request_id)

    def _unpaired(self, messages: list[object], request_id: str) -> bytes | None:
        """The 400 for calls without results, in the dialect's own words."""
        return self._pairing.unpaired_body(messages, request_id)

    def _faulted_plan(
        self, recorded: ProviderRequest, request_id: str, number: int, faults: tuple[Fault, ...],
        unfit: list[tuple[str, str]] | None = None,
    ) -> ResponsePlan:
        turn, attempt = recorded.turn, recorded.attempt
        ctx = FaultContext(self.dialect, rng_stream(self.seed, f"fakes.faults:{turn}:{attempt}"))
        http = [fault for fault in faults if isinstance(fault, HttpError)]
        if http:
            return self._error_plan(http[0], request_id, faults, ctx)
        rejection = self.quota.check(self._now()) if number else None
        if rejection is not None:
            # plan() appended this record just now, synchronously: it is the last one.
            self.requests[-1] = replace(recorded, quota=rejection.limited)
            return self._error_plan(quota_error(self.dialect, rejection), request_id, faults, ctx)
        if number:  # not the static probe of _check_static_faults
            self.quota.admit(self._now())
        if self.cache is not None and recorded.json is not None:
            recorded, problem = self._serve_cache(recorded, recorded.json)
            if problem is not None:
                return self._error_plan(HttpError(400, message=problem), request_id, faults, ctx)
        return self._stream_plan(recorded, request_id, number, faults, ctx, unfit=unfit)

    def _measured(self, recorded: ProviderRequest) -> ProviderRequest:
        """The record with the provider's standing conditions noted (an outage, an overflow)."""
        outage = self.conditions.outage_at(self._now(), _named_model(recorded))
        window = self.conditions.context_window
        tokens = None
        if window is not None and recorded.json is not None:
            tokens = prompt_view(self.dialect, recorded.json).tokens
        condition = "outage" if outage is not None else None
        if condition is None and window is not None and tokens is not None \
                and window.overflows(tokens):
            condition = "context_overflow"
        if condition is None and tokens is None:
            return recorded
        recorded = replace(recorded, condition=condition, prompt_tokens=tokens)
        self.requests[-1] = recorded  # plan() appended it just now, synchronously
        return recorded

    def _condition_plan(self, recorded: ProviderRequest, request_id: str) -> ResponsePlan | None:
        """An outage's answer, or the dialect's context-length error, before any fault."""
        outage = self.conditions.outage_at(self._now(), _named_model(recorded))
        if outage is not None:
            return self._outage_plan(outage.answer, request_id)
        window = self.conditions.context_window
        if recorded.condition != "context_overflow" or window is None \
                or recorded.prompt_tokens is None:
            return None
        body = window.overflow_body(self.dialect, recorded.prompt_tokens, request_id)
        return self._json_error_plan(400, body, request_id)

    def _outage_plan(self, answer: OutageAnswer, request_id: str) -> ResponsePlan:
        if isinstance(answer, int):
            return self._error_plan(HttpError(answer), request_id, ())
        # A dropped connection, or headers then silence until the client gives up.
        headers = (("content-type", "text/event-stream; charset=utf-8"),
                   (self._wire.spec.request_id_header, request_id))
        return ResponsePlan(200, headers, (Reset() if answer == "connection_reset" else Hang(),))

    def _json_error_plan(self, status: int, body: bytes, request_id: str) -> ResponsePlan:
        headers = (("content-type", "application/json"),
                   (self._wire.spec.request_id_header, request_id))
        return ResponsePlan(status, headers, (Emit(body),))

    def _check_static_faults(self) -> None:
        """With a fixed reply, a fault that cannot fit it is refused now, not mid-run."""
        if not isinstance(self._responder, ScriptedResponse):
            return
        body = {"messages": [], "stream": True, "stream_options": {"include_usage": True}}
        for (turn, attempt), faults in self._faults.items():
            probe = ProviderRequest("POST", self.endpoint, {}, body, turn, attempt, chat=body)
            with _naming_the_fault(faults, turn, attempt):
                self._faulted_plan(probe, "req_check", 0, faults)

    def _serve_cache(
        self, recorded: ProviderRequest, body: Mapping[str, object]
    ) -> tuple[ProviderRequest, str | None]:
        """Validate the cache markers and serve the cache; keep the outcome on the record."""
        assert self.cache is not None
        view = prompt_view(self._wire.spec.family, recorded.chat or body)
        problem = self.cache.check(view)
        if problem is not None:
            return recorded, problem
        recorded = replace(recorded, cache=self.cache.serve(view))
        # plan() appended this record just now, synchronously: it is the last one.
        self.requests[-1] = recorded
        return recorded, None

    def _record(
        self, request: IncomingRequest, body: Mapping[str, object] | None, *, turn: int,
        attempt: int, chat: Mapping[str, object] | None = None, streams: bool = True,
        shared: bool = False,
    ) -> ProviderRequest:
        if not shared:
            self._share(body, chat)
        recorded = ProviderRequest(
            method=request.method,
            url=request.url,
            headers={k.lower(): v for k, v in request.headers.items()},
            json=body,
            turn=turn,
            attempt=attempt,
            chat=chat,
            streams=streams,
        )
        self.requests.append(recorded)
        return recorded

    def _share(self, body: Mapping[str, object] | None, chat: Mapping[str, object] | None
               ) -> None:
        """Point the messages the last request also held at its objects (memory: once each)."""
        # The prompt cache reads the bytes, key order included; nothing else does.
        ordered = self.cache is not None
        if body is not None:
            self._last_turns = share_repeated_messages(body, self._last_turns,
                                                       self._wire.spec.conversation,
                                                       ordered=ordered)
        if chat is not None:
            # Built afresh per request for Responses and Gemini: shared the same way.
            self._last_chat = share_repeated_messages(chat, self._last_chat, ordered=ordered)

    def _bad_request_plan(self, body: bytes, request_id: str) -> ResponsePlan:
        """A 400 with ``body`` as it stands: the API refused the request's contents."""
        headers = (("content-type", "application/json"),
                   (self._wire.spec.request_id_header, request_id))
        timeline = Timeline((Emit(body),), (len(body),))
        return _finish_plan(400, headers, timeline, (), None)

    def _error_plan(
        self,
        error: HttpError,
        request_id: str,
        faults: tuple[Fault, ...],
        ctx: FaultContext | None = None,
    ) -> ResponsePlan:
        body = error_body(error, self.dialect, request_id)
        headers = (
            ("content-type", "application/json"),
            (self._wire.spec.request_id_header, request_id),
            *error_headers(error),
        )
        timeline = Timeline((Emit(body),), (len(body),))
        return _finish_plan(error.status, headers, timeline, faults, ctx)

    def _stream_plan(
        self,
        request: ProviderRequest,
        request_id: str,
        number: int,
        faults: tuple[Fault, ...],
        ctx: FaultContext,
        *,
        unfit: list[tuple[str, str]] | None = None,
    ) -> ResponsePlan:
        response = _echo_model(self._respond(request), request)
        for fault in faults:
            if isinstance(fault, CutToolArguments | DoomLoop):
                response = apply_response(fault, response)
        if request.cache is not None:
            usage = request.cache.usage(output_tokens(response))
            response = replace(response, usage=usage)
        elif request.prompt_tokens is not None:
            # A provider that measured the prompt against its window bills what it measured.
            response = replace(response, usage=replace(response.usage,
                                                        input_tokens=request.prompt_tokens))
        self.quota.charge(response.usage.input_tokens, response.usage.output_tokens)
        self._hold(request, response, number)
        if not request.streams:
            return self._json_plan(request, request_id, response, faults=faults, ctx=ctx,
                                   number=number, unfit=unfit)
        frames = self._render(request, response, number)
        fits = self._fits_reference(request, response, number, faults) \
            if unfit is not None else None
        leaving = _Leaving(unfit, request, fits)
        for fault in faults:
            if isinstance(fault, FrameFault):
                faulted = leaving.apply(fault, partial(apply_frames, fault, frames, ctx))
                if faulted is None:
                    faults = tuple(f for f in faults if f is not fault)
                else:
                    frames = faulted
        timeline = _encode(frames, _line_ending(faults))
        headers = (
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            (self._wire.spec.request_id_header, request_id),
        )
        plan = _finish_plan(200, headers, timeline, faults, ctx, leaving=leaving)
        wait = self._first_token_wait(request)
        return replace(plan, steps=(Pause(wait), *plan.steps)) if wait else plan

    def _json_plan(
        self,
        request: ProviderRequest,
        request_id: str,
        response: ScriptedResponse,
        *,
        faults: tuple[Fault, ...],
        ctx: FaultContext,
        number: int,
        unfit: list[tuple[str, str]] | None = None,
    ) -> ResponsePlan:
        """A request that did not ask to stream gets the whole answer as one JSON object.

        Faults on the bytes (stalls, resets, slow drips) and on the response
        (cut tool arguments) still apply; faults on SSE frames have no frames to
        act on: they are left out and noted, so the case does not count them as met.
        """
        if unfit is not None:
            unfit += [(f.kind, "a whole answer has no SSE frames to act on (the agent asked "
                               "for a whole answer, not a stream)")
                      for f in faults if isinstance(f, FrameFault)]
        body = self._render_json(response, number)
        timeline = Timeline((Emit(body),), (len(body),))
        headers = (("content-type", "application/json"),
                   (self._wire.spec.request_id_header, request_id))
        fits = self._fits_reference(request, response, number, faults) \
            if unfit is not None else None
        plan = _finish_plan(200, headers, timeline, faults, ctx,
                            leaving=_Leaving(unfit, request, fits))
        wait = self._first_token_wait(request)
        return replace(plan, before_headers=(Pause(wait), *plan.before_headers)) if wait \
            else plan

    def _hold(self, request: ProviderRequest, response: ScriptedResponse, number: int) -> None:
        """Keep the conversation with this answer, if the request asked the server to."""
        body = request.json
        if number == 0 or body is None or not self.held.holds(self.dialect, body):
            return  # number 0: the static probe of _check_static_faults, not a request
        response_id = _derived_id(self._wire.response_id_prefix, self.seed, "response", number)
        self.held.remember(self.dialect, body, response_id, self._render_json(response, number))

    def _render_json(self, response: ScriptedResponse, number: int) -> bytes:
        response_id = _derived_id(self._wire.response_id_prefix, self.seed, "response", number)
        ctx = RenderContext(response_id, _CREATED, random.Random(0), False)
        return self._wire.render_json(response, ctx)

    def _first_token_wait(self, request: ProviderRequest) -> float:
        """The modelled prefill wait before the first byte (0 without a latency model)."""
        if self.latency is None:
            return 0.0
        if request.cache is not None:
            uncached = request.cache.uncached_input_tokens
            cached = request.cache.cache_read_tokens
        else:
            view = prompt_view(self._wire.spec.family, request.chat or request.json or {})
            uncached, cached = view.tokens, 0
        return self.latency.first_token_seconds(uncached_tokens=uncached, cached_tokens=cached)

    def _respond(self, request: ProviderRequest) -> ScriptedResponse:
        if isinstance(self._responder, ScriptedResponse):
            return self._responder
        response = self._responder(request)
        if not isinstance(response, ScriptedResponse):
            raise ConfigError("responder", response, "a callable returning a ScriptedResponse")
        return response

    def _fits_reference(self, request: ProviderRequest, response: ScriptedResponse,
                        number: int, faults: tuple[Fault, ...]) -> Callable[[Fault], bool]:
        """Whether a fault fits the stream of this answer as a streaming client that asks
        for usage gets it, shaped by the attempt's other faults (``faults``) as that
        client's stream would be: where it does, a misfit is the agent's request, not the
        scenario. (A split between CR and LF fits only where the attempt's
        ``line_endings`` made CRLF lines; a whole answer has none.)"""

        def fits(fault: Fault) -> bool:
            probe = replace(request, json=_REFERENCE_BODY, streams=True)
            frames = self._render(probe, response, number)
            ctx = FaultContext(self.dialect, rng_stream(self.seed, "fakes.faults:reference"))
            try:
                if isinstance(fault, FrameFault):
                    apply_frames(fault, frames, ctx)
                elif isinstance(fault, ByteFault):
                    shaped = _frames_shaped_by(faults, frames, ctx)
                    apply_timeline(fault, _encode(shaped, _line_ending(faults)), ctx)
            except ConfigError:
                return False
            return True

        return fits

    def _render(
        self, request: ProviderRequest, response: ScriptedResponse, number: int
    ) -> tuple[Frame, ...]:
        include_usage = self.dialect == "openai" and _wants_usage(request.json)
        key = (self.dialect, self.seed, request.turn, request.attempt, number, include_usage,
               _wire_key(response))
        frames = _RENDERED.get(key)
        if frames is None:
            frames = self._render_fresh(request, response, number, include_usage)
            _remember_render(key, frames)
        return frames

    def _render_fresh(
        self, request: ProviderRequest, response: ScriptedResponse, number: int,
        include_usage: bool,
    ) -> tuple[Frame, ...]:
        rng = rng_stream(self.seed, f"fakes.deltas:{request.turn}:{request.attempt}")
        response_id = _derived_id(self._wire.response_id_prefix, self.seed, "response", number)
        return self._wire.render(response, RenderContext(response_id, _CREATED, rng,
                                                         include_usage))

    def httpx_client(self) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` whose every request goes to this provider (respx)."""
        from fakes._respx_adapter import httpx_client

        return httpx_client(self)

    def mount(self, router: object) -> object:
        """Add this provider's route (its whole origin) to a respx router; return the route."""
        from fakes._respx_adapter import mount

        return mount(self, router)

    def httpx2_client(self) -> httpx2.AsyncClient:
        """An ``httpx2.AsyncClient`` (for the official SDKs) served by this provider."""
        from fakes._httpx2_adapter import httpx2_client

        return httpx2_client(self)


def _loop_time() -> float:
    """The running event loop's time (virtual under a VirtualClock), 0.0 outside a loop."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return 0.0


def _prompt_cache(
    cache: CacheConfig | PromptCache | None, dialect: Dialect, seed: int
) -> PromptCache | None:
    if cache is None:
        return None
    if isinstance(cache, CacheConfig):
        return PromptCache(dialect, cache, seed)
    if not isinstance(cache, PromptCache):
        raise ConfigError("cache", cache, "a CacheConfig, a PromptCache or None")
    if cache.dialect != dialect:
        raise ConfigError("cache", f"PromptCache({cache.dialect!r})",
                          f"a PromptCache for {dialect!r}", "Each provider needs its own cache")
    return cache


def output_tokens(response: ScriptedResponse) -> int:
    """Output tokens of what the script says: its text, tool names and arguments.

    With the prompt cache on, this is the output side of the usage on the wire.

    >>> from fakes import ScriptedUsage
    >>> output_tokens(ScriptedResponse((Text("Hello there"),), "stop", ScriptedUsage(1, 1)))
    4
    """
    return sum(
        count_tokens(part.text) if isinstance(part, Text)
        else count_tokens(part.name) + count_tokens(part.argument_text)
        for part in response.parts
    )


def _check_fault_plan(faults: FaultPlan) -> dict[tuple[int, int], tuple[Fault, ...]]:
    if not isinstance(faults, Mapping):
        raise ConfigError("faults", faults, "a mapping of (turn, attempt) to a sequence of faults")
    checked: dict[tuple[int, int], tuple[Fault, ...]] = {}
    for key, sequence in faults.items():
        if not (
            isinstance(key, tuple)
            and len(key) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in key)
        ):
            raise ConfigError("faults", key, "a (turn, attempt) key of two ints >= 1")
        if isinstance(sequence, Fault) or not isinstance(sequence, Sequence):
            raise ConfigError(f"faults[{key}]", sequence, "a sequence (tuple) of faults")
        check_faults(sequence)
        checked[key] = tuple(sequence)
    return checked


def _finish_plan(
    status: int,
    headers: tuple[tuple[str, str], ...],
    timeline: Timeline,
    faults: tuple[Fault, ...],
    ctx: FaultContext | None,
    *,
    leaving: _Leaving | None = None,
) -> ResponsePlan:
    leaving = leaving or _Leaving(None, None, None)
    cut_short = False
    for fault in faults:
        if isinstance(fault, ByteFault):
            assert ctx is not None
            faulted = leaving.apply(fault, partial(apply_timeline, fault, timeline, ctx))
            if faulted is None:
                continue
            # A hang or a reset drops every byte after it; one after the last byte drops none.
            cut_short = cut_short or faulted.length < timeline.length
            timeline = faulted
    before = tuple(wait_step(f) for f in faults if isinstance(f, StallBeforeHeaders))
    connect = tuple(wait_step(f) for f in faults if isinstance(f, StallConnecting))
    return ResponsePlan(status, headers, timeline.steps, before, connect, cut_short)


# Rendered frames by everything a rendering reads: a crash exploration re-sends
# the same requests case after case, and a rendering is a pure function of these.
# Frames are frozen and the tuple immutable, so a remembered one is safe to share.
_RENDERED: dict[tuple[object, ...], tuple[Frame, ...]] = {}
_RENDERED_MAX = 4096


def _wire_key(response: ScriptedResponse) -> tuple[object, ...]:
    """What of ``response`` reaches the wire: the renderers read nothing else."""
    parts = tuple(
        ("text", part.text) if isinstance(part, Text)
        else ("tool", part.call_id, part.name, part.argument_text)
        for part in response.parts
    )
    return (parts, response.finish, response.usage, response.model)


def _remember_render(key: tuple[object, ...], frames: tuple[Frame, ...]) -> None:
    if len(_RENDERED) >= _RENDERED_MAX:
        del _RENDERED[next(iter(_RENDERED))]  # the oldest
    _RENDERED[key] = frames


def _frames_shaped_by(faults: tuple[Fault, ...], frames: tuple[Frame, ...],
                      ctx: FaultContext) -> tuple[Frame, ...]:
    """``frames`` after each of ``faults`` that acts on frames and fits them, in order, as
    a streaming client's plan applies them before any fault on the bytes."""
    for fault in faults:
        if isinstance(fault, FrameFault):
            with suppress(ConfigError):
                frames = apply_frames(fault, frames, ctx)
    return frames


def _line_ending(faults: tuple[Fault, ...]) -> LineEnding:
    styles = [fault.style for fault in faults if isinstance(fault, LineEndings)]
    return styles[-1] if styles else "lf"


# Encoded timelines of remembered renderings, by the frames' identity: the same
# rendering is encoded again case after case. The entry keeps its frames, so an
# identity found here is never one reused by a later tuple.
_ENCODED: dict[tuple[int, LineEnding], tuple[tuple[Frame, ...], Timeline]] = {}


def _encode(frames: tuple[Frame, ...], line_ending: LineEnding) -> Timeline:
    key = (id(frames), line_ending)
    known = _ENCODED.get(key)
    if known is not None and known[0] is frames:
        return known[1]
    timeline = _encode_fresh(frames, line_ending)
    if len(_ENCODED) >= _RENDERED_MAX:
        del _ENCODED[next(iter(_ENCODED))]  # the oldest
    _ENCODED[key] = (frames, timeline)
    return timeline


def _encode_fresh(frames: tuple[Frame, ...], line_ending: LineEnding) -> Timeline:
    # One read per event: what a well-behaved server and network deliver.
    chunks = tuple(frame.encode(line_ending) for frame in frames)
    ends: list[int] = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        ends.append(total)
    return Timeline(tuple(Emit(chunk) for chunk in chunks), tuple(ends))


def share_repeated_messages(body: Mapping[str, object], previous: list[object],
                            key: str = "messages", *, ordered: bool = False) -> list[object]:
    """Point each message of ``body`` equal to the previous request's at that one; return them.

    Every request carries the whole conversation again, so keeping each request's
    parsed body whole keeps the conversation once per turn: memory grows with the
    square of the turns (1,000 turns: most of a gigabyte). A message equal to the
    one at the same place in the previous request is the same object instead, so
    each message is held once and memory grows linearly. Nothing changes for a
    reader: the values are equal, and recorded bodies are read, never changed.
    ``key`` names the field that holds the conversation (``input`` for the
    Responses API, ``contents`` for Gemini). ``ordered`` asks for the keys in the
    same order too, at every depth, for a reader of the bytes: the prompt cache,
    to which a tool input whose keys came back in another order is another prefix.
    It walks each repeated message, as the cache's own view of the request does.

    >>> first = {"messages": [{"role": "user", "content": "hi"}]}
    >>> second = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant"}]}
    >>> kept = share_repeated_messages(second, share_repeated_messages(first, []))
    >>> second["messages"][0] is first["messages"][0], kept is second["messages"]
    (True, True)
    >>> third = {"messages": [{"content": "hi", "role": "user"}]}
    >>> _ = share_repeated_messages(third, kept, ordered=True)
    >>> third["messages"][0] is first["messages"][0]
    False
    """
    messages = body.get(key)
    if not isinstance(messages, list):
        return previous
    for index, (message, earlier) in enumerate(zip(messages, previous, strict=False)):
        if message is not earlier and message == earlier and (
                not ordered or _same_key_order(message, earlier)):
            messages[index] = earlier
    return messages


def _same_key_order(value: object, other: object) -> bool:
    """Whether two equal JSON values also list their keys in the same order, at every depth."""
    if isinstance(value, dict) and isinstance(other, dict):
        return list(value) == list(other) and all(
            _same_key_order(inner, other[name]) for name, inner in value.items())
    if isinstance(value, list) and isinstance(other, list):
        return all(_same_key_order(a, b) for a, b in zip(value, other, strict=True))
    return True


def _named_model(request: ProviderRequest) -> str | None:
    """The model a request names (Gemini's path, the others' body), as the chat view reads it."""
    named = (request.chat or {}).get("model")
    return named if isinstance(named, str) else None


def _echo_model(response: ScriptedResponse, request: ProviderRequest) -> ScriptedResponse:
    """The answer naming the model the request named, as the APIs do, unless the responder
    named one itself (a ``model`` other than the default)."""
    named = (request.chat or {}).get("model")
    if response.model != DEFAULT_MODEL or not isinstance(named, str) or not named:
        return response
    return replace(response, model=named)


def _parse_json(body: bytes) -> Mapping[str, object] | None:
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _wants_stream(body: Mapping[str, object] | None) -> bool:
    """Whether the request asked for a stream (``"stream": true``), as both APIs read it."""
    return body is not None and body.get("stream") is True


def _wants_usage(body: Mapping[str, object] | None) -> bool:
    options = body.get("stream_options") if body is not None else None
    return isinstance(options, dict) and options.get("include_usage") is True


def _derived_id(prefix: str, seed: int, name: str, number: int) -> str:
    digest = hashlib.sha256(f"{seed}:{name}:{number}".encode()).hexdigest()
    return f"{prefix}{digest[:24]}"


# The request a streaming client that asks for usage sends: the stream a scenario is
# written against (stream_options only counts for Chat Completions).
_REFERENCE_BODY: Mapping[str, object] = {"stream": True,
                                         "stream_options": {"include_usage": True}}


_Applied = TypeVar("_Applied")


class _Leaving(NamedTuple):
    """Where a fault the agent's own request cannot take is left out (see :meth:`apply`)."""

    unfit: list[tuple[str, str]] | None
    request: ProviderRequest | None
    fits_reference: Callable[[Fault], bool] | None

    def apply(self, fault: Fault, applied: Callable[[], _Applied]) -> _Applied | None:
        """``applied()``; None when the fault did not fit and was left out, noted in ``unfit``.

        The fault's error is raised as before (the scenario's mistake, refused at its
        line) when ``unfit`` is None (the static probe of the script's own stream) or
        when the fault does not fit the reference stream either: only a misfit the
        agent's own request caused (a whole answer, no usage chunk) is left out.
        """
        try:
            return applied()
        except ConfigError as error:
            if self.unfit is None or self.fits_reference is None \
                    or not self.fits_reference(fault):
                raise
            whole = self.request is not None and not self.request.streams
            why = " (the agent asked for a whole answer, not a stream)" if whole else ""
            self.unfit.append((fault.kind, f"{error}{why}"))
            return None


@contextmanager
def _naming_the_fault(faults: tuple[Fault, ...], turn: int, attempt: int) -> Iterator[None]:
    """Re-raise a fault's :class:`ConfigError` as a :class:`FaultError` saying which fault."""
    try:
        yield
    except FaultError:
        raise
    except ConfigError as error:
        index = _culprit(faults, error.field)
        if index is None:
            raise  # not a fault's error (a responder returning the wrong type …)
        kind = faults[index].kind
        raise FaultError(error, turn=turn, attempt=attempt, index=index, kind=kind) from error


def _culprit(faults: tuple[Fault, ...], field: str) -> int | None:
    # A fault's errors name its class first ("SplitAt.offsets"); the first fault of
    # that class in the tuple is the one that was applied and refused.
    owner = field.split(".", 1)[0]
    return next((i for i, f in enumerate(faults) if type(f).__name__ == owner), None)


def _asks_on(previous: list[object], messages: list[object]) -> bool:
    """Whether ``messages`` asks on from ``previous``: the same roles in the same order,
    a user message last, and something rewritten (a conversation held in its messages'
    text, grown by a step; a restart that adds the prompt again adds a message).

    >>> system, ask = {"role": "system", "content": "s"}, {"role": "user", "content": "a"}
    >>> _asks_on([system, ask], [system, {"role": "user", "content": "a, then b"}])
    True
    >>> _asks_on([system, ask], [system, ask, {"role": "user", "content": "a"}])
    False
    """
    if not previous or len(previous) != len(messages) or previous == messages:
        return False
    return all(isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role")
               for a, b in zip(previous, messages, strict=True)) and \
        _role_of(messages[-1]) == "user"


def _role_of(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None
