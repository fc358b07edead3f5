"""Every fault of the fake providers against the reference stream client, on virtual time.

Each row states what the client must commit, retry and report: the outcome, the
status of every attempt, the retry events it persisted (S7) and the virtual time
at which it finished. Jitter is off so the times are exact; seeded jitter has its
own tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from fakes import (
    ByteAtATime,
    ConnectionReset,
    EmptyBody,
    ErrorInStream,
    Fault,
    HttpError,
    InjectComments,
    InjectPings,
    InvalidToolArguments,
    LineEndings,
    MalformedFrame,
    NoTerminalEvent,
    NoUsageChunk,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SlowDrip,
    SplitBetweenCrLf,
    SplitInsideDataField,
    SplitInsideUtf8,
    Stall,
    StallBeforeHeaders,
    Text,
    ToolUse,
    TruncatedToolArguments,
)
from harness.agent import StreamConfig
from harness.ports import DIALECTS, Dialect

from ._streaming import run_client

CONFIG = StreamConfig(backoff_jitter=0.0)
#: The dialects that stream a call's arguments in fragments (Gemini sends them whole).
STREAMED_ARGUMENTS: tuple[Dialect, ...] = tuple(d for d in DIALECTS if d != "gemini")
RESPONSE = ScriptedResponse(
    parts=(
        Text("Écrire la note — 中文 🙂 then mail."),
        ToolUse("call_1", "append_note", {"line": "hello ✓"}),
        ToolUse("call_2", "send_mail", {"to": "ops@example.com", "body": "done"}),
    ),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=1500, output_tokens=60, cache_read_tokens=1024),
)
TEXT = "Écrire la note — 中文 🙂 then mail."


@dataclass(frozen=True)
class Row:
    """What the client does with one fault on the first attempt of turn 1."""

    faults: tuple[Fault, ...]
    outcome: str
    attempts: tuple[str, ...]
    ended_at: float
    retry_reasons: tuple[str, ...] = ()
    error_kind: str | None = None
    dialects: tuple[Dialect, ...] = DIALECTS
    notes: dict[str, object] = field(default_factory=dict)


def _retried(first_status: str, kind: str, at: float, reason: str, **extra: object) -> Row:
    faults = extra.pop("faults")
    assert isinstance(faults, tuple)
    return Row(faults, "committed", (first_status, "complete"), at, (reason,), kind, **extra)  # type: ignore[arg-type]


ROWS: dict[str, Row] = {
    "no fault": Row((), "committed", ("complete",), 0.0),
    # chunking and framing: nothing to retry, the same message
    "byte at a time": Row((ByteAtATime(),), "committed", ("complete",), 0.0),
    "random splits": Row((RandomSplits(50),), "committed", ("complete",), 0.0),
    "split inside utf-8": Row((SplitInsideUtf8(2),), "committed", ("complete",), 0.0),
    "split inside data:": Row((SplitInsideDataField(3),), "committed", ("complete",), 0.0),
    "split between CR and LF": Row(
        (LineEndings("crlf"), SplitBetweenCrLf(4)), "committed", ("complete",), 0.0
    ),
    "CR line endings": Row((LineEndings("cr"),), "committed", ("complete",), 0.0),
    "keep-alive comments": Row((InjectComments(every=1),), "committed", ("complete",), 0.0),
    "ping events": Row(
        (InjectPings(every=1),), "committed", ("complete",), 0.0, dialects=("anthropic",)
    ),
    "slow drip": Row((SlowDrip(tokens_per_second=5),), "committed", ("complete",), -1.0),
    # stalls: the idle watchdog (30 s) and the first-byte timeout (60 s) are apart (S1)
    "short stall under the watchdog": Row(
        (Stall(after_events=3, seconds=20),), "committed", ("complete",), 20.0
    ),
    "120 s stall mid-stream": _retried(
        "interrupted", "idle_timeout", 32.0, "idle_timeout",
        faults=(Stall(after_events=3, seconds=120),),
    ),
    "stall forever mid-stream": _retried(
        "interrupted", "idle_timeout", 32.0, "idle_timeout", faults=(Stall(after_events=3),)
    ),
    "stall after headers, before the first byte": _retried(
        "interrupted", "first_byte_timeout", 62.0, "first_byte_timeout",
        faults=(Stall(after_bytes=0),),
    ),
    "stall before headers": _retried(
        "failed", "first_byte_timeout", 62.0, "first_byte_timeout",
        faults=(StallBeforeHeaders(),),
    ),
    # cuts: never committed, never joined to the retry (S2, S9)
    "connection reset": _retried(
        "interrupted", "reset", 2.0, "reset", faults=(ConnectionReset(after_events=3),)
    ),
    "no terminal event": _retried(
        "interrupted", "truncated_stream", 2.0, "truncated_stream", faults=(NoTerminalEvent(),)
    ),
    "empty 200 body": _retried(
        "interrupted", "truncated_stream", 2.0, "truncated_stream", faults=(EmptyBody(),)
    ),
    "no usage chunk": Row(
        (NoUsageChunk(),), "committed", ("complete",), 0.0, dialects=("openai",),
        notes={"usage": None},
    ),
    # truncated arguments: no tool runs, the same input is not re-sampled (S6)
    "arguments cut at max_tokens": Row(
        (TruncatedToolArguments(fraction=0.5, call_index=1),), "truncated", ("truncated",), 0.0,
        dialects=STREAMED_ARGUMENTS,
    ),
    "invalid JSON under tool_calls": Row(
        (InvalidToolArguments(fraction=0.5, call_index=0),), "committed", ("complete",), 0.0,
        notes={"invalid_call": "call_1"}, dialects=STREAMED_ARGUMENTS,
    ),
    # Gemini sends a call whole or not at all: the cut call never arrives, the whole
    # one before it is rejected with the cut message (S6) ...
    "Gemini: arguments cut at MAX_TOKENS": Row(
        (TruncatedToolArguments(fraction=0.5, call_index=1),), "truncated", ("truncated",), 0.0,
        dialects=("gemini",), notes={"rejected": ["call_1"]},
    ),
    # ... and a call it cannot parse ends the answer with MALFORMED_FUNCTION_CALL: no
    # call of it may run, the attempt is retried as an in-stream error.
    "Gemini: MALFORMED_FUNCTION_CALL": _retried(
        "interrupted", "stream_error", 2.0, "backoff 2s",
        faults=(InvalidToolArguments(fraction=0.5, call_index=0),), dialects=("gemini",),
    ),
    # errors inside a 200 stream are classified like HTTP errors (S10)
    "malformed frame": Row(
        (MalformedFrame(index=1),), "failed", ("interrupted",), 0.0,
        error_kind="malformed_frame",
    ),
    "error inside the stream": _retried(
        "interrupted", "stream_error", 2.0, "backoff 2s", faults=(ErrorInStream(after_events=2),)
    ),
}


def _http(status: int, **headers: object) -> tuple[Fault, ...]:
    return (HttpError(status, **headers),)  # type: ignore[arg-type]


for _status in (408, 409, 500, 502, 503, 504, 529):
    ROWS[f"HTTP {_status}"] = _retried("failed", "http_status", 2.0, f"{_status}",
                                       faults=_http(_status))
for _status in (400, 401, 403, 404, 422, 525, 526):
    ROWS[f"HTTP {_status}"] = Row(_http(_status), "failed", ("failed",), 0.0,
                                  error_kind="http_status")
ROWS["HTTP 429, Retry-After: 60"] = _retried(
    "failed", "http_status", 60.0, "429", faults=_http(429, retry_after=60)
)
ROWS["HTTP 429, retry-after-ms: 1500"] = _retried(
    "failed", "http_status", 1.5, "429", faults=_http(429, retry_after_ms=1500)
)
ROWS["HTTP 429, Retry-After as an HTTP date 45 s ahead"] = _retried(
    "failed", "http_status", 45.0, "429",
    faults=_http(429, retry_after="Thu, 01 Jan 2026 00:00:45 GMT"),
)
ROWS["HTTP 429, Retry-After above the cap"] = Row(
    _http(429, retry_after=3600), "failed", ("failed",), 0.0, error_kind="http_status"
)
ROWS["HTTP 503, x-should-retry: false"] = Row(
    _http(503, should_retry=False), "failed", ("failed",), 0.0, error_kind="http_status"
)
ROWS["HTTP 400, x-should-retry: true is only advice"] = Row(
    _http(400, should_retry=True), "failed", ("failed",), 0.0, error_kind="http_status"
)
ROWS["HTTP 413 drops images and retries once"] = _retried(
    "failed", "http_status", 2.0, "413", faults=_http(413)
)

CASES = [
    pytest.param(dialect, row, id=f"{dialect}: {name}")
    for name, row in ROWS.items()
    for dialect in row.dialects
]


@pytest.mark.parametrize(("dialect", "row"), CASES)
def test_the_client_commits_retries_and_reports_exactly(dialect: Dialect, row: Row) -> None:
    result, log, provider, ended_at = run_client(
        dialect, RESPONSE, {(1, 1): row.faults}, config=CONFIG
    )

    assert result.outcome == row.outcome, result.error
    assert tuple(a.status for a in result.attempts) == row.attempts
    assert len({a.attempt_id for a in result.attempts}) == len(result.attempts)
    assert len(provider.requests) == len(result.attempts)
    # the provider sees which attempt each request is, and at which layer it was retried
    assert [r.headers.get("x-attempt-id") for r in provider.requests] == [
        a.attempt_id for a in result.attempts]
    assert [r.headers.get("x-retry-layer") for r in provider.requests] == [
        None, *(e.layer for e in log.events if e.kind == "retry_started")]
    if row.ended_at >= 0:
        assert ended_at == pytest.approx(row.ended_at)
    else:
        assert ended_at > 0
    _check_retry_events(row, log.events, result.attempts)
    _check_error(row, result)
    _check_message(row, result)


def _check_retry_events(row: Row, events: list, attempts: tuple) -> None:  # type: ignore[type-arg]
    kinds = [e.kind for e in events]
    assert kinds == ["retry_scheduled", "retry_started"] * len(row.retry_reasons)
    for scheduled, reason, failed in zip(events[::2], row.retry_reasons, attempts, strict=False):
        assert reason in scheduled.reason
        assert scheduled.attempt_id == failed.attempt_id
        # persisted before the sleep: scheduled when the failed attempt ended (S7)
        assert scheduled.at == pytest.approx(failed.ended_at)
    for started, retry in zip(events[1::2], attempts[1:], strict=False):
        assert started.at == pytest.approx(retry.started_at)


def _check_error(row: Row, result: object) -> None:
    error = result.error  # type: ignore[attr-defined]
    if row.outcome == "failed":
        assert error is not None
        assert error.kind == row.error_kind
    elif row.retry_reasons:
        assert result.attempts[0].error.kind == row.error_kind  # type: ignore[attr-defined]


def _check_message(row: Row, result: object) -> None:
    message = result.message  # type: ignore[attr-defined]
    if row.outcome == "failed":
        assert message is None
        return
    assert message is not None
    assert message.attempt_id == result.attempts[-1].attempt_id  # type: ignore[attr-defined]
    if row.outcome == "truncated":
        assert message.finish == "length"
        assert message.tool_calls == ()
        rejected = row.notes.get("rejected", ["call_1", "call_2"])
        assert [c.call_id for c in result.rejected_tool_calls] == rejected  # type: ignore[attr-defined]
        return
    assert message.text == TEXT
    if "invalid_call" in row.notes:
        bad = [c.call_id for c in message.tool_calls if not c.runnable]
        assert bad == [row.notes["invalid_call"]]
        return
    assert [(c.call_id, dict(c.arguments)) for c in message.tool_calls] == [
        ("call_1", {"line": "hello ✓"}),
        ("call_2", {"to": "ops@example.com", "body": "done"}),
    ]
    if "usage" in row.notes:
        assert message.usage is None
    else:
        assert message.usage is not None
        assert (message.usage.input_tokens, message.usage.cache_read_tokens) == (1500, 1024)
