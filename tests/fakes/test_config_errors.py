"""Every declaration that cannot be honoured is refused with a precise ConfigError."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from fakes import (
    ConnectionReset,
    DoomLoop,
    EmptyBody,
    ErrorInStream,
    FakeProvider,
    Fault,
    HttpError,
    IncomingRequest,
    InjectComments,
    InjectPings,
    InvalidToolArguments,
    LineEndings,
    MalformedFrame,
    NoUsageChunk,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SlowDrip,
    SplitAt,
    SplitBetweenCrLf,
    SplitInsideUtf8,
    Stall,
    StallBeforeHeaders,
    Text,
    ToolUse,
    TruncatedToolArguments,
)
from harness import ConfigError, FaultError
from harness._streamcase import stream_request

USAGE = ScriptedUsage(10, 2)
ASCII = ScriptedResponse((Text("ok"),), "stop", USAGE)
CALL = ScriptedResponse((ToolUse("c1", "f", {"a": 1}),), "tool_calls", USAGE)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Text(""), r"^Text\.text: got ''; expected a non-empty str$"),
        (lambda: ToolUse("", "f"), r"^ToolUse\.call_id: got ''; expected a non-empty str$"),
        (lambda: ToolUse("c", "f", 3),  # type: ignore[arg-type]
         r"^ToolUse\.arguments: got 3; expected a mapping \(JSON object\) or a str$"),
        (lambda: ToolUse("c", "f", {"x": object()}),
         r"^ToolUse\.arguments: got \{'x': <object object at .*>\}; expected a "
         r"JSON-serialisable mapping\. Object of type object is not JSON serializable$"),
        (lambda: ScriptedUsage(-1, 0),
         r"^ScriptedUsage\.input_tokens: got -1; expected an int >= 0$"),
        (lambda: ScriptedUsage(5, 1, cache_read_tokens=4, cache_write_tokens=2),
         r"^ScriptedUsage\.input_tokens: got 5; expected an int >= cache_read_tokens \+ "
         r"cache_write_tokens \(6\)\. input_tokens counts all prompt tokens, cached ones "
         r"included$"),
        (lambda: ScriptedResponse((Text("a"),), "done", USAGE),  # type: ignore[arg-type]
         r"^ScriptedResponse\.finish: got 'done'; expected one of 'stop', 'tool_calls', "
         r"'length', 'content_filter', 'refusal'$"),
        (lambda: ScriptedResponse([Text("a")], "stop", USAGE),  # type: ignore[arg-type]
         r"^ScriptedResponse\.parts: got \[Text\(text='a'\)\]; expected a tuple of Text and "
         r"ToolUse values$"),
        (lambda: ScriptedResponse((Text("a"),), "tool_calls", USAGE),
         r"^ScriptedResponse\.finish: got 'tool_calls'; expected 'stop', 'length', "
         r"'content_filter' or 'refusal' for a response without ToolUse parts$"),
        (lambda: ScriptedResponse((ToolUse("c", "f"),), "stop", USAGE),
         r"^ScriptedResponse\.finish: got 'stop'; expected 'tool_calls', 'length', "
         r"'content_filter' or 'refusal' for a response with ToolUse parts$"),
        (lambda: ScriptedResponse((ToolUse("c", "f"), ToolUse("c", "g")), "tool_calls", USAGE),
         r"^ToolUse\.call_id: got 'c'; expected a call id used once per response$"),
    ],
)
def test_bad_scripts(build: Callable[[], object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Stall(after_events=1, seconds=-1),
         r"^Stall\.seconds: got -1; expected a number of seconds >= 0, or None to stall "
         r"forever$"),
        (lambda: Stall(after_bytes=1, after_events=1),
         r"^Stall\.after_events: 'after_bytes' and 'after_events' exclude each other: got "
         r"both; expected exactly one of them$"),
        (Stall, r"^Stall: missing 'after_bytes' or 'after_events'; expected exactly one of "
                r"them, such as 'after_bytes: 120'$"),
        (lambda: StallBeforeHeaders(seconds=-0.5),
         r"^StallBeforeHeaders\.seconds: got -0\.5; expected a number of seconds >= 0, or "
         r"None to stall forever$"),
        (lambda: ConnectionReset(after_bytes=-3),
         r"^ConnectionReset\.after_bytes: got -3; expected an int >= 0$"),
        (lambda: HttpError(418),
         r"^HttpError\.status: got 418; expected one of 400, 401, 403, 404, 408, 409, 413, "
         r"422, 429, 500, 502, 503, 504, 525, 526, 529$"),
        (lambda: HttpError(429, retry_after="soon"),
         r"^HttpError\.retry_after: retry_after is neither seconds nor an HTTP date: got "
         r"'soon'; expected whole seconds such as 60 or a date such as "
         r"\"Wed, 21 Oct 2015 07:28:00 GMT\"$"),
        (lambda: HttpError(429, retry_after_ms=-1),
         r"^HttpError\.retry_after_ms: got -1; expected an int >= 0$"),
        (lambda: HttpError(503, should_retry="yes"),  # type: ignore[arg-type]
         r"^HttpError\.should_retry: got 'yes'; expected True, False or None$"),
        (lambda: TruncatedToolArguments(fraction=1.0),
         r"^TruncatedToolArguments\.fraction: got 1\.0; expected a number in \(0, 1\)$"),
        (lambda: InvalidToolArguments(fraction=0.5, offset=2),
         r"^InvalidToolArguments\.offset: 'fraction' and 'offset' exclude each other: got "
         r"both; expected at most one of them$"),
        (lambda: SplitAt((5, 3)),
         r"^SplitAt\.offsets\[1\]: offsets must increase: got 3; expected an offset greater "
         r"than 5$"),
        (lambda: DoomLoop(phrase="?! ..."),
         r"^DoomLoop\.phrase: the phrase has no letter or digit: got '\?! \.\.\.'; expected a "
         r"phrase with a letter or a digit$"),
        (lambda: SplitAt(()), r"^SplitAt\.offsets: got \(\); expected a non-empty tuple of "
                              r"ints >= 1$"),
        (lambda: SplitAt((0,)), r"^SplitAt\.offsets: got 0; expected an int >= 1$"),
        (lambda: RandomSplits(0), r"^RandomSplits\.count: got 0; expected an int >= 1$"),
        (lambda: LineEndings("nl"),  # type: ignore[arg-type]
         r"^LineEndings\.style: got 'nl'; expected one of 'lf', 'cr', 'crlf'$"),
        (lambda: InjectComments(every=0), r"^InjectComments\.every: got 0; expected an int >= 1$"),
        (lambda: InjectComments(text="a\nb"),
         r"^InjectComments\.text: got 'a\\nb'; expected a str without line breaks$"),
        (lambda: SlowDrip(0), r"^SlowDrip\.tokens_per_second: got 0; expected a number > 0$"),
        (lambda: ErrorInStream(message=""),
         r"^ErrorInStream\.message: got ''; expected a non-empty str$"),
        (lambda: MalformedFrame(index=-1),
         r"^MalformedFrame\.index: got -1; expected an int >= 0$"),
    ],
)
def test_bad_faults_are_refused_at_construction(build: Callable[[], object], message: str
                                                 ) -> None:
    with pytest.raises(ConfigError, match=message):
        build()


def apply(dialect: str, reply: ScriptedResponse, *faults: Fault) -> None:
    """Apply ``faults`` to a reactive provider's answer, when the request reaches them."""
    provider = FakeProvider(dialect, lambda request: reply,  # type: ignore[arg-type]
                            faults={(1, 1): faults})
    # asks for the usage chunk, as the reference client does
    provider.plan(stream_request(dialect, provider.endpoint))  # type: ignore[arg-type]


def _naming(fault: Fault, message: str) -> str:
    return rf"^fault '{fault.kind}' at turn 1, attempt 1: " + message.removeprefix("^")


@pytest.mark.parametrize(
    ("dialect", "reply", "fault", "message"),
    [
        ("openai", ASCII, SplitAt((10_000,)),
         r"^SplitAt\.offsets: got 10000; expected an offset in \[1, \d+\] \(the stream is "
         r"\d+ bytes\)$"),
        ("openai", ASCII, Stall(after_bytes=10_000),
         r"^Stall\.after_bytes: got 10000; expected an offset <= \d+ \(the stream is \d+ "
         r"bytes\)$"),
        ("openai", ASCII, ConnectionReset(after_events=99),
         r"^ConnectionReset\.after_events: got 99; expected at most 5 \(the stream has 5 "
         r"events\)$"),
        ("openai", ASCII, SplitInsideUtf8(),
         r"^SplitInsideUtf8\.occurrence: got 1; expected at most 0 \(the stream has 0 "
         r"multibyte characters\)$"),
        ("openai", ASCII, SplitBetweenCrLf(),
         r"^SplitBetweenCrLf\.occurrence: got 1; expected a stream with CRLF line endings\. "
         r"add LineEndings\('crlf'\) to the faults$"),
        ("openai", ASCII, InjectPings(),
         r"^InjectPings\.dialect: got 'openai'; expected 'anthropic'\. only Anthropic streams "
         r"have pings$"),
        ("gemini", ASCII, InjectPings(),
         r"^InjectPings\.dialect: got 'gemini'; expected 'anthropic'\. only Anthropic streams "
         r"have pings$"),
        ("anthropic", ASCII, NoUsageChunk(),
         r"^NoUsageChunk\.dialect: got 'anthropic'; expected 'openai'\. only Chat Completions "
         r"sends usage in a chunk of its own$"),
        ("openai-responses", ASCII, NoUsageChunk(),
         r"^NoUsageChunk\.dialect: got 'openai-responses'; expected 'openai'\. only Chat "
         r"Completions sends usage in a chunk of its own$"),
        ("openai", ASCII, MalformedFrame(index=5),
         r"^MalformedFrame\.index: got 5; expected the index of a JSON event, one of "
         r"\[0, 1, 2, 3\]$"),
        ("openai", ASCII, TruncatedToolArguments(),
         r"^TruncatedToolArguments\.call_index: got 0; expected an index below 0 \(the "
         r"response has 0 tool calls\)$"),
        ("openai", CALL, InvalidToolArguments(offset=7),
         r"^InvalidToolArguments\.offset: got 7; expected an offset below 7 \(the arguments "
         r"are 7 characters long\)$"),
        ("anthropic", ASCII, RandomSplits(count=100_000),
         r"^RandomSplits\.count: got 100000; expected at most \d+ \(the stream is \d+ "
         r"bytes\)$"),
        ("anthropic", ASCII, ErrorInStream(after_events=50),
         r"^ErrorInStream\.after_events: got 50; expected at most 7 \(the stream has 7 "
         r"events\)$"),
    ],
)
def test_faults_the_stream_cannot_honour_are_refused_when_applied(
    dialect: str, reply: ScriptedResponse, fault: Fault, message: str
) -> None:
    with pytest.raises(FaultError, match=_naming(fault, message)) as refused:
        apply(dialect, reply, fault)
    assert (refused.value.turn, refused.value.attempt, refused.value.index) == (1, 1, 0)
    assert isinstance(refused.value.__cause__, ConfigError)
    # With a fixed reply the provider knows the stream up front: refused at construction.
    with pytest.raises(FaultError, match=_naming(fault, message)):
        FakeProvider(dialect, reply, faults={(1, 1): (fault,)})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: FakeProvider("bard", ASCII),  # type: ignore[arg-type]
         r"^dialect: got 'bard'; expected one of 'openai', 'anthropic', 'openai-responses', "
         r"'gemini'$"),
        (lambda: FakeProvider("openai", "hello"),  # type: ignore[arg-type]
         r"^responder: got 'hello'; expected a ScriptedResponse or a callable returning one$"),
        (lambda: FakeProvider("openai", ASCII, faults={(0, 1): ()}),
         r"^faults: got \(0, 1\); expected a \(turn, attempt\) key of two ints >= 1$"),
        (lambda: FakeProvider("openai", ASCII, faults={(1, 1): Stall(after_bytes=1)}),  # type: ignore[dict-item]
         r"^faults\[\(1, 1\)\]: got Stall\(after_bytes=1, after_events=None, seconds=None\); "
         r"expected a sequence \(tuple\) of faults$"),
        (lambda: FakeProvider("openai", ASCII, faults={(1, 1): ("stall",)}),  # type: ignore[dict-item]
         r"^faults: got 'stall'; expected Fault values such as Stall\(after_events=2\)$"),
        (lambda: FakeProvider("openai", ASCII, faults={(1, 1): (HttpError(429), HttpError(500))}),
         r"^faults: got \['http_error', 'http_error'\]; expected at most one 'http_error'$"),
        (lambda: FakeProvider("openai", ASCII, faults={(1, 1): (HttpError(429), EmptyBody())}),
         r"^faults: got \['empty_body'\]; expected only byte and header faults beside "
         r"'http_error'\. an error response has no stream to bend$"),
    ],
)
def test_bad_providers_are_refused_at_construction(build: Callable[[], object], message: str
                                                   ) -> None:
    with pytest.raises(ConfigError, match=message):
        build()


def test_a_responder_must_return_a_scripted_response() -> None:
    provider = FakeProvider("openai", lambda request: "hi")  # type: ignore[arg-type,return-value]
    body = json.dumps({"messages": []}).encode()
    with pytest.raises(ConfigError, match=r"^responder: got 'hi'; expected a callable "
                                          r"returning a ScriptedResponse$"):
        provider.plan(IncomingRequest("POST", provider.endpoint, {}, body))
