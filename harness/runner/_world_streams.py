"""What the world's provider was asked and answered, recorded for the trace as it happens.

A request the world takes becomes the trace's :class:`~harness.trace.RequestRecord`
at once (:func:`answered_record`): what was asked and answered is fixed then. Its
stream is played to the client by whichever transport sent it, and every transport's
body reports to one :class:`StreamRecord`, which counts how far the client read, when
it stopped and how long it sat in silence, and reaches the stream's world events (its
crash points). :func:`request_record` fills that progress into the record when the
trace is written.

Example::

    pending = Pending(answered_record(seen, plan, response, body, index=1, incarnation=1,
                                      now=0.0, faults=()))
    record = request_record(pending, "openai")
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

import httpx

import fakes
from fakes import (
    BROKEN_STREAM_FAULTS,
    CONNECTION_RESET,
    CacheOutcome,
    ResponsePlan,
    ScriptedResponse,
    Step,
    Text,
    VirtualClock,
    play_steps,
)
from harness.ports import ATTEMPT_ID_HEADER, RETRY_LAYER_HEADER, parse_retry_after
from harness.runner._ledger_pipe import StreamTiming
from harness.runner._model import UNSCRIPTED_TEXT
from harness.runner._observed import observed_transcript
from harness.runner._usage_seen import usage_seen
from harness.runner._world_build import CALENDAR_ORIGIN
from harness.trace import (
    CacheRecord,
    Delivery,
    RequestRecord,
    SegmentVersion,
    SentCall,
    SentReply,
    SentUsage,
)

StreamEvent = Literal["mid_stream", "after_response"]


@dataclass
class Pending:
    """A request in flight: its trace record, and how far the client has read its stream.

    What was asked and answered is fixed when the world takes the request, so it is the
    trace's own :class:`RequestRecord` from then on; only the stream's progress changes
    while it is played (every chunk), and :func:`request_record` fills it into the record.
    """

    record: RequestRecord  # its stream fields (first byte, end, delivery …) as yet unfilled
    response: ScriptedResponse | None = None  # the answer after argument cuts
    body: Mapping[str, object] | None = None  # the request's JSON, for the observed transcript
    cut_short: bool = False  # a reset or a hang kept bytes of the answer from the client
    ended: str = "open"  # eof, reset, closed, cancelled, refused, timeout
    first_byte_at: float | None = None
    ended_at: float | None = None
    delivered_bytes: int = 0
    last_chunk_at: float | None = None
    longest_silence: float = 0.0
    delivered: bytearray | None = None  # the bytes the client was sent, for usage_seen
    goal_revisions: tuple[int, ...] = ()  # I5:context: the goal revisions it told the model
    # retry:doom-loop: how it asked the model to sample, and whether it carried a loop back.
    sampling: tuple[str, ...] = ()
    carries_loop: bool = False
    output_limit: int | None = None  # S6:limit: the output limit it asked for
    # context:tool-output: each tool result it carried, by call id, and its characters.
    result_sizes: tuple[tuple[str, int], ...] = ()
    # A digest of the conversation it asked (its messages), made once, when first keyed.
    conversation: str | None = None

    @property
    def got_whole(self) -> bool:
        """Whether the client read the whole answer (what a later incarnation may recall)."""
        return self.response is not None and self.ended == "eof" and \
            self.delivered_bytes >= self.record.planned_bytes

    def messages(self) -> list[object]:
        """The conversation the request asked about (its chat view's messages)."""
        messages = (self.body or {}).get("messages")
        return messages if isinstance(messages, list) else []

    def conversation_key(self) -> str:
        """:attr:`conversation`, made now if not yet."""
        if self.conversation is None:
            from hashlib import sha256

            text = json.dumps(self.messages(), sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False, default=repr)
            self.conversation = sha256(text.encode()).hexdigest()
        return self.conversation


@dataclass(frozen=True)
class Accepted:
    """A request the world took: the provider's plan, and the record the stream fills in."""

    plan: ResponsePlan
    pending: Pending


def after_cuts(response: ScriptedResponse | None, faults: tuple[fakes.Fault, ...]
                ) -> ScriptedResponse | None:
    """The response as sent: the provider applies argument cuts before rendering."""
    if response is None:
        return None
    for fault in faults:
        if isinstance(fault, fakes.TruncatedToolArguments | fakes.InvalidToolArguments
                      | fakes.DoomLoop):
            response = fakes.apply_response(fault, response)
    return response


class RecordedBody(httpx.AsyncByteStream):
    """Plays a plan's steps and notes how far the client got, on the virtual clock."""

    def __init__(self, steps: tuple[Step, ...], record: StreamRecord,
                 request: httpx.Request) -> None:
        self._steps = steps
        self._record = record
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
        return httpx.ReadError(CONNECTION_RESET, request=self._request)

    async def aclose(self) -> None:
        self._record.on_end("closed")


class StreamRecord:
    """Notes how far the client read a served stream, and reaches the stream's world events.

    Every transport's body reports here (the ports' client and the intercepted
    httpx and httpx2 ones), so the record of a stream is the same whoever read it.
    """

    def __init__(self, pending: Pending, clock: VirtualClock,
                 on_event: Callable[[Pending, StreamEvent], None],
                 on_ended: Callable[[Pending, str, StreamTiming], None] | None = None
                 ) -> None:
        self._pending = pending
        self._clock = clock
        self._on_event = on_event  # the world's: reach the stream's crash points
        # The world's, in a sealed worker: tell the harness the stream's timing, measured
        # here beside the record (not by it) when the stream ends.
        self._on_ended = on_ended
        self._timing = StreamTiming() if on_ended is not None else None

    def on_chunk(self, data: bytes) -> None:
        pending = self._pending
        if self._timing is not None:
            self._timing.chunk(self._clock.now(), len(data))
        if pending.first_byte_at is None:
            pending.first_byte_at = self._clock.now()
        self._note_silence()
        pending.delivered_bytes += len(data)
        if pending.delivered is None:
            pending.delivered = bytearray()
        pending.delivered += data

    def after_first_chunk(self) -> None:
        self._on_event(self._pending, "mid_stream")

    def on_end(self, how: str) -> None:
        pending = self._pending
        if pending.ended != "open":
            return
        self._note_silence()
        pending.ended = how
        pending.ended_at = self._clock.now()
        if self._timing is not None and self._on_ended is not None:
            self._timing.end(self._clock.now())
            self._on_ended(pending, how, self._timing)
        if how in ("eof", "closed"):
            # An SDK closes the stream once it read the terminal event, without
            # asking for an end it knows is there: the whole answer is in its hands.
            self._on_event(pending, "after_response")

    def _note_silence(self) -> None:
        """Measure the gap since the last chunk: what an idle watchdog must bound (S1)."""
        pending, now = self._pending, self._clock.now()
        if pending.last_chunk_at is not None:
            pending.longest_silence = max(pending.longest_silence, now - pending.last_chunk_at)
        if pending.first_byte_at is not None:
            pending.last_chunk_at = now


def answered_record(seen: fakes.ProviderRequest, plan: ResponsePlan,
              response: ScriptedResponse | None, body: Mapping[str, object] | None, *,
              index: int, incarnation: int, now: float, faults: tuple[str, ...]
              ) -> RequestRecord:
    """The record of a request the world took, as far as it is known before its stream plays.

    Nothing of the stream has reached the client yet: no byte, no end, a partial delivery.
    """
    text = "".join(part.text for part in response.parts if isinstance(part, Text)) \
        if response else ""
    calls = tuple(SentCall(c.call_id, c.name, c.argument_text)
                  for c in (response.tool_calls if response else ()))
    return RequestRecord(
        index=index, incarnation=incarnation, turn=seen.turn, attempt=seen.attempt,
        started_at=now, first_byte_at=None, ended_at=None, status=plan.status, faults=faults,
        planned_bytes=len(plan.body), delivered_bytes=0, delivery="partial",
        truncated=response is not None and response.finish == "length",
        finish=response.finish if response else None,
        model=_requested_model(seen.chat or seen.json) or (response.model if response else None),
        text=text, calls=calls, usage=_sent_usage(seen, response), usage_reported=False,
        unscripted=text == UNSCRIPTED_TEXT, cache=_cache_record(seen.cache),
        attempt_id=seen.headers.get(ATTEMPT_ID_HEADER),
        retry_layer=seen.headers.get(RETRY_LAYER_HEADER),
        retry_after=asked_wait(plan.headers, now), offered_tools=offered_tools(body),
        prompt_tokens=seen.prompt_tokens, condition=seen.condition, unfit_faults=seen.unfit,
    )


def refused_record(index: int, incarnation: int, now: float) -> RequestRecord:
    """The record of a request a dead incarnation sent: refused, it never reached the model."""
    return RequestRecord(
        index=index, incarnation=incarnation, turn=0, attempt=0, started_at=now,
        first_byte_at=None, ended_at=now, status=599, faults=(), planned_bytes=0,
        delivered_bytes=0, delivery="refused", truncated=False, finish=None, model=None,
        text="", calls=(), usage=None, usage_reported=False, unscripted=UNSCRIPTED_TEXT == "",
    )


def request_record(p: Pending, dialect: str) -> RequestRecord:
    """``p``'s record with how far its stream got filled in."""
    record, delivery = p.record, _delivery(p)
    usage = record.usage
    reported = delivery == "complete" and usage is not None and not (
        dialect == "openai" and "no_usage_chunk" in record.faults)
    return replace(
        record, first_byte_at=p.first_byte_at, ended_at=p.ended_at,
        delivered_bytes=p.delivered_bytes, delivery=delivery, usage_reported=reported,
        longest_silence=p.longest_silence,
        usage_seen=usage if reported else _seen(dialect, p, delivery),
    )


def _seen(dialect: str, p: Pending, delivery: str) -> SentUsage | None:
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
    return parse_retry_after(dict(headers), now_unix=CALENDAR_ORIGIN + now)


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


def stop_sequences(body: Mapping[str, object] | None) -> tuple[str, ...]:
    """The stop sequences a request asks for, in any dialect's field: Chat Completions'
    ``stop`` (a string or a list), Anthropic's ``stop_sequences``, Gemini's
    ``generationConfig.stopSequences``.

    >>> stop_sequences({"stop": ["Observation:", "</code>"]})
    ('Observation:', '</code>')
    >>> stop_sequences({"generationConfig": {"stopSequences": ["END"]}})
    ('END',)
    >>> stop_sequences({"stop": None})
    ()
    """
    if body is None:
        return ()
    config = body.get("generationConfig")
    asked = body.get("stop") or body.get("stop_sequences") or (
        config.get("stopSequences") if isinstance(config, dict) else None)
    if isinstance(asked, str):
        asked = [asked]
    return tuple(s for s in asked if isinstance(s, str) and s) \
        if isinstance(asked, list) else ()


def _sent_usage(seen: fakes.ProviderRequest, response: ScriptedResponse | None
                ) -> SentUsage | None:
    """What the stream said it cost: the cache's verdict when the cache is on, else the script's."""
    if response is None:
        return None
    usage = response.usage
    if seen.cache is not None:
        usage = seen.cache.usage(fakes.output_tokens(response))
    elif seen.prompt_tokens is not None:
        # Under a context window the provider bills the prompt it measured.
        return SentUsage(seen.prompt_tokens, usage.output_tokens, usage.cache_read_tokens,
                         usage.cache_write_tokens)
    return SentUsage(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                     usage.cache_write_tokens)


def _cache_record(outcome: CacheOutcome | None) -> CacheRecord | None:
    if outcome is None:
        return None
    return CacheRecord(miss=outcome.miss, write_5m_tokens=outcome.cache_write_5m_tokens,
                       write_1h_tokens=outcome.cache_write_1h_tokens,
                       versions=tuple(SegmentVersion(*v) for v in sorted(outcome.versions.items())))


def _requested_model(body: Mapping[str, object] | None) -> str | None:
    model = body.get("model") if body is not None else None
    return model if isinstance(model, str) else None


def _delivery(p: Pending) -> Delivery:
    if p.ended == "refused":
        return "refused"
    if p.record.status != 200:
        return "http_error"
    if p.cut_short or p.delivered_bytes < p.record.planned_bytes:
        return "partial"
    if BROKEN_STREAM_FAULTS.intersection(p.record.faults):
        return "broken"
    return "complete"
