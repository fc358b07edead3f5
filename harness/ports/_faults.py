"""Fault declarations: what each fault kind is, its fields and their bounds.

Each fault is a frozen dataclass with a string ``kind`` (how a scenario names
it), validated when built. Each acts on one layer of the response, and a
sequence of faults applies layer by layer, in order within a layer:

==========  ==============================================================
layer       faults
==========  ==============================================================
http        :class:`HttpError` (replaces the stream with an error response)
response    :class:`TruncatedToolArguments`, :class:`InvalidToolArguments`,
            :class:`DoomLoop`
frames      :class:`InjectComments`, :class:`InjectPings`, :class:`MalformedFrame`,
            :class:`ErrorInStream`, :class:`NoTerminalEvent`, :class:`NoUsageChunk`,
            :class:`EmptyBody`
encoding    :class:`LineEndings`
bytes       :class:`SplitAt`, :class:`ByteAtATime`, :class:`RandomSplits`,
            :class:`SplitInsideUtf8`, :class:`SplitInsideDataField`,
            :class:`SplitBetweenCrLf`, :class:`Stall`, :class:`ConnectionReset`,
            :class:`SlowDrip`
headers     :class:`StallBeforeHeaders`, :class:`StallConnecting`
==========  ==============================================================

Each class is the one declaration of its kind: its fields' annotations carry
their limits and meaning (see :mod:`harness.ports._limits`), ``summary`` says what it
does, ``breaks_stream`` whether a stream it bent is faulty even when every
byte arrived, ``silences_stream`` and ``cuts_stream`` whether it leaves a begun
stream silent or ends it early (these three come from :data:`FAULT_MEANINGS`,
the table the checkers read too, never a kind's name).
The scenario models and their JSON Schema derive from it; the constructor checks
every field against the same annotations (:func:`check_fields`), the one check of
a fault's bounds whether it was built in Python or read from YAML. The rules that
join fields (exactly one strike point, increasing offsets) are declared once too,
as the class's ``rules``: each reads the fields and words what it finds as a
:class:`RuleBreach`, which the constructor raises and the scenario loader reports
on the scenario's line.

Declarations only: how a fault bends a stream is the fakes' business
(:mod:`fakes._faults`), so loading scenarios never loads the stream machinery.
A fault that only the stream can judge (a split offset past the end, a ping in
an OpenAI stream) raises :class:`~harness.ConfigError` when it is applied, with
the stream's length or dialect in the message.

Example::

    faults = (LineEndings("crlf"), SplitBetweenCrLf(), Stall(after_events=3, seconds=90))
"""

from __future__ import annotations

import dataclasses
import email.utils
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, get_args, get_type_hints

from annotated_types import Ge, Gt, Le, Lt, MinLen

from harness._errors import ConfigError
from harness.ports._fault_meanings import FAULT_MEANINGS
from harness.ports._limits import (
    MAX_COUNT,
    Count,
    Doc,
    Index,
    LineText,
    PauseSeconds,
    Rate,
    ShortText,
    Text,
    Wording,
    field_problem,
)

LineEnding = Literal["lf", "cr", "crlf"]
"""How SSE lines end: all three are legal."""

Layer = Literal["http", "response", "frames", "encoding", "bytes", "headers"]
LAYERS: tuple[Layer, ...] = get_args(Layer)

# The statuses a fake provider can be told to answer with: the ones the retry
# classifier (rule S5) has an opinion about, so every one of them is tested.
HttpErrorStatus = Literal[
    400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 525, 526, 529
]
HTTP_ERROR_STATUSES: tuple[HttpErrorStatus, ...] = get_args(HttpErrorStatus)


class Fault:
    """Base of every fault; ``kind`` names it in a scenario, ``layer`` says where it acts.

    ``summary`` is what a scenario's reader is told the fault does; ``breaks_stream``
    says that every byte may arrive and the stream is still faulty (a checker must not
    call it complete).
    """

    kind: ClassVar[str]
    layer: ClassVar[Layer]
    summary: ClassVar[str]
    breaks_stream: ClassVar[bool] = False
    silences_stream: ClassVar[bool] = False
    """The stream goes silent with the connection open after its response began."""
    cuts_stream: ClassVar[bool] = False
    """The stream ends early after its response began: a reset, an error event, no end."""
    loops_answer: ClassVar[bool] = False
    """The answer is one phrase said over and over (DoomLoop)."""
    rules: ClassVar[tuple[FaultRule, ...]] = ()
    """The rules that join fields (most faults have none), read by the constructor and by
    the scenario models alike."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # What a kind does to a stream is declared once, in the neutral layer the
        # checkers read too; a class takes it from there by its own kind.
        super().__init_subclass__(**kwargs)
        meaning = FAULT_MEANINGS.get(cls.__dict__.get("kind", ""))
        if meaning is not None:
            (cls.breaks_stream, cls.silences_stream, cls.cuts_stream,
             cls.loops_answer) = meaning

    def __post_init__(self) -> None:
        # Every field against its declared type and bounds, the ones the scenario
        # format reads too; then the rules that join fields, on values known sound.
        check_fields(self)
        for breach in rule_breaches(type(self), self):
            raise breach.error(type(self).__name__)


@dataclass(frozen=True)
class RuleBreach:
    """A combination of a fault's fields it cannot honour, worded once for both readers.

    ``loc`` is the field (and position in it) the breach points at, empty for the fault
    as a whole; ``at_key`` points a scenario's message at the field's key rather than
    its value. The other fields are the message's parts (``got``: ``None`` shows none).
    """

    loc: tuple[str | int, ...]
    problem: str
    expected: str
    value: object = None
    got: str | None = None
    at_key: bool = False

    def error(self, owner: str) -> ConfigError:
        """The breach as a fault built in Python raises it: ``Stall.after_events: …``."""
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in self.loc)
        return ConfigError(owner + where, self.value, self.expected, problem=self.problem,
                           got=self.got)


#: A rule: the fields (of a fault, or of the scenario model of one) in, a breach or None out.
FaultRule = Callable[[Any], RuleBreach | None]


def rule_breaches(declared: type[Fault], fields: object) -> list[RuleBreach]:
    """Every breach of ``declared``'s rules by ``fields`` (a fault or a scenario model of one)."""
    return [breach for rule in declared.rules if (breach := rule(fields)) is not None]


_DECLARED: dict[type[Fault], tuple[tuple[str, Any], ...]] = {}


def _declared(cls: type[Fault]) -> tuple[tuple[str, Any], ...]:
    """Each field of ``cls`` with its annotation, read once per class (faults are built often)."""
    if cls not in _DECLARED:
        hints = get_type_hints(cls, include_extras=True)
        _DECLARED[cls] = tuple((f.name, hints[f.name])
                               for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    return _DECLARED[cls]


def check_fields(fault: Fault) -> None:
    """Raise :class:`ConfigError` for the first field outside its declared type and bounds.

    >>> Stall(after_events=1, seconds=10**7)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    harness.ConfigError: Stall.seconds: got 10000000; expected a number of seconds ...
    """
    for name, hint in _declared(type(fault)):
        problem = field_problem(hint, getattr(fault, name))
        if problem is not None:
            raise ConfigError(f"{type(fault).__name__}.{name}", *problem)


# --------------------------------------------------------------------- validation


# Where Stall and ConnectionReset strike: exactly one of the two is given.
AfterBytes = Annotated[
    Index | None,
    Doc("Strike after this many body bytes were sent (exclusive with after_events)."),
]
AfterEvents = Annotated[
    Index | None,
    Doc("Strike after this many SSE events were sent (exclusive with after_bytes)."),
]


def _one_strike_point(fault: Any) -> RuleBreach | None:
    """Stall and ConnectionReset strike after bytes or after events: exactly one of them."""
    given = [name for name in ("after_bytes", "after_events") if getattr(fault, name) is not None]
    if len(given) == 1:
        return None
    if given:
        return RuleBreach(("after_events",), "'after_bytes' and 'after_events' exclude each other",
                          "exactly one of them", got="both", at_key=True)
    return RuleBreach((), "missing 'after_bytes' or 'after_events'",
                      "exactly one of them, such as 'after_bytes: 120'")


# ------------------------------------------------------------------------ http


@dataclass(frozen=True)
class HttpError(Fault):
    """Answer with an HTTP error and a JSON body in the dialect's format.

    ``retry_after`` is seconds (int) or an HTTP date (str); ``retry_after_ms``
    sets ``retry-after-ms``; ``should_retry`` sets ``x-should-retry``.

    >>> HttpError(429, retry_after=7).status
    429
    """

    kind: ClassVar[str] = "http_error"
    layer: ClassVar[Layer] = "http"
    summary: ClassVar[str] = "Answer with an HTTP error status instead of a stream (rule S5)."

    status: Annotated[
        HttpErrorStatus, Doc("The status code; one the retry classifier has a rule for.")
    ]
    retry_after: Annotated[
        Annotated[int, Ge(0), Le(MAX_COUNT)] | ShortText | None,
        Doc("The Retry-After header: whole seconds (60) or an HTTP date."),
    ] = None
    retry_after_ms: Annotated[
        Annotated[int, Ge(0), Le(MAX_COUNT * 1000)] | None,
        Doc("The retry-after-ms header, in milliseconds."),
    ] = None
    should_retry: Annotated[
        bool | None, Doc("The x-should-retry header; absent when null.")
    ] = None
    message: Annotated[
        Text | None, Doc("The error message in the JSON body; absent: the dialect's usual text.")
    ] = None

    def __post_init__(self) -> None:
        # Digits are whole seconds however they came ("60" as a quoted YAML value or a
        # header's text), so the bounds and the date rule judge them as seconds.
        object.__setattr__(self, "retry_after", whole_seconds(self.retry_after))
        super().__post_init__()

    @staticmethod
    def _seconds_or_date(fault: Any) -> RuleBreach | None:
        return retry_after_breach(fault.retry_after)

    rules: ClassVar[tuple[FaultRule, ...]] = (_seconds_or_date,)


def whole_seconds(value: object) -> object:
    """A Retry-After given as ASCII digits, as the int of seconds it means; else ``value``.

    >>> whole_seconds("60"), whole_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), whole_seconds("²")
    (60, 'Wed, 21 Oct 2015 07:28:00 GMT', '²')
    """
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return value


def is_http_date(value: str) -> bool:
    """Whether a Retry-After text is an HTTP date: the one reading of both the fault and
    the scenario's ``retry_after``.

    >>> is_http_date("Wed, 21 Oct 2015 07:28:00 GMT"), is_http_date("soon")
    (True, False)
    """
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return False
    return True


def retry_after_breach(value: object) -> RuleBreach | None:
    """A breach unless a Retry-After is whole seconds (or absent) or an HTTP date.

    >>> retry_after_breach("Wed, 21 Oct 2015 07:28:00 GMT") is None
    True
    """
    if not isinstance(value, str) or is_http_date(value):
        return None
    return RuleBreach(("retry_after",), "retry_after is neither seconds nor an HTTP date",
                      "whole seconds such as 60 or a date such as "
                      "\"Wed, 21 Oct 2015 07:28:00 GMT\"", value=value, got=repr(value))


# -------------------------------------------------------------------- response


@dataclass(frozen=True)
class CutToolArguments(Fault):
    """Cut one tool call's arguments at ``fraction`` (default 0.5) or ``offset`` characters."""

    layer: ClassVar[Layer] = "response"
    finish: ClassVar[Literal["length", "tool_calls"]]

    fraction: Annotated[
        Annotated[float, Gt(0), Lt(1)] | None,
        Doc("Cut at this fraction of the arguments' text (exclusive with offset); absent: 0.5."),
    ] = None
    offset: Annotated[
        Index | None,
        Doc("Cut after this many characters of the arguments' text (exclusive with fraction)."),
    ] = None
    call_index: Annotated[Index, Doc("Which call of the reply, from 0.")] = 0

    @staticmethod
    def _one_cut(fault: Any) -> RuleBreach | None:
        if fault.fraction is None or fault.offset is None:
            return None
        return RuleBreach(("offset",), "'fraction' and 'offset' exclude each other",
                          "at most one of them", got="both", at_key=True)

    rules: ClassVar[tuple[FaultRule, ...]] = (_one_cut,)


@dataclass(frozen=True)
class TruncatedToolArguments(CutToolArguments):
    """The model hits ``max_tokens`` inside a call's arguments (``length`` / ``max_tokens``).

    >>> TruncatedToolArguments(fraction=0.3).kind
    'truncated_tool_arguments'
    """

    kind: ClassVar[str] = "truncated_tool_arguments"
    summary: ClassVar[str] = (
        "The model hits max_tokens inside a call's arguments; finish ``length`` (rule S6)."
    )
    finish: ClassVar[Literal["length", "tool_calls"]] = "length"


@dataclass(frozen=True)
class InvalidToolArguments(CutToolArguments):
    """A buggy provider: ``tool_calls`` / ``tool_use`` with cut, invalid JSON arguments.

    >>> InvalidToolArguments(offset=3).kind
    'invalid_tool_arguments'
    """

    kind: ClassVar[str] = "invalid_tool_arguments"
    summary: ClassVar[str] = (
        "A buggy provider: finish ``tool_calls`` with cut, invalid JSON arguments."
    )
    finish: ClassVar[Literal["length", "tool_calls"]] = "tool_calls"


@dataclass(frozen=True)
class DoomLoop(Fault):
    """The model degenerates: one phrase, repeated until the output limit (seed 002 §19.1).

    The answer's text and calls give way to ``phrase`` said ``repeats`` times, and it
    ends at the output limit (``length`` / ``max_tokens``) with no tool call. A
    retry with the same request meets the same wall; only a resample with other
    sampling parameters may do better ("推理死循环(DoomLoop) 换法重采样").

    >>> DoomLoop(repeats=12).kind
    'doom_loop'
    """

    kind: ClassVar[str] = "doom_loop"
    layer: ClassVar[Layer] = "response"
    summary: ClassVar[str] = (
        "The answer is one phrase repeated until the output limit (finish ``length``), "
        "no tool call: a degenerate loop (DoomLoop)."
    )

    phrase: Annotated[
        ShortText, Doc("The phrase the model keeps saying, with a letter or a digit in it; a "
                       "space is put after each.")
    ] = "Let me look at the notes again."
    repeats: Annotated[
        Annotated[int, Ge(8), Le(10_000)],
        Doc("How many times the phrase is said, at least; a short phrase is said as often as "
            "fills 400 characters, since a loop runs on to the output limit."),
    ] = 60

    @staticmethod
    def _worded(fault: Any) -> RuleBreach | None:
        # Words, so that a reader of the stream can tell the answer is a loop.
        if any(c.isalnum() for c in fault.phrase):
            return None
        return RuleBreach(("phrase",), "the phrase has no letter or digit",
                          "a phrase with a letter or a digit", value=fault.phrase,
                          got=repr(fault.phrase))

    rules: ClassVar[tuple[FaultRule, ...]] = (_worded,)

    @property
    def looped_text(self) -> str:
        """The answer's whole text.

        >>> DoomLoop(phrase="Once more, then.", repeats=8).looped_text.count("then.")
        24
        >>> DoomLoop(phrase="Let me look at the notes again.", repeats=20).looped_text.count(".")
        20
        """
        unit = f"{self.phrase} "
        return unit * max(self.repeats, -(-LOOP_CHARACTERS // len(unit)))


#: The fewest characters a loop's answer runs to: it goes on until the output limit.
LOOP_CHARACTERS = 400


# ---------------------------------------------------------------------- frames


class FrameFault(Fault):
    """A fault on the stream's events, before they are encoded."""

    layer: ClassVar[Layer] = "frames"


@dataclass(frozen=True)
class InjectComments(FrameFault):
    """A ``: keep-alive`` comment after every ``every`` events, never after the last one.

    SSE clients must skip it.

    >>> InjectComments(every=2).text
    'keep-alive'
    """

    kind: ClassVar[str] = "inject_comments"
    summary: ClassVar[str] = "An SSE comment line (``: keep-alive``) after every few events."

    every: Annotated[Count, Doc("Events between two comments.")] = 1
    text: Annotated[LineText, Doc("The comment's text.")] = "keep-alive"


@dataclass(frozen=True)
class InjectPings(FrameFault):
    """An Anthropic ``ping`` event after every ``every`` events, never after the last one.

    >>> InjectPings(every=3).every
    3
    """

    kind: ClassVar[str] = "inject_pings"
    summary: ClassVar[str] = "An Anthropic ``ping`` event after every few events (Anthropic only)."

    every: Annotated[Count, Doc("Events between two pings.")] = 1


@dataclass(frozen=True)
class MalformedFrame(FrameFault):
    """The JSON of event number ``index`` (0-based) is cut in half.

    >>> MalformedFrame(index=2).index
    2
    """

    kind: ClassVar[str] = "malformed_frame"
    summary: ClassVar[str] = "Cut one JSON event's data in half, so it is not valid JSON."

    index: Annotated[Index, Doc("Which event, from 0; it must carry JSON.")] = 1


@dataclass(frozen=True)
class ErrorInStream(FrameFault):
    """After ``after_events`` events, an error event ends the 200 stream.

    Each dialect words it as its API does (see ``fakes._dialects``): OpenAI
    ``data: {"error": {...}}``, Anthropic and Responses ``event: error``, Gemini
    ``data: {"error": {"code", "status"}}``. ``error_type`` defaults to the
    dialect's overload word (``server_error``, ``overloaded_error``, ``UNAVAILABLE``).

    >>> ErrorInStream(after_events=4).kind
    'error_in_stream'
    """

    kind: ClassVar[str] = "error_in_stream"
    summary: ClassVar[str] = "An error event ends the 200 stream after some events (rule S10)."

    after_events: Annotated[Index, Doc("Events sent before the error.")] = 1
    message: Annotated[Text, Doc("The error's message.")] = "Overloaded"
    error_type: Annotated[
        ShortText | None,
        Doc("The provider's error type; absent: the dialect's (server_error, overloaded_error, "
            "UNAVAILABLE)."),
    ] = None


@dataclass(frozen=True)
class NoTerminalEvent(FrameFault):
    """The stream ends cleanly but without its terminal event.

    ``data: [DONE]`` (Chat Completions), ``message_stop`` (Anthropic),
    ``response.completed`` / ``response.incomplete`` (Responses), the chunk with
    ``finishReason`` (Gemini).

    >>> NoTerminalEvent().kind
    'no_terminal_event'
    """

    kind: ClassVar[str] = "no_terminal_event"
    summary: ClassVar[str] = (
        "Close the stream cleanly but leave out its terminal event (``[DONE]``, "
        "``message_stop``, ``response.completed``, Gemini's finishReason chunk; rule S9)."
    )


@dataclass(frozen=True)
class NoUsageChunk(FrameFault):
    """OpenAI Chat Completions leaves out the ``include_usage`` chunk (``choices: []``).

    >>> NoUsageChunk().kind
    'no_usage_chunk'
    """

    kind: ClassVar[str] = "no_usage_chunk"
    summary: ClassVar[str] = "Leave out Chat Completions' include_usage chunk (openai only)."


@dataclass(frozen=True)
class EmptyBody(FrameFault):
    """Status 200, stream headers, and a body with no bytes at all.

    >>> EmptyBody().kind
    'empty_body'
    """

    kind: ClassVar[str] = "empty_body"
    summary: ClassVar[str] = "Answer 200 with stream headers and an empty body."


# -------------------------------------------------------------------- encoding


@dataclass(frozen=True)
class LineEndings(Fault):
    """Encode every line with LF, CR or CRLF (all legal SSE).

    >>> LineEndings("cr").style
    'cr'
    """

    kind: ClassVar[str] = "line_endings"
    layer: ClassVar[Layer] = "encoding"
    summary: ClassVar[str] = "Frame SSE with these line endings instead of LF."

    style: Annotated[LineEnding, Doc("lf, cr or crlf.")] = "crlf"


# ----------------------------------------------------------------------- bytes


class ByteFault(Fault):
    """A fault on the encoded body's bytes and their timing."""

    layer: ClassVar[Layer] = "bytes"


@dataclass(frozen=True)
class SplitAt(ByteFault):
    """Cut the body into separate network reads at these byte offsets.

    >>> SplitAt((1, 10)).offsets
    (1, 10)
    """

    kind: ClassVar[str] = "split_at"
    summary: ClassVar[str] = "Cut the body into network reads at these byte offsets."

    offsets: Annotated[
        tuple[Count, ...],
        MinLen(1),
        Doc("Byte offsets (from 1) where a read ends, in increasing order."),
    ]

    @staticmethod
    def _increasing(fault: Any) -> RuleBreach | None:
        # Read boundaries come in order.
        for index, (before, offset) in enumerate(itertools.pairwise(fault.offsets), 1):
            if offset <= before:
                return RuleBreach(("offsets", index), "offsets must increase",
                                  f"an offset greater than {before}", value=offset,
                                  got=str(offset))
        return None

    rules: ClassVar[tuple[FaultRule, ...]] = (_increasing,)


@dataclass(frozen=True)
class ByteAtATime(ByteFault):
    """Every byte arrives in its own read (the harshest chunking).

    >>> ByteAtATime().kind
    'byte_at_a_time'
    """

    kind: ClassVar[str] = "byte_at_a_time"
    summary: ClassVar[str] = "Deliver the body one byte per network read."


@dataclass(frozen=True)
class RandomSplits(ByteFault):
    """``count`` extra read boundaries at seeded random offsets.

    >>> RandomSplits(count=20).count
    20
    """

    kind: ClassVar[str] = "random_splits"
    summary: ClassVar[str] = "Cut the body at ``count`` offsets drawn from the scenario's seed."

    count: Annotated[Count, Doc("How many cuts to make.")] = 10


@dataclass(frozen=True)
class SplitInsideUtf8(ByteFault):
    """Split right after the lead byte of the ``occurrence``-th multibyte character.

    >>> SplitInsideUtf8(occurrence=2).occurrence
    2
    """

    kind: ClassVar[str] = "split_inside_utf8"
    summary: ClassVar[str] = "Cut right after the lead byte of the n-th multi-byte UTF-8 character."

    occurrence: Annotated[Count, Doc("Which multi-byte character, from 1.")] = 1


@dataclass(frozen=True)
class SplitInsideDataField(ByteFault):
    """Split the ``occurrence``-th ``data:`` field name between ``da`` and ``ta:``.

    >>> SplitInsideDataField().occurrence
    1
    """

    kind: ClassVar[str] = "split_inside_data_field"
    summary: ClassVar[str] = "Cut the n-th ``data:`` field name between ``da`` and ``ta:``."

    occurrence: Annotated[Count, Doc("Which data line, from 1.")] = 1


@dataclass(frozen=True)
class SplitBetweenCrLf(ByteFault):
    """Split the ``occurrence``-th CRLF between ``\\r`` and ``\\n`` (needs CRLF endings).

    >>> SplitBetweenCrLf().occurrence
    1
    """

    kind: ClassVar[str] = "split_between_cr_lf"
    summary: ClassVar[str] = (
        "Cut the n-th CRLF between its CR and its LF (needs line_endings crlf)."
    )

    occurrence: Annotated[Count, Doc("Which CRLF, from 1.")] = 1


@dataclass(frozen=True)
class Stall(ByteFault):
    """No data for ``seconds`` (``None``: forever) after some bytes or events; connection open.

    ``Stall(after_bytes=0)`` stalls after the headers, before the first body byte.

    >>> Stall(after_events=3, seconds=120).seconds
    120
    """

    kind: ClassVar[str] = "stall"
    summary: ClassVar[str] = (
        "Keep the connection open and send nothing, for a while or for ever.\n\n"
        "``after_bytes: 0`` stalls after the headers, before the first body byte."
    )

    after_bytes: AfterBytes = None
    after_events: AfterEvents = None
    seconds: Annotated[
        PauseSeconds | None,
        Doc("Virtual seconds of silence; absent: for ever (only the idle watchdog ends it)."),
        Wording(none="to stall forever"),
    ] = None

    rules: ClassVar[tuple[FaultRule, ...]] = (_one_strike_point,)


@dataclass(frozen=True)
class ConnectionReset(ByteFault):
    """The connection is reset after some bytes or events (the client's read fails).

    >>> ConnectionReset(after_bytes=100).after_bytes
    100
    """

    kind: ClassVar[str] = "connection_reset"
    summary: ClassVar[str] = "Drop the connection mid-body (a transport error on the reading side)."

    after_bytes: AfterBytes = None
    after_events: AfterEvents = None

    rules: ClassVar[tuple[FaultRule, ...]] = (_one_strike_point,)


@dataclass(frozen=True)
class SlowDrip(ByteFault):
    """Reads arrive at ``tokens_per_second``: a pause of ``1/rate`` between reads.

    >>> SlowDrip(tokens_per_second=4).tokens_per_second
    4
    """

    kind: ClassVar[str] = "slow_drip"
    summary: ClassVar[str] = "Send the body at a steady, slow rate."

    tokens_per_second: Annotated[Rate, Doc("Virtual-time pace of the drip.")] = 10.0


# --------------------------------------------------------------------- headers


@dataclass(frozen=True)
class StallBeforeHeaders(Fault):
    """No response at all (not even headers) for ``seconds``; ``None``: forever.

    >>> StallBeforeHeaders(seconds=30).seconds
    30
    """

    kind: ClassVar[str] = "stall_before_headers"
    layer: ClassVar[Layer] = "headers"
    summary: ClassVar[str] = "Accept the connection and wait before sending the response headers."

    seconds: Annotated[
        PauseSeconds | None, Doc("Virtual seconds before the headers; absent: for ever."),
        Wording(none="to stall forever"),
    ] = None


@dataclass(frozen=True)
class StallConnecting(Fault):
    """The connection is not accepted for ``seconds``; ``None``: never.

    A client's *connect* timeout governs this wait (its read timeout governs a
    stall before the headers); a client whose transport has no connect phase
    (a mock) just waits, as before the headers.

    >>> StallConnecting(seconds=15).seconds
    15
    """

    kind: ClassVar[str] = "stall_connecting"
    layer: ClassVar[Layer] = "headers"
    summary: ClassVar[str] = "Leave the connection unaccepted: nothing happens until it is."

    seconds: Annotated[
        PauseSeconds | None, Doc("Virtual seconds before the connection is accepted; none: never."),
        Wording(none="to stall forever"),
    ] = None


# ---------------------------------------------------------------------- outage

OutageAnswer = Literal[500, 502, 503, 529, "connection_reset", "stall"]
"""What a provider in an outage answers every request with: a status, a dropped connection,
or a stream whose headers come and then nothing (``stall``: only a timeout ends it)."""
OUTAGE_ANSWERS: tuple[OutageAnswer, ...] = get_args(OutageAnswer)


# -------------------------------------------------------------------- registry

FAULT_TYPES: tuple[type[Fault], ...] = (
    HttpError, TruncatedToolArguments, InvalidToolArguments, DoomLoop, InjectComments,
    InjectPings,
    MalformedFrame, ErrorInStream, NoTerminalEvent, NoUsageChunk, EmptyBody, LineEndings,
    SplitAt, ByteAtATime, RandomSplits, SplitInsideUtf8, SplitInsideDataField,
    SplitBetweenCrLf, Stall, ConnectionReset, SlowDrip, StallBeforeHeaders, StallConnecting,
)
FAULT_KINDS: dict[str, type[Fault]] = {cls.kind: cls for cls in FAULT_TYPES}
"""Every fault class by the ``kind`` a scenario names it with."""

def check_faults(faults: Sequence[Fault]) -> None:
    """Refuse combinations that cannot be honoured, before anything runs."""
    for fault in faults:
        if not isinstance(fault, Fault):
            raise ConfigError("faults", fault, "Fault values such as Stall(after_events=2)")
    http = [fault for fault in faults if fault.layer == "http"]
    if len(http) > 1:
        raise ConfigError("faults", [f.kind for f in http], "at most one 'http_error'")
    body = [f.kind for f in faults if f.layer in ("response", "frames", "encoding")]
    if http and body:
        raise ConfigError(
            "faults", body, "only byte and header faults beside 'http_error'",
            "an error response has no stream to bend",
        )
    response = [f.kind for f in faults if f.layer == "response"]
    if "doom_loop" in response and len(response) > 1:
        raise ConfigError(
            "faults", response, "'doom_loop' alone among the response faults",
            "a looping answer has no tool call left to cut",
        )
