"""Each fault's exact effect on the planned bytes and steps."""

from __future__ import annotations

import json

import pytest

from fakes import (
    FAULT_KINDS,
    ByteAtATime,
    ConnectionReset,
    DoomLoop,
    Emit,
    EmptyBody,
    ErrorInStream,
    FakeProvider,
    Fault,
    Hang,
    HttpError,
    IncomingRequest,
    InjectComments,
    InjectPings,
    InvalidToolArguments,
    LineEndings,
    MalformedFrame,
    NoTerminalEvent,
    NoUsageChunk,
    Pause,
    RandomSplits,
    Reset,
    ResponsePlan,
    ScriptedResponse,
    ScriptedUsage,
    SlowDrip,
    SplitAt,
    SplitBetweenCrLf,
    SplitInsideDataField,
    SplitInsideUtf8,
    Stall,
    StallBeforeHeaders,
    Text,
    ToolUse,
    TruncatedToolArguments,
)
from harness._streamcase import stream_request
from harness.ports import DIALECTS, rng_stream

REPLY = ScriptedResponse(
    parts=(Text("Voilà, the plan:"), ToolUse("call_1", "write_file",
                                             {"path": "notes.md", "text": "é"})),
    finish="tool_calls",
    usage=ScriptedUsage(input_tokens=90, output_tokens=30),
)
ASCII_REPLY = ScriptedResponse((Text("plain ascii"),), "stop", ScriptedUsage(5, 2))
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True,
           "stream_options": {"include_usage": True}}


def plan(dialect: str, *faults: Fault, reply: ScriptedResponse = REPLY, seed: int = 0
         ) -> ResponsePlan:
    provider = FakeProvider(dialect, reply, faults={(1, 1): faults}, seed=seed)  # type: ignore[arg-type]
    if dialect not in ("openai", "anthropic"):
        return provider.plan(stream_request(dialect, provider.endpoint))  # type: ignore[arg-type]
    content = json.dumps(REQUEST).encode()
    return provider.plan(IncomingRequest("POST", provider.endpoint, {}, content))


def emits(result: ResponsePlan) -> list[bytes]:
    return [step.data for step in result.steps if isinstance(step, Emit)]


def datas(body: bytes) -> list[str]:
    text = body.decode().replace("\r\n", "\n").replace("\r", "\n")
    return [line[6:] for line in text.split("\n") if line.startswith("data: ")]


def event_names(body: bytes) -> list[str]:
    return [line[7:] for line in body.decode().split("\n") if line.startswith("event: ")]


# ------------------------------------------------------------------ chunking


@pytest.mark.parametrize("dialect", DIALECTS)
def test_chunking_faults_never_change_the_bytes(dialect: str) -> None:
    clean = plan(dialect).body
    for fault in (SplitAt((1, 7, 40)), ByteAtATime(), RandomSplits(25), SplitInsideUtf8(),
                  SplitInsideDataField(3), SlowDrip(50)):
        assert plan(dialect, fault).body == clean, fault


def test_split_at_cuts_reads_at_the_offsets() -> None:
    chunks = emits(plan("openai", SplitAt((2, 5))))
    assert chunks[:2] == [b"da", b"ta:"]
    assert chunks[2].startswith(b' {"id":"chatcmpl-')


def test_byte_at_a_time_sends_single_bytes() -> None:
    result = plan("anthropic", ByteAtATime())
    assert {len(chunk) for chunk in emits(result)} == {1}


def boundaries(result: ResponsePlan) -> set[int]:
    offsets, total = set(), 0
    for chunk in emits(result):
        total += len(chunk)
        offsets.add(total)
    return offsets


def test_random_splits_add_seeded_boundaries() -> None:
    clean = plan("openai")
    offsets = rng_stream(0, "fakes.faults:1:1").sample(range(1, len(clean.body)), 12)
    result = plan("openai", RandomSplits(count=12))
    assert boundaries(result) == boundaries(clean) | set(offsets)


def test_random_splits_depend_on_the_seed_only() -> None:
    first = emits(plan("openai", RandomSplits(30), seed=3))
    assert emits(plan("openai", RandomSplits(30), seed=3)) == first
    assert emits(plan("openai", RandomSplits(30), seed=4)) != first


def test_split_inside_utf8_really_cuts_a_multibyte_character() -> None:
    chunks = emits(plan("openai", SplitInsideUtf8()))
    cut = next(i for i, chunk in enumerate(chunks) if chunk[-1] >= 0xC0)
    with pytest.raises(UnicodeDecodeError):
        chunks[cut].decode()
    assert (chunks[cut][-1:] + chunks[cut + 1][:1]).decode() == "à"


def test_split_inside_data_field_cuts_the_field_name() -> None:
    chunks = emits(plan("openai", SplitInsideDataField(occurrence=2)))
    cut = chunks.index(b"da")
    assert chunks[cut - 1].endswith(b"\n\n")
    assert chunks[cut + 1].startswith(b"ta: {")


def test_split_between_cr_and_lf() -> None:
    chunks = emits(plan("anthropic", LineEndings("crlf"), SplitBetweenCrLf(occurrence=1)))
    assert chunks[0] == b"event: message_start\r"
    assert chunks[1].startswith(b"\ndata: ")


@pytest.mark.parametrize(("style", "eol"), [("lf", b"\n"), ("cr", b"\r"), ("crlf", b"\r\n")])
def test_line_endings(style: str, eol: bytes) -> None:
    body = plan("anthropic", LineEndings(style)).body  # type: ignore[arg-type]
    assert body.startswith(b"event: message_start" + eol + b"data: {")
    assert body.endswith(b'data: {"type":"message_stop"}' + eol + eol)
    if style == "cr":
        assert b"\n" not in body


def test_comments_are_injected_between_events() -> None:
    body = plan("openai", InjectComments(every=2)).body
    frames = body.split(b"\n\n")[:-1]
    assert frames[2] == b": keep-alive"
    assert sum(frame == b": keep-alive" for frame in frames) == len(datas(body)) // 2


def test_pings_are_injected_into_anthropic_streams() -> None:
    before = event_names(plan("anthropic").body).count("ping")
    names = event_names(plan("anthropic", InjectPings(every=1)).body)
    assert names[1] == "ping"
    assert names.count("ping") == before + len(names) // 2


# --------------------------------------------------------------- frame faults


def test_malformed_frame_breaks_exactly_one_json_payload() -> None:
    payloads = datas(plan("openai", MalformedFrame(index=2)).body)
    broken = [i for i, data in enumerate(payloads) if data != "[DONE]" and not _is_json(data)]
    assert broken == [2]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_error_inside_an_openai_200_stream() -> None:
    result = plan("openai", ErrorInStream(after_events=3, message="boom"))
    assert result.status == 200
    payloads = datas(result.body)
    assert len(payloads) == 4
    assert json.loads(payloads[-1]) == {"error": {"message": "boom", "type": "server_error",
                                                  "param": None, "code": None}}


def test_error_inside_an_anthropic_200_stream() -> None:
    body = plan("anthropic", ErrorInStream(after_events=2)).body
    assert event_names(body)[-1] == "error"
    assert json.loads(datas(body)[-1]) == {
        "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize(("dialect", "terminal"), [("openai", "[DONE]"),
                                                   ("anthropic", '{"type":"message_stop"}')])
def test_no_terminal_event(dialect: str, terminal: str) -> None:
    assert datas(plan(dialect).body)[-1] == terminal
    payloads = datas(plan(dialect, NoTerminalEvent()).body)
    assert terminal not in payloads
    assert len(payloads) == len(datas(plan(dialect).body)) - 1


def test_no_usage_chunk() -> None:
    payloads = datas(plan("openai", NoUsageChunk()).body)
    assert payloads[-1] == "[DONE]"
    assert json.loads(payloads[-2])["choices"][0]["finish_reason"] == "tool_calls"
    assert all(json.loads(data).get("usage") is None for data in payloads[:-1])


def test_empty_200_body() -> None:
    result = plan("openai", EmptyBody())
    assert (result.status, result.body, result.steps) == (200, b"", ())


# ----------------------------------------------------------- response faults


def _openai_arguments(body: bytes) -> tuple[str, str]:
    chunks = [json.loads(d) for d in datas(body) if d != "[DONE]"]
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    arguments = "".join(
        call["function"]["arguments"]
        for choice in deltas
        for call in choice["delta"].get("tool_calls", [])
    )
    return arguments, next(c["finish_reason"] for c in deltas if c["finish_reason"])


def test_truncated_tool_arguments_finish_with_length() -> None:
    full = REPLY.tool_calls[0].argument_text
    arguments, finish = _openai_arguments(plan("openai", TruncatedToolArguments(0.5)).body)
    assert (arguments, finish) == (full[: len(full) // 2], "length")
    arguments, _ = _openai_arguments(plan("openai", TruncatedToolArguments(offset=4)).body)
    assert arguments == full[:4]


def test_truncated_tool_arguments_in_anthropic_stop_with_max_tokens() -> None:
    payloads = [json.loads(d) for d in datas(plan("anthropic", TruncatedToolArguments()).body)]
    delta = next(p for p in payloads if p["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "max_tokens"


def test_invalid_tool_arguments_still_claim_tool_calls() -> None:
    arguments, finish = _openai_arguments(plan("openai", InvalidToolArguments(0.7)).body)
    assert finish == "tool_calls"
    assert not _is_json(arguments)


def _openai_text(body: bytes) -> str:
    chunks = [json.loads(d) for d in datas(body) if d != "[DONE]"]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


@pytest.mark.parametrize(("dialect", "finish"), [("openai", '"finish_reason": "length"'),
                                                 ("anthropic", '"stop_reason": "max_tokens"')])
def test_a_doom_loop_is_one_phrase_to_the_output_limit(dialect: str, finish: str) -> None:
    loop = DoomLoop(phrase="Once more.", repeats=8)
    body = plan(dialect, loop).body
    assert finish in " ".join(json.dumps(json.loads(d)) for d in datas(body) if d != "[DONE]")
    assert "tool_calls" not in body.decode()
    assert "tool_use" not in body.decode()
    if dialect == "openai":
        # Said as often as fills 400 characters: a loop runs on to the output limit.
        assert _openai_text(body) == loop.looped_text == "Once more. " * 37


def test_a_doom_loop_stands_alone_among_the_response_faults() -> None:
    from harness._errors import ConfigError
    from harness.ports import check_faults

    with pytest.raises(ConfigError, match="'doom_loop' alone among the response faults"):
        check_faults([DoomLoop(), TruncatedToolArguments()])


# ------------------------------------------------------------ timing faults


def test_stall_for_some_seconds_after_events() -> None:
    clean = plan("openai")
    result = plan("openai", Stall(after_events=2, seconds=90))
    assert result.steps[2] == Pause(90.0)
    assert result.steps[:2] == clean.steps[:2]
    assert result.body == clean.body


def test_stall_forever_hangs_and_sends_nothing_more() -> None:
    result = plan("openai", Stall(after_bytes=10))
    assert result.steps[-1] == Hang()
    assert len(result.body) == 10


def test_stall_after_headers_before_the_first_byte() -> None:
    result = plan("anthropic", Stall(after_bytes=0, seconds=30))
    assert result.steps[0] == Pause(30.0)
    assert result.before_headers == ()


def test_stall_before_headers() -> None:
    assert plan("openai", StallBeforeHeaders(seconds=5)).before_headers == (Pause(5.0),)
    assert plan("openai", StallBeforeHeaders()).before_headers == (Hang(),)


def test_connection_reset_mid_stream() -> None:
    result = plan("anthropic", ConnectionReset(after_bytes=123))
    assert result.steps[-1] == Reset()
    assert result.body == plan("anthropic").body[:123]


def test_slow_drip_pauses_between_reads() -> None:
    result = plan("openai", SlowDrip(tokens_per_second=4))
    assert result.steps[1] == Pause(0.25)
    assert sum(isinstance(s, Pause) for s in result.steps) == len(emits(result)) - 1


def test_faults_compose_in_order() -> None:
    result = plan("openai", Stall(after_events=1, seconds=1), Stall(after_events=1, seconds=2))
    assert result.steps[1:3] == (Pause(1.0), Pause(2.0))


# --------------------------------------------------------------- http errors


def test_openai_http_error_with_retry_headers() -> None:
    error = HttpError(429, retry_after=7, retry_after_ms=6500, should_retry=True)
    result = plan("openai", error)
    headers = dict(result.headers)
    assert result.status == 429
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("7", "6500")
    assert headers["x-should-retry"] == "true"
    assert headers["content-type"] == "application/json"
    body = json.loads(result.body)
    assert body["error"]["type"] == "requests"
    assert body["error"]["code"] == "rate_limit_exceeded"


def test_anthropic_http_error_body_and_http_date() -> None:
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    result = plan("anthropic", HttpError(529, retry_after=date, should_retry=False))
    assert dict(result.headers)["retry-after"] == date
    assert dict(result.headers)["x-should-retry"] == "false"
    body = json.loads(result.body)
    assert body["type"] == "error"
    assert body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert body["request_id"].startswith("req_")


def test_http_error_can_stall_before_headers_and_reset() -> None:
    result = plan("openai", HttpError(503), StallBeforeHeaders(2), ConnectionReset(after_bytes=5))
    assert result.before_headers == (Pause(2.0),)
    assert result.steps[-1] == Reset()


def test_every_fault_kind_is_registered_once() -> None:
    assert len(FAULT_KINDS) == 23
    assert all(cls.kind == kind for kind, cls in FAULT_KINDS.items())
