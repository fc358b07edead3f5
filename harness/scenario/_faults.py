"""Fault declarations: what the fake provider does wrong, keyed to (turn, attempt).

Each fault kind is its own model, told apart by ``kind``; :data:`Fault` is their
union and :data:`FAULT_KINDS` their names, in the order of the list below. A
fault only describes; the fakes decide how to apply it::

    >>> StallFault(kind="stall", at=FaultAt(turn=1), after_bytes=120, seconds=120).at.attempt
    1
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, Self, get_args

from pydantic import BeforeValidator, Field, model_validator

from harness.scenario._base import ScenarioModel
from harness.scenario._names import HttpErrorStatus, LineEndingStyle
from harness.scenario._problems import Problem, raise_if_any

# Bounds keep a typo (an extra zero) from turning a fast test into a slow one.
_MAX_COUNT: Final = 1_000_000
_MAX_SECONDS: Final = 7 * 24 * 3600.0

Count = Annotated[int, Field(ge=1, le=_MAX_COUNT)]
Index = Annotated[int, Field(ge=0, le=_MAX_COUNT)]
Seconds = Annotated[float, Field(gt=0, le=_MAX_SECONDS)]


class FaultAt(ScenarioModel):
    """Which request a fault hits: the n-th attempt of the conversation's turn.

    Keyed to the turn, not to a request counter, so a restarted agent that
    re-sends a request meets the same fault (DESIGN §3).
    """

    turn: Count
    """The conversation turn, from 1: the number of assistant replies so far plus one."""
    attempt: Count = 1
    """The attempt of that turn, from 1; retries after a failure are attempts 2, 3, …"""


class _FaultBase(ScenarioModel):
    at: FaultAt
    """The request this fault applies to."""


class _AfterPoint(_FaultBase):
    """A fault that strikes part-way through the body: after bytes or after events."""

    after_bytes: Index | None = None
    """Strike after this many body bytes were sent (exclusive with after_events)."""
    after_events: Index | None = None
    """Strike after this many SSE events were sent (exclusive with after_bytes)."""

    @model_validator(mode="after")
    def _one_strike_point(self) -> Self:
        raise_if_any(exactly_one(self, ("after_bytes", "after_events")))
        return self


class SplitAtFault(_FaultBase):
    """Cut the body into network reads at these byte offsets."""

    kind: Literal["split_at"]
    offsets: Annotated[list[Count], Field(min_length=1)]
    """Byte offsets (from 1) where a read ends, in increasing order."""

    @model_validator(mode="after")
    def _increasing(self) -> Self:
        pairs = zip(self.offsets, self.offsets[1:], strict=False)
        raise_if_any([
            Problem(("offsets", i + 1), "offsets must increase", value=b, got=str(b),
                    expected=f"an offset greater than {a}")
            for i, (a, b) in enumerate(pairs) if b <= a
        ][:1])
        return self


class ByteAtATimeFault(_FaultBase):
    """Deliver the body one byte per network read."""

    kind: Literal["byte_at_a_time"]


class RandomSplitsFault(_FaultBase):
    """Cut the body at ``count`` offsets drawn from the scenario's seed."""

    kind: Literal["random_splits"]
    count: Count
    """How many cuts to make."""


class SplitUtf8Fault(_FaultBase):
    """Cut every multi-byte UTF-8 character between two reads."""

    kind: Literal["split_utf8"]


class SplitDataPrefixFault(_FaultBase):
    """Cut inside every ``data:`` field name."""

    kind: Literal["split_data_prefix"]


class SplitCrlfFault(_FaultBase):
    """Cut every CRLF between its CR and its LF (needs line_endings crlf to matter)."""

    kind: Literal["split_crlf"]


class LineEndingsFault(_FaultBase):
    """Frame SSE with these line endings instead of LF."""

    kind: Literal["line_endings"]
    style: LineEndingStyle
    """lf, cr or crlf."""


class KeepaliveCommentsFault(_FaultBase):
    """Send an SSE comment line (``: keep-alive``) every few events."""

    kind: Literal["keepalive_comments"]
    every_events: Count
    """Events between two comments."""


class PingEventsFault(_FaultBase):
    """Send a provider ping event (Anthropic ``ping``) every few events."""

    kind: Literal["ping_events"]
    every_events: Count
    """Events between two pings."""


class StallFault(_AfterPoint):
    """Keep the connection open and send nothing, for a while or for ever."""

    kind: Literal["stall"]
    seconds: Seconds | None = None
    """Virtual seconds of silence (exclusive with forever)."""
    forever: bool = False
    """Never send again; only the reader's idle watchdog ends the attempt."""

    @model_validator(mode="after")
    def _one_duration(self) -> Self:
        raise_if_any(exactly_one(self, ("seconds", "forever")))
        return self


class StallBeforeHeadersFault(_FaultBase):
    """Accept the connection and wait before sending the response headers."""

    kind: Literal["stall_before_headers"]
    seconds: Seconds
    """Virtual seconds before the headers."""


class StallBeforeFirstByteFault(_FaultBase):
    """Send the headers, then wait before the first body byte."""

    kind: Literal["stall_before_first_byte"]
    seconds: Seconds
    """Virtual seconds between headers and first byte."""


class ResetFault(_AfterPoint):
    """Drop the connection mid-body (a transport error on the reading side)."""

    kind: Literal["reset"]


class NoTerminalEventFault(_FaultBase):
    """Close the stream cleanly but leave out ``[DONE]`` / ``message_stop`` (rule S9)."""

    kind: Literal["no_terminal_event"]


class NoUsageFault(_FaultBase):
    """Leave the usage numbers out of the stream."""

    kind: Literal["no_usage"]


class TruncateToolArgsFault(_FaultBase):
    """Cut one tool call's JSON arguments short and finish with ``length`` (rule S6)."""

    kind: Literal["truncate_tool_args"]
    call_index: Index = 0
    """Which call of the reply, from 0."""
    at_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.5
    """Where to cut the arguments' text, as a fraction of its length."""


class InvalidToolJsonFault(_FaultBase):
    """Send a complete tool call whose arguments are not valid JSON."""

    kind: Literal["invalid_tool_json"]
    call_index: Index = 0
    """Which call of the reply, from 0."""


class MalformedFrameFault(_FaultBase):
    """Replace one SSE event with a frame that is not valid SSE/JSON."""

    kind: Literal["malformed_frame"]
    event_index: Index
    """Which event, from 0."""


class StreamErrorFault(_FaultBase):
    """Send an error inside the 200 stream after some events (rule S10)."""

    kind: Literal["stream_error"]
    after_events: Index = 0
    """Events sent before the error."""
    error_type: Annotated[str, Field(min_length=1, max_length=100)]
    """The provider's error type, such as 'overloaded_error' or 'server_error'."""


def _seconds_as_text(value: object) -> object:
    # The header is text, but `retry_after: 60` is what people write.
    is_whole = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return str(value) if is_whole else value


RetryAfter = Annotated[
    str,
    BeforeValidator(_seconds_as_text, json_schema_input_type=int | str),
    Field(min_length=1, max_length=100),
]


class HttpErrorFault(_FaultBase):
    """Answer with an HTTP error status instead of a stream (rule S5)."""

    kind: Literal["http_error"]
    status: HttpErrorStatus
    """The status code; one the retry classifier has a rule for."""
    retry_after: RetryAfter | None = None
    """The Retry-After header: seconds ("60") or an HTTP date."""
    retry_after_ms: Annotated[int, Field(ge=0, le=_MAX_COUNT * 1000)] | None = None
    """The retry-after-ms header, in milliseconds."""
    should_retry: bool | None = None
    """The x-should-retry header; absent when null."""

    @model_validator(mode="after")
    def _retry_after_shape(self) -> Self:
        raise_if_any(retry_after_problems(self.retry_after))
        return self


class EmptyBodyFault(_FaultBase):
    """Answer 200 with an empty body."""

    kind: Literal["empty_body"]


class SlowDripFault(_FaultBase):
    """Send the body at a steady, slow rate."""

    kind: Literal["slow_drip"]
    tokens_per_second: Annotated[float, Field(gt=0, le=_MAX_COUNT)]
    """Virtual-time pace of the drip."""


Fault = Annotated[
    SplitAtFault
    | ByteAtATimeFault
    | RandomSplitsFault
    | SplitUtf8Fault
    | SplitDataPrefixFault
    | SplitCrlfFault
    | LineEndingsFault
    | KeepaliveCommentsFault
    | PingEventsFault
    | StallFault
    | StallBeforeHeadersFault
    | StallBeforeFirstByteFault
    | ResetFault
    | NoTerminalEventFault
    | NoUsageFault
    | TruncateToolArgsFault
    | InvalidToolJsonFault
    | MalformedFrameFault
    | StreamErrorFault
    | HttpErrorFault
    | EmptyBodyFault
    | SlowDripFault,
    Field(discriminator="kind"),
]
"""Any fault; ``kind`` picks the model."""

FAULT_MODELS: Final[tuple[type[_FaultBase], ...]] = get_args(get_args(Fault)[0])
FAULT_KINDS: Final[tuple[str, ...]] = tuple(
    get_args(model.model_fields["kind"].annotation)[0] for model in FAULT_MODELS
)


def exactly_one(model: ScenarioModel, fields: tuple[str, str]) -> list[Problem]:
    """A problem unless exactly one of two exclusive fields is set (``False`` is unset).

    >>> exactly_one(ResetFault(kind="reset", at=FaultAt(turn=1), after_events=2),
    ...             ("after_bytes", "after_events"))
    []
    """
    given = [name for name in fields if getattr(model, name) not in (None, False)]
    if len(given) == 1:
        return []
    first, second = fields
    if given:
        return [Problem((second,), f"'{first}' and '{second}' exclude each other",
                        got="both", expected="exactly one of them", at_key=True)]
    return [Problem((), f"missing '{first}' or '{second}'",
                    expected=f"exactly one of them, such as '{first}: {_EXAMPLES[first]}'")]


_EXAMPLES: Final = {"after_bytes": "120", "seconds": "30"}


def retry_after_problems(value: str | None) -> list[Problem]:
    """A problem unless ``value`` is whole seconds or an HTTP date.

    >>> retry_after_problems("Wed, 21 Oct 2015 07:28:00 GMT")
    []
    """
    if value is None or value.isdigit() or _is_http_date(value):
        return []
    return [Problem(("retry_after",), "retry_after is neither seconds nor an HTTP date",
                    value=value, got=repr(value),
                    expected="whole seconds such as \"60\" or a date such as "
                    "\"Wed, 21 Oct 2015 07:28:00 GMT\"")]


def _is_http_date(value: str) -> bool:
    from email.utils import parsedate_to_datetime

    try:
        parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return False
    return True
