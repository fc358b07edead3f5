"""Fault declarations: what the fake provider does wrong, keyed to (turn, attempt).

Each fault kind is its own model, told apart by ``kind``. The kinds and their
fields are exactly those of :data:`fakes.FAULT_KINDS`, in the same order, so
the runner turns a declaration into the fake's value with
``fakes.FAULT_KINDS[fault.kind](**fault.fake_fields())`` — no table of
renamings to drift (a test compares both lists). :data:`Fault` is their union
and :data:`FAULT_KINDS` their names. A fault only describes; the fakes decide
how to apply it::

    >>> StallFault(kind="stall", at=FaultAt(turn=1), after_bytes=120, seconds=120).at.attempt
    1
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import BeforeValidator, Field, model_validator

from fakes import HttpErrorStatus
from harness.scenario._base import ScenarioModel
from harness.scenario._names import LineEndingStyle
from harness.scenario._problems import Problem, raise_if_any

# Bounds keep a typo (an extra zero) from turning a fast test into a slow one.
_MAX_COUNT: Final = 1_000_000
_MAX_SECONDS: Final = 7 * 24 * 3600.0

Count = Annotated[int, Field(ge=1, le=_MAX_COUNT)]
Index = Annotated[int, Field(ge=0, le=_MAX_COUNT)]
Seconds = Annotated[float, Field(gt=0, le=_MAX_SECONDS)]
# A stall of zero seconds is legal in the fakes (a read boundary and nothing else).
Pause = Annotated[float, Field(ge=0, le=_MAX_SECONDS)]
OneLine = Annotated[str, Field(min_length=1, max_length=1000, pattern=r"^[^\r\n]*$")]


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

    def fake_fields(self) -> dict[str, Any]:
        """The keyword arguments of the fake fault class of the same ``kind``.

        >>> ConnectionResetFault(kind="connection_reset", at=FaultAt(turn=1),
        ...                      after_events=2).fake_fields()
        {'after_bytes': None, 'after_events': 2}
        """
        return as_fake_fields(self.model_dump(exclude={"kind", "at"}))


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


# ------------------------------------------------------------------------ http


def _digits_as_seconds(value: object) -> object:
    # People quote header values ("60"); the fakes want whole seconds as an int.
    return int(value) if isinstance(value, str) and value.isdigit() else value


RetryAfter = Annotated[
    Annotated[int, Field(ge=0, le=_MAX_COUNT)]
    | Annotated[str, Field(min_length=1, max_length=100)],
    BeforeValidator(_digits_as_seconds),
]


class HttpErrorFault(_FaultBase):
    """Answer with an HTTP error status instead of a stream (rule S5)."""

    kind: Literal["http_error"]
    status: HttpErrorStatus
    """The status code; one the retry classifier has a rule for."""
    retry_after: RetryAfter | None = None
    """The Retry-After header: whole seconds (60) or an HTTP date."""
    retry_after_ms: Annotated[int, Field(ge=0, le=_MAX_COUNT * 1000)] | None = None
    """The retry-after-ms header, in milliseconds."""
    should_retry: bool | None = None
    """The x-should-retry header; absent when null."""
    message: Annotated[str, Field(min_length=1, max_length=1000)] | None = None
    """The error message in the JSON body; absent: the dialect's usual text."""

    @model_validator(mode="after")
    def _retry_after_shape(self) -> Self:
        raise_if_any(retry_after_problems(self.retry_after))
        return self


# -------------------------------------------------------------------- response


class _CutArguments(_FaultBase):
    call_index: Index = 0
    """Which call of the reply, from 0."""
    fraction: Annotated[float, Field(gt=0, lt=1)] | None = None
    """Cut at this fraction of the arguments' text (exclusive with offset); absent: 0.5."""
    offset: Index | None = None
    """Cut after this many characters of the arguments' text (exclusive with fraction)."""

    @model_validator(mode="after")
    def _one_cut(self) -> Self:
        if self.fraction is not None and self.offset is not None:
            raise_if_any([Problem(("offset",), "'fraction' and 'offset' exclude each other",
                                  got="both", expected="at most one of them", at_key=True)])
        return self


class TruncatedToolArgumentsFault(_CutArguments):
    """The model hits max_tokens inside a call's arguments; finish ``length`` (rule S6)."""

    kind: Literal["truncated_tool_arguments"]


class InvalidToolArgumentsFault(_CutArguments):
    """A buggy provider: finish ``tool_calls`` with cut, invalid JSON arguments."""

    kind: Literal["invalid_tool_arguments"]


# ---------------------------------------------------------------------- frames


class InjectCommentsFault(_FaultBase):
    """An SSE comment line (``: keep-alive``) after every few events."""

    kind: Literal["inject_comments"]
    every: Count = 1
    """Events between two comments."""
    text: OneLine = "keep-alive"
    """The comment's text."""


class InjectPingsFault(_FaultBase):
    """An Anthropic ``ping`` event after every few events (Anthropic only)."""

    kind: Literal["inject_pings"]
    every: Count = 1
    """Events between two pings."""


class MalformedFrameFault(_FaultBase):
    """Cut one JSON event's data in half, so it is not valid JSON."""

    kind: Literal["malformed_frame"]
    index: Index = 1
    """Which event, from 0; it must carry JSON."""


class ErrorInStreamFault(_FaultBase):
    """An error event ends the 200 stream after some events (rule S10)."""

    kind: Literal["error_in_stream"]
    after_events: Index = 1
    """Events sent before the error."""
    message: Annotated[str, Field(min_length=1, max_length=1000)] = "Overloaded"
    """The error's message."""
    error_type: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The provider's error type; absent: server_error (OpenAI) or overloaded_error."""


class NoTerminalEventFault(_FaultBase):
    """Close the stream cleanly but leave out ``[DONE]`` / ``message_stop`` (rule S9)."""

    kind: Literal["no_terminal_event"]


class NoUsageChunkFault(_FaultBase):
    """Leave out OpenAI's include_usage chunk (OpenAI only)."""

    kind: Literal["no_usage_chunk"]


class EmptyBodyFault(_FaultBase):
    """Answer 200 with stream headers and an empty body."""

    kind: Literal["empty_body"]


# -------------------------------------------------------------------- encoding


class LineEndingsFault(_FaultBase):
    """Frame SSE with these line endings instead of LF."""

    kind: Literal["line_endings"]
    style: LineEndingStyle = "crlf"
    """lf, cr or crlf."""


# ----------------------------------------------------------------------- bytes


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
    count: Count = 10
    """How many cuts to make."""


class SplitInsideUtf8Fault(_FaultBase):
    """Cut right after the lead byte of the n-th multi-byte UTF-8 character."""

    kind: Literal["split_inside_utf8"]
    occurrence: Count = 1
    """Which multi-byte character, from 1."""


class SplitInsideDataFieldFault(_FaultBase):
    """Cut the n-th ``data:`` field name between ``da`` and ``ta:``."""

    kind: Literal["split_inside_data_field"]
    occurrence: Count = 1
    """Which data line, from 1."""


class SplitBetweenCrLfFault(_FaultBase):
    """Cut the n-th CRLF between its CR and its LF (needs line_endings crlf)."""

    kind: Literal["split_between_cr_lf"]
    occurrence: Count = 1
    """Which CRLF, from 1."""


class StallFault(_AfterPoint):
    """Keep the connection open and send nothing, for a while or for ever.

    ``after_bytes: 0`` stalls after the headers, before the first body byte.
    """

    kind: Literal["stall"]
    seconds: Pause | None = None
    """Virtual seconds of silence; absent: for ever (only the idle watchdog ends it)."""


class ConnectionResetFault(_AfterPoint):
    """Drop the connection mid-body (a transport error on the reading side)."""

    kind: Literal["connection_reset"]


class SlowDripFault(_FaultBase):
    """Send the body at a steady, slow rate."""

    kind: Literal["slow_drip"]
    tokens_per_second: Annotated[float, Field(gt=0, le=_MAX_COUNT)] = 10.0
    """Virtual-time pace of the drip."""


# --------------------------------------------------------------------- headers


class StallBeforeHeadersFault(_FaultBase):
    """Accept the connection and wait before sending the response headers."""

    kind: Literal["stall_before_headers"]
    seconds: Pause | None = None
    """Virtual seconds before the headers; absent: for ever."""


Fault = Annotated[
    HttpErrorFault
    | TruncatedToolArgumentsFault
    | InvalidToolArgumentsFault
    | InjectCommentsFault
    | InjectPingsFault
    | MalformedFrameFault
    | ErrorInStreamFault
    | NoTerminalEventFault
    | NoUsageChunkFault
    | EmptyBodyFault
    | LineEndingsFault
    | SplitAtFault
    | ByteAtATimeFault
    | RandomSplitsFault
    | SplitInsideUtf8Fault
    | SplitInsideDataFieldFault
    | SplitBetweenCrLfFault
    | StallFault
    | ConnectionResetFault
    | SlowDripFault
    | StallBeforeHeadersFault,
    Field(discriminator="kind"),
]
"""Any fault; ``kind`` picks the model."""

FAULT_MODELS: Final[tuple[type[_FaultBase], ...]] = get_args(get_args(Fault)[0])
FAULT_KINDS: Final[tuple[str, ...]] = tuple(
    get_args(model.model_fields["kind"].annotation)[0] for model in FAULT_MODELS
)


def as_fake_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Lists become tuples: the fakes are frozen values and want immutable fields.

    >>> as_fake_fields({"offsets": [1, 7]})
    {'offsets': (1, 7)}
    """
    return {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}


def exactly_one(model: ScenarioModel, fields: tuple[str, str]) -> list[Problem]:
    """A problem unless exactly one of two exclusive fields is set (``False`` is unset).

    >>> exactly_one(ConnectionResetFault(kind="connection_reset", at=FaultAt(turn=1),
    ...                                  after_events=2), ("after_bytes", "after_events"))
    []
    """
    # ``is`` on purpose: 0 == False, and ``after_bytes: 0`` is a real position.
    given = [name for name in fields if getattr(model, name) not in _UNSET]
    if len(given) == 1:
        return []
    first, second = fields
    if given:
        return [Problem((second,), f"'{first}' and '{second}' exclude each other",
                        got="both", expected="exactly one of them", at_key=True)]
    return [Problem((), f"missing '{first}' or '{second}'",
                    expected=f"exactly one of them, such as '{first}: {_EXAMPLES[first]}'")]


_EXAMPLES: Final = {"after_bytes": "120", "seconds": "30"}


class _Unset:
    """Membership by identity: ``0`` and ``0.0`` are values, ``None`` and ``False`` are not."""

    def __contains__(self, value: object) -> bool:
        return value is None or value is False


_UNSET: Final = _Unset()


def retry_after_problems(value: int | str | None) -> list[Problem]:
    """A problem unless ``value`` is whole seconds or an HTTP date.

    >>> retry_after_problems("Wed, 21 Oct 2015 07:28:00 GMT")
    []
    """
    if value is None or isinstance(value, int) or _is_http_date(value):
        return []
    return [Problem(("retry_after",), "retry_after is neither seconds nor an HTTP date",
                    value=value, got=repr(value),
                    expected="whole seconds such as 60 or a date such as "
                    "\"Wed, 21 Oct 2015 07:28:00 GMT\"")]


def _is_http_date(value: str) -> bool:
    from email.utils import parsedate_to_datetime

    try:
        parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return False
    return True
