"""How each fault bends a response: the fakes' side of the fault declarations.

What a fault *is* (its kind, layer, fields and bounds) is declared once, in
:mod:`harness.ports._faults`, so that loading a scenario never loads the stream
machinery; this module holds what a fault *does* to a response on its way to the
client, one function per kind, chosen by the fault's class:

- :func:`apply_response` cuts a call's arguments (the ``response`` layer);
- :func:`apply_frames` bends the SSE events before they are encoded (``frames``);
- :func:`apply_timeline` bends the encoded body's bytes and timing (``bytes``);
- :func:`error_body` and :func:`error_headers` answer an :class:`HttpError`;
- :func:`wait_step` is the wait of a stall before the headers or the connection.

A fault that only the stream can judge (a split offset past the end, a ping in
an OpenAI stream) raises :class:`~harness.ConfigError` when it is applied, with
the stream's length or dialect in the message.

Example::

    timeline = apply_timeline(Stall(after_events=3, seconds=90), timeline, ctx)
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from fakes import _wire_anthropic
from fakes._dialects import WIRE
from fakes._script import ScriptedResponse, Text, ToolUse
from fakes._wire import Emit, Frame, Hang, Pause, Reset, Step
from harness import ports
from harness._errors import ConfigError
from harness.ports import Dialect

Frames = tuple[Frame, ...]

@dataclass(frozen=True)
class FaultContext:
    """What applying a fault may depend on: the dialect and a seeded RNG."""

    dialect: Dialect
    rng: random.Random


@dataclass(frozen=True)
class Timeline:
    """The body as timed steps, with the byte offset where each SSE event ends."""

    steps: tuple[Step, ...]
    event_ends: tuple[int, ...]

    @property
    def length(self) -> int:
        """Bytes the client can receive (up to a hang or reset)."""
        return sum(len(step.data) for step in self.steps if isinstance(step, Emit))

    @property
    def body(self) -> bytes:
        return b"".join(step.data for step in self.steps if isinstance(step, Emit))


def _interleave(frames: tuple[Frame, ...], every: int, extra: Frame) -> tuple[Frame, ...]:
    """``extra`` after every ``every``-th frame, between frames only: nothing follows the
    stream's last event, which a client may stop reading at (the openai SDK stops at
    ``data: [DONE]``), so a comment after it would be bytes no client reads, and the
    answer it had read whole would look cut short."""
    out: list[Frame] = []
    for number, frame in enumerate(frames, start=1):
        out.append(frame)
        if number % every == 0 and number < len(frames):
            out.append(extra)
    return tuple(out)


def _require_dialect(name: str, ctx: FaultContext, dialect: Dialect, why: str) -> None:
    if ctx.dialect != dialect:
        raise ConfigError(f"{name}.dialect", ctx.dialect, repr(dialect), why)


def _check_event_count(field: str, value: int, count: int) -> None:
    if value > count:
        raise ConfigError(field, value, f"at most {count} (the stream has {count} events)")


def _drop_role(frames: tuple[Frame, ...], role: str) -> tuple[Frame, ...]:
    return tuple(frame for frame in frames if frame.role != role)


def _boundary(steps: tuple[Step, ...], offset: int, field: str) -> tuple[tuple[Step, ...], int]:
    """Make ``offset`` fall between two steps; return the steps and the index there.

    Steps already placed at that offset stay first, so faults keep their order.
    """
    position = 0
    for index, step in enumerate(steps):
        if not isinstance(step, Emit):
            if isinstance(step, Hang | Reset) and position == offset:
                return steps, index
            continue
        if position == offset:
            return steps, index
        end = position + len(step.data)
        if offset < end:
            cut = offset - position
            halves = (Emit(step.data[:cut]), Emit(step.data[cut:]))
            return (*steps[:index], *halves, *steps[index + 1 :]), index + 1
        position = end
    if offset == position:
        return steps, len(steps)
    raise ConfigError(field, offset, f"an offset <= {position} (the stream is {position} bytes)")


def _split_all(timeline: Timeline, offsets: Sequence[int], field: str) -> Timeline:
    steps = timeline.steps
    for offset in offsets:
        if not 0 < offset < timeline.length:
            raise ConfigError(
                field, offset,
                f"an offset in [1, {timeline.length - 1}] "
                f"(the stream is {timeline.length} bytes)",
            )
        steps, _ = _boundary(steps, offset, field)
    return dataclasses.replace(timeline, steps=steps)


def _insert(timeline: Timeline, offset: int, step: Step, field: str) -> Timeline:
    steps, index = _boundary(timeline.steps, offset, field)
    if isinstance(step, Hang | Reset):
        # Nothing arrives after a hang or a reset.
        return dataclasses.replace(timeline, steps=(*steps[:index], step))
    return dataclasses.replace(timeline, steps=(*steps[:index], step, *steps[index:]))


def _nth_match(matches: list[int], occurrence: int, field: str, what: str) -> int:
    if occurrence > len(matches):
        raise ConfigError(
            field, occurrence, f"at most {len(matches)} (the stream has {len(matches)} {what})"
        )
    return matches[occurrence - 1]


def _find_all(body: bytes, needle: bytes) -> list[int]:
    found: list[int] = []
    start = body.find(needle)
    while start != -1:
        found.append(start)
        start = body.find(needle, start + 1)
    return found


def _position(timeline: Timeline, cls: str, after_bytes: int | None, after_events: int | None
              ) -> tuple[int, str]:
    """The byte offset named by ``after_bytes`` or ``after_events``, and its field name."""
    if after_bytes is not None:
        return after_bytes, f"{cls}.after_bytes"
    assert after_events is not None
    ends = timeline.event_ends
    _check_event_count(f"{cls}.after_events", after_events, len(ends))
    return (ends[after_events - 1] if after_events else 0), f"{cls}.after_events"


# ------------------------------------------------------------------------ http


def error_headers(error: ports.HttpError) -> tuple[tuple[str, str], ...]:
    """The retry headers an error carries."""
    headers: list[tuple[str, str]] = []
    if error.retry_after is not None:
        headers.append(("retry-after", str(error.retry_after)))
    if error.retry_after_ms is not None:
        headers.append(("retry-after-ms", str(error.retry_after_ms)))
    if error.should_retry is not None:
        headers.append(("x-should-retry", "true" if error.should_retry else "false"))
    return tuple(headers)


def error_body(error: ports.HttpError, dialect: Dialect, request_id: str) -> bytes:
    """The JSON error body, as the dialect's API words it."""
    seconds = error.retry_after if isinstance(error.retry_after, int) else None
    return WIRE[dialect].http_error_body(error.status, error.message, request_id, seconds)


# -------------------------------------------------------------------- response


def apply_response(fault: ports.CutToolArguments | ports.DoomLoop,
                   response: ScriptedResponse) -> ScriptedResponse:
    """The answer as the fault leaves it: a cut call, or a loop in place of all of it."""
    if isinstance(fault, ports.DoomLoop):
        return dataclasses.replace(response, parts=(Text(fault.looped_text),), finish="length")
    return _cut_call(fault, response)


def _cut_call(fault: ports.CutToolArguments, response: ScriptedResponse) -> ScriptedResponse:
    """Keep the parts before the call, the cut call, and nothing after it."""
    position, call = _find_call(fault, response)
    text = call.argument_text
    cut = _cut_offset(fault, text)
    truncated = ToolUse(call.call_id, call.name, text[:cut])
    parts = (*response.parts[:position], truncated)
    return dataclasses.replace(response, parts=parts, finish=fault.finish)


def _find_call(fault: ports.CutToolArguments, response: ScriptedResponse) -> tuple[int, ToolUse]:
    calls = [(i, p) for i, p in enumerate(response.parts) if isinstance(p, ToolUse)]
    if fault.call_index >= len(calls):
        raise ConfigError(
            f"{type(fault).__name__}.call_index",
            fault.call_index,
            f"an index below {len(calls)} (the response has {len(calls)} tool calls)",
        )
    return calls[fault.call_index]


def _cut_offset(fault: ports.CutToolArguments, text: str) -> int:
    if fault.offset is None:
        fraction = 0.5 if fault.fraction is None else fault.fraction
        return int(len(text) * fraction)
    if fault.offset >= len(text):
        raise ConfigError(
            f"{type(fault).__name__}.offset",
            fault.offset,
            f"an offset below {len(text)} (the arguments are {len(text)} characters long)",
        )
    return fault.offset


# ---------------------------------------------------------------------- frames


def apply_frames(fault: ports.FrameFault, frames: Frames, ctx: FaultContext) -> Frames:
    """The events after ``fault`` bent them."""
    return _FRAME_ACTS[type(fault)](fault, frames, ctx)


def _inject_comments(fault: ports.InjectComments, frames: Frames, _ctx: FaultContext) -> Frames:
    return _interleave(frames, fault.every, Frame(comment=fault.text, role="comment"))


def _inject_pings(fault: ports.InjectPings, frames: Frames, ctx: FaultContext) -> Frames:
    _require_dialect("InjectPings", ctx, "anthropic", "only Anthropic streams have pings")
    return _interleave(frames, fault.every, _wire_anthropic.ping_frame())


def _malformed_frame(fault: ports.MalformedFrame, frames: Frames, _ctx: FaultContext) -> Frames:
    json_frames = [i for i, f in enumerate(frames) if f.data and f.data.startswith("{")]
    if fault.index not in json_frames:
        raise ConfigError(
            "MalformedFrame.index",
            fault.index,
            f"the index of a JSON event, one of {json_frames}",
        )
    frame = frames[fault.index]
    assert frame.data is not None
    broken = dataclasses.replace(frame, data=frame.data[: len(frame.data) // 2])
    return (*frames[: fault.index], broken, *frames[fault.index + 1 :])


def _error_in_stream(fault: ports.ErrorInStream, frames: Frames, ctx: FaultContext) -> Frames:
    _check_event_count("ErrorInStream.after_events", fault.after_events, len(frames))
    wire = WIRE[ctx.dialect]
    error_type = fault.error_type or wire.stream_error_type
    error = wire.stream_error_frame(fault.message, error_type, fault.after_events)
    return (*frames[: fault.after_events], error)


def _no_terminal_event(_fault: ports.NoTerminalEvent, frames: Frames, _ctx: FaultContext) -> Frames:
    return _drop_role(frames, "terminal")


def _no_usage_chunk(_fault: ports.NoUsageChunk, frames: Frames, ctx: FaultContext) -> Frames:
    _require_dialect(
        "NoUsageChunk", ctx, "openai",
        "only Chat Completions sends usage in a chunk of its own",
    )
    return _drop_role(frames, "usage")


def _empty_body(_fault: ports.EmptyBody, _frames: Frames, _ctx: FaultContext) -> Frames:
    return ()


# The acts take their own class; the table is looked up by the fault's class.
_FRAME_ACTS: Final[dict[type[ports.Fault], Callable[[Any, Frames, FaultContext], Frames]]] = {
    ports.InjectComments: _inject_comments,
    ports.InjectPings: _inject_pings,
    ports.MalformedFrame: _malformed_frame,
    ports.ErrorInStream: _error_in_stream,
    ports.NoTerminalEvent: _no_terminal_event,
    ports.NoUsageChunk: _no_usage_chunk,
    ports.EmptyBody: _empty_body,
}


# ----------------------------------------------------------------------- bytes


def apply_timeline(fault: ports.ByteFault, timeline: Timeline, ctx: FaultContext) -> Timeline:
    """The body's steps after ``fault`` bent them."""
    return _BYTE_ACTS[type(fault)](fault, timeline, ctx)


def _split_at(fault: ports.SplitAt, timeline: Timeline, _ctx: FaultContext) -> Timeline:
    return _split_all(timeline, fault.offsets, "SplitAt.offsets")


def _byte_at_a_time(_fault: ports.ByteAtATime, timeline: Timeline, _ctx: FaultContext) -> Timeline:
    steps: list[Step] = []
    for step in timeline.steps:
        if isinstance(step, Emit):
            steps += [Emit(step.data[i : i + 1]) for i in range(len(step.data))]
        else:
            steps.append(step)
    return dataclasses.replace(timeline, steps=tuple(steps))


def _random_splits(fault: ports.RandomSplits, timeline: Timeline, ctx: FaultContext) -> Timeline:
    available = max(timeline.length - 1, 0)
    if fault.count > available:
        raise ConfigError(
            "RandomSplits.count", fault.count,
            f"at most {available} (the stream is {timeline.length} bytes)",
        )
    offsets = sorted(ctx.rng.sample(range(1, timeline.length), fault.count))
    return _split_all(timeline, offsets, "RandomSplits.count")


def _split_inside_utf8(fault: ports.SplitInsideUtf8, timeline: Timeline, _ctx: FaultContext
                       ) -> Timeline:
    body = timeline.body
    # A lead byte of a multibyte sequence is 11xxxxxx.
    leads = [i for i, byte in enumerate(body) if byte >= 0xC0]
    field = "SplitInsideUtf8.occurrence"
    lead = _nth_match(leads, fault.occurrence, field, "multibyte characters")
    return _split_all(timeline, (lead + 1,), field)


def _split_inside_data_field(fault: ports.SplitInsideDataField, timeline: Timeline,
                             _ctx: FaultContext) -> Timeline:
    body = timeline.body
    starts = [i for i in _find_all(body, b"data:") if i == 0 or body[i - 1] in b"\r\n"]
    field = "SplitInsideDataField.occurrence"
    start = _nth_match(starts, fault.occurrence, field, "data: lines")
    return _split_all(timeline, (start + 2,), field)


def _split_between_cr_lf(fault: ports.SplitBetweenCrLf, timeline: Timeline, _ctx: FaultContext
                         ) -> Timeline:
    crlfs = _find_all(timeline.body, b"\r\n")
    field = "SplitBetweenCrLf.occurrence"
    if not crlfs:
        raise ConfigError(
            field, fault.occurrence, "a stream with CRLF line endings",
            "add LineEndings('crlf') to the faults",
        )
    crlf = _nth_match(crlfs, fault.occurrence, field, "CRLF line endings")
    return _split_all(timeline, (crlf + 1,), field)


def _stall(fault: ports.Stall, timeline: Timeline, _ctx: FaultContext) -> Timeline:
    offset, field = _position(timeline, "Stall", fault.after_bytes, fault.after_events)
    return _insert(timeline, offset, wait_step(fault), field)


def _connection_reset(fault: ports.ConnectionReset, timeline: Timeline, _ctx: FaultContext
                      ) -> Timeline:
    offset, field = _position(timeline, "ConnectionReset", fault.after_bytes, fault.after_events)
    return _insert(timeline, offset, Reset(), field)


def _slow_drip(fault: ports.SlowDrip, timeline: Timeline, _ctx: FaultContext) -> Timeline:
    gap = Pause(1.0 / fault.tokens_per_second)
    steps: list[Step] = []
    for step in timeline.steps:
        if isinstance(step, Emit) and any(isinstance(s, Emit) for s in steps):
            steps.append(gap)
        steps.append(step)
    return dataclasses.replace(timeline, steps=tuple(steps))


_BYTE_ACTS: Final[dict[type[ports.Fault], Callable[[Any, Timeline, FaultContext], Timeline]]] = {
    ports.SplitAt: _split_at,
    ports.ByteAtATime: _byte_at_a_time,
    ports.RandomSplits: _random_splits,
    ports.SplitInsideUtf8: _split_inside_utf8,
    ports.SplitInsideDataField: _split_inside_data_field,
    ports.SplitBetweenCrLf: _split_between_cr_lf,
    ports.Stall: _stall,
    ports.ConnectionReset: _connection_reset,
    ports.SlowDrip: _slow_drip,
}


# --------------------------------------------------------------------- headers


def wait_step(fault: ports.Stall | ports.StallBeforeHeaders | ports.StallConnecting) -> Step:
    """The silence a stall makes: a pause of its seconds, or a hang when it has none."""
    return Hang() if fault.seconds is None else Pause(float(fault.seconds))


ACTED_ON: Final = frozenset({*_FRAME_ACTS, *_BYTE_ACTS})
"""The frame and byte fault classes this module knows how to apply."""
