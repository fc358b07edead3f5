"""S1-S10: the stream client against a small respx endpoint, on virtual time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import respx

from fakes import VirtualClock
from harness.agent import Budget, CompletionResult, StreamClient, StreamConfig
from harness.agent._retry_log import RetryEvent
from harness.ports import Dialect, LoopClock, Usage

BASE = "https://api.test"
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
CONFIG = StreamConfig(backoff_jitter=0.0)
REQUEST = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}

HANG = object()  # a body step that never finishes: only a watchdog ends it
Step = bytes | float | BaseException | object


class _Body(httpx.AsyncByteStream):
    """A response body that yields bytes, sleeps (virtual seconds), raises or hangs."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self._steps = steps

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for step in self._steps:
            if isinstance(step, bytes):
                yield step
            elif isinstance(step, float | int):
                await asyncio.sleep(step)
            elif isinstance(step, BaseException):
                raise step
            else:
                await asyncio.Event().wait()


def _sse(*steps: Step) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Body(steps))


def _openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _openai_usage(prompt: int, completion: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    return b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def _openai_text(text: str, finish: str = "stop", usage: tuple[int, int] = (10, 5)) -> list[Step]:
    return [
        _openai_chunk({"role": "assistant", "content": text}),
        _openai_chunk({}, finish),
        _openai_usage(*usage),
        DONE,
    ]


@dataclass
class Endpoint:
    """A scripted endpoint: one handler per request, in order; records what it saw."""

    clock: VirtualClock
    script: list[Callable[[], httpx.Response | Awaitable[httpx.Response]]]
    seen: list[tuple[float, dict[str, Any]]] = field(default_factory=list)

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((self.clock.now(), json.loads(request.content)))
        reply = self.script[len(self.seen) - 1]()
        return await reply if isinstance(reply, Awaitable) else reply


@dataclass
class ClockedLog:
    """A RetryLog that notes the virtual time at which each event was persisted."""

    clock: VirtualClock
    events: list[RetryEvent] = field(default_factory=list)
    persisted_at: list[float] = field(default_factory=list)

    def record(self, event: RetryEvent) -> None:
        self.events.append(event)
        self.persisted_at.append(self.clock.now())


def _run(
    clock: VirtualClock,
    script: list[Callable[[], httpx.Response | Awaitable[httpx.Response]]],
    *,
    dialect: Dialect = "openai",
    config: StreamConfig = CONFIG,
    budget: Budget | None = None,
    request: dict[str, Any] | None = None,
    output_ceiling: int | None = None,
) -> tuple[CompletionResult, Endpoint, ClockedLog]:
    endpoint = Endpoint(clock, script)
    log = ClockedLog(clock)
    router = respx.MockRouter(assert_all_mocked=True, base_url=BASE)
    router.post(PATHS[dialect]).mock(side_effect=endpoint)

    async def main() -> CompletionResult:
        transport = httpx.MockTransport(router.async_handler)
        async with httpx.AsyncClient(transport=transport) as http:
            client = StreamClient(
                http,
                dialect=dialect,
                endpoint=BASE + PATHS[dialect],
                config=config,
                clock=LoopClock(),
                seed=7,
                retry_log=log,
                budget=budget or Budget(deadline=600.0, max_attempts=20),
            )
            return await client.complete(request or REQUEST, output_ceiling=output_ceiling)

    return clock.run(main()), endpoint, log


def _status(status: int, headers: dict[str, str] | None = None, body: Any = None) -> httpx.Response:
    payload = body if body is not None else {"error": {"message": f"HTTP {status}", "type": "x"}}
    return httpx.Response(status, headers=headers or {}, json=payload)


def test_idle_stall_is_aborted_by_the_watchdog_then_retried_and_committed(
    virtual_clock: VirtualClock,
) -> None:
    """S1 + S2: chunk at t=0, silence; abort at t=30; retry after 2 s backoff; commit."""
    stalled = [_openai_chunk({"role": "assistant", "content": "Hel"}), HANG]
    result, endpoint, log = _run(
        virtual_clock, [lambda: _sse(*stalled), lambda: _sse(*_openai_text("Hello world"))]
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "Hello world"
    first, second = result.attempts
    assert (first.status, first.partial_text, first.started_at, first.ended_at) == (
        "interrupted",
        "Hel",
        0.0,
        30.0,
    )
    assert first.error is not None
    assert first.error.kind == "idle_timeout"
    assert (second.status, second.started_at) == ("complete", 32.0)
    assert result.message.attempt_id == second.attempt_id != first.attempt_id
    assert [t for t, _ in endpoint.seen] == [0.0, 32.0]
    assert [(e.kind, e.layer, e.at, e.delay) for e in log.events] == [
        ("retry_scheduled", "transport", 30.0, 2.0),
        ("retry_started", "transport", 32.0, 0.0),
    ]
    assert log.events[0].attempt_id == first.attempt_id
    assert log.events[1].attempt_id == second.attempt_id
    assert log.events[1].previous_attempt_id == first.attempt_id


def test_chunks_keep_the_watchdog_alive(virtual_clock: VirtualClock) -> None:
    """S1: a chunk every 20 s for 100 s never trips a 30 s idle watchdog."""
    slow: list[Step] = []
    for word in ["a", "b", "c", "d", "e"]:
        slow += [20.0, _openai_chunk({"content": word})]
    slow += [_openai_chunk({}, "stop"), DONE]
    result, _, log = _run(virtual_clock, [lambda: _sse(*slow)])
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "abcde"
    assert result.attempts[0].ended_at == 100.0
    assert log.events == []


def test_first_byte_timeout_is_separate_from_the_idle_watchdog(virtual_clock: VirtualClock) -> None:
    """S1: no byte for 60 s → first_byte_timeout at t=60 (not idle at 30)."""
    result, endpoint, _ = _run(
        virtual_clock, [lambda: _sse(HANG), lambda: _sse(*_openai_text("ok"))]
    )
    first = result.attempts[0]
    assert first.error is not None
    assert (first.error.kind, first.ended_at, first.status) == (
        "first_byte_timeout",
        60.0,
        "interrupted",  # the 200 headers came, so the stream had begun
    )
    assert [t for t, _ in endpoint.seen] == [0.0, 62.0]
    assert result.outcome == "committed"


def test_stall_before_the_headers_counts_as_first_byte(virtual_clock: VirtualClock) -> None:
    async def never_answers() -> httpx.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    result, endpoint, _ = _run(virtual_clock, [never_answers, lambda: _sse(*_openai_text("ok"))])
    assert result.attempts[0].status == "failed"
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.kind == "first_byte_timeout"
    assert [t for t, _ in endpoint.seen] == [0.0, 62.0]


def test_429_retry_after_is_honoured_and_the_event_persisted_before_the_sleep(
    virtual_clock: VirtualClock,
) -> None:
    result, endpoint, log = _run(
        virtual_clock,
        [lambda: _status(429, {"retry-after": "7"}), lambda: _sse(*_openai_text("ok"))],
    )
    assert result.outcome == "committed"
    assert [t for t, _ in endpoint.seen] == [0.0, 7.0]
    assert [(e.kind, e.layer) for e in log.events] == [
        ("retry_scheduled", "request"),
        ("retry_started", "request"),
    ]
    assert log.persisted_at == [0.0, 7.0]
    assert log.events[0].delay == 7.0
    assert result.attempts[0].status == "failed"
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.status == 429


def test_a_gemini_retry_delay_in_the_body_is_honoured_like_retry_after(
    virtual_clock: VirtualClock,
) -> None:
    # Gemini's 429 carries no Retry-After header: the wait is a RetryInfo in the body.
    body = {"error": {"code": 429, "message": "Resource has been exhausted.",
                      "status": "RESOURCE_EXHAUSTED", "details": [
                          {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                           "retryDelay": "7s"}]}}
    result, endpoint, log = _run(
        virtual_clock, [lambda: _status(429, body=body), lambda: _sse(*_openai_text("ok"))])
    assert result.outcome == "committed"
    assert [t for t, _ in endpoint.seen] == [0.0, 7.0]
    assert log.events[0].delay == 7.0
    error = result.attempts[0].error
    assert error is not None
    assert (error.error_type, error.error_code) == ("RESOURCE_EXHAUSTED", "429")


def test_retry_after_above_the_cap_is_surfaced_not_waited(virtual_clock: VirtualClock) -> None:
    result, endpoint, log = _run(virtual_clock, [lambda: _status(429, {"retry-after": "120"})])
    assert result.outcome == "failed"
    assert result.error is not None
    assert result.error.status == 429
    assert "above the 60s cap" in result.stop_reason
    assert virtual_clock.now() == 0.0
    assert len(endpoint.seen) == 1
    assert log.events == []


def test_400_is_not_retried(virtual_clock: VirtualClock) -> None:
    result, endpoint, log = _run(virtual_clock, [lambda: _status(400)])
    assert (result.outcome, result.stop_reason) == ("failed", "400 is not retryable")
    assert result.error is not None
    assert (result.error.kind, result.error.status, result.error.message) == (
        "http_status",
        400,
        "HTTP 400",
    )
    assert len(endpoint.seen) == 1
    assert log.events == []


def test_consecutive_429s_are_capped(virtual_clock: VirtualClock) -> None:
    always_429 = lambda: _status(429, {"retry-after": "1"})  # noqa: E731
    result, endpoint, _ = _run(virtual_clock, [always_429] * 10)
    assert result.outcome == "failed"
    assert result.stop_reason == "3 consecutive 429s (cap 3)"
    assert [t for t, _ in endpoint.seen] == [0.0, 1.0, 2.0]


def test_waits_stop_at_the_shared_deadline(virtual_clock: VirtualClock) -> None:
    """S8: backoff 2, 4, 8, 16 → attempts at 0, 2, 6, 14, 30; a 30 s wait would pass t=50."""
    result, endpoint, _ = _run(
        virtual_clock, [lambda: _status(503)] * 10, budget=Budget(deadline=50.0, max_attempts=20)
    )
    assert [t for t, _ in endpoint.seen] == [0.0, 2.0, 6.0, 14.0, 30.0]
    assert result.outcome == "failed"
    assert result.stop_reason == "waiting 30s would pass the deadline 50s"
    assert virtual_clock.now() == 30.0


def test_a_stall_is_cut_at_the_shared_deadline(virtual_clock: VirtualClock) -> None:
    result, _, _ = _run(
        virtual_clock,
        [lambda: _sse(_openai_chunk({"content": "x"}), HANG)],
        budget=Budget(deadline=20.0, max_attempts=20),
    )
    assert result.outcome == "failed"
    assert result.error is not None
    assert result.error.kind == "deadline_exceeded"
    assert virtual_clock.now() == 20.0


def test_the_shared_attempt_budget_is_drawn_on(virtual_clock: VirtualClock) -> None:
    budget = Budget(deadline=None, max_attempts=2)
    result, endpoint, _ = _run(virtual_clock, [lambda: _status(503)] * 5, budget=budget)
    assert len(endpoint.seen) == 2
    assert result.stop_reason == "shared attempt budget of 2 used up"
    assert budget.attempts_by_layer == {"request": 2}


def test_the_local_attempt_cap_applies_per_request(virtual_clock: VirtualClock) -> None:
    config = StreamConfig(backoff_jitter=0.0, max_attempts=3)
    result, endpoint, _ = _run(virtual_clock, [lambda: _status(500)] * 5, config=config)
    assert len(endpoint.seen) == 3
    assert result.stop_reason == "local cap of 3 attempts reached"


def test_reset_mid_stream_is_retried_and_partial_text_never_joined(
    virtual_clock: VirtualClock,
) -> None:
    broken = [_openai_chunk({"content": "Partial "}), httpx.ReadError("connection reset")]
    result, _, _ = _run(
        virtual_clock, [lambda: _sse(*broken), lambda: _sse(*_openai_text("Fresh answer"))]
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "Fresh answer"
    assert result.message.continuation_of is None
    first = result.attempts[0]
    assert (first.status, first.partial_text) == ("interrupted", "Partial ")
    assert first.error is not None
    assert first.error.kind == "reset"


def test_a_stream_cut_before_done_is_truncated_and_retried(virtual_clock: VirtualClock) -> None:
    """S9: a 'stop' finish without [DONE] is not done."""
    cut = [_openai_chunk({"content": "Looks done"}), _openai_chunk({}, "stop")]
    result, _, _ = _run(virtual_clock, [lambda: _sse(*cut), lambda: _sse(*_openai_text("Done"))])
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.kind == "truncated_stream"
    assert result.message is not None
    assert result.message.text == "Done"


def test_truncated_tool_arguments_give_no_runnable_call(virtual_clock: VirtualClock) -> None:
    """S6: finish length with a tool call → every call rejected, none committed."""
    piece = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "send_email", "arguments": '{"to": "a@b.test", "bo'},
    }
    cut = [_openai_chunk({"tool_calls": [piece]}), _openai_chunk({}, "length"), DONE]
    result, endpoint, _ = _run(virtual_clock, [lambda: _sse(*cut)])
    assert result.outcome == "truncated"
    assert result.message is not None
    assert result.message.tool_calls == ()
    assert [c.call_id for c in result.rejected_tool_calls] == ["call_1"]
    assert "none runs" in result.stop_reason
    assert len(endpoint.seen) == 1  # the same input is never re-sampled with the same limit


def test_truncated_text_gets_exactly_one_continuation(virtual_clock: VirtualClock) -> None:
    result, endpoint, _ = _run(
        virtual_clock,
        [
            lambda: _sse(*_openai_text("Once upon a", "length", (10, 64))),
            lambda: _sse(*_openai_text(" time.", "stop", (20, 3))),
        ],
    )
    assert result.outcome == "committed"
    first, second = result.attempts
    assert (first.kind, first.status, second.kind) == ("first", "truncated", "continuation")
    assert result.message is not None
    assert result.message.text == "Once upon a time."
    assert result.message.continuation_of == first.attempt_id
    assert result.message.attempt_id == second.attempt_id
    continued = endpoint.seen[1][1]["messages"]
    assert continued[-2] == {"role": "assistant", "content": "Once upon a"}
    assert continued[-1]["role"] == "user"
    assert result.usage_total == Usage(30, 67, None, None)


def test_a_second_truncation_is_not_continued_again(virtual_clock: VirtualClock) -> None:
    cut = lambda: _sse(*_openai_text("more", "length"))  # noqa: E731
    result, endpoint, _ = _run(virtual_clock, [cut, cut, cut])
    assert result.outcome == "truncated"
    assert result.message is not None
    assert result.message.text == "moremore"
    assert len(endpoint.seen) == 2


def test_request_is_streaming_with_usage(virtual_clock: VirtualClock) -> None:
    _, endpoint, _ = _run(virtual_clock, [lambda: _sse(*_openai_text("ok"))])
    body = endpoint.seen[0][1]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_413_drops_images_and_retries_once(virtual_clock: VirtualClock) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    request = {"model": "m", "messages": [{"role": "user", "content": [image]}]}
    result, endpoint, _ = _run(
        virtual_clock,
        [lambda: _status(413), lambda: _status(413)],
        request=request,
    )
    assert len(endpoint.seen) == 2
    assert "image_url" in json.dumps(endpoint.seen[0][1])
    assert "image_url" not in json.dumps(endpoint.seen[1][1])
    assert result.stop_reason == "413 again after dropping images"


LOOP = "Let me look at the notes again. "


def _looping_stream() -> list[Step]:
    # One sentence said to the output limit, a chunk at a time.
    return [_openai_chunk({"role": "assistant", "content": ""}),
            *(_openai_chunk({"content": LOOP}) for _ in range(40)),
            _openai_chunk({}, "length"), _openai_usage(10, 400), DONE]


def test_a_looping_answer_is_dropped_mid_stream_and_resampled(virtual_clock: VirtualClock) -> None:
    result, endpoint, log = _run(
        virtual_clock,
        [lambda: _sse(*_looping_stream()), lambda: _sse(*_looping_stream()),
         lambda: _sse(*_openai_text("The notes hold three items."))],
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "The notes hold three items."
    # Each resample asks at another temperature; the first left it to the provider.
    assert [body.get("temperature") for _, body in endpoint.seen] == [None, 0.8, 1.0]
    looped = result.attempts[:2]
    assert [a.error.kind if a.error else None for a in looped] == ["doom_loop", "doom_loop"]
    # Let go of as soon as the loop showed: far short of the 40 sentences sent.
    assert all(a.partial_text.count(LOOP.strip()) < 12 for a in looped)
    assert [e.reason for e in log.events if e.kind == "retry_scheduled"] == [
        "the answer loops (DoomLoop): resample at another temperature"] * 2


def test_a_loop_past_the_resample_cap_fails_the_request(virtual_clock: VirtualClock) -> None:
    result, endpoint, _ = _run(virtual_clock, [lambda: _sse(*_looping_stream())] * 3)
    assert result.outcome == "failed"
    assert len(endpoint.seen) == 3
    assert result.stop_reason == "the answer looped again after 2 resample(s)"


def test_a_loop_that_arrives_in_one_chunk_is_caught_too(virtual_clock: VirtualClock) -> None:
    whole = b"".join(step for step in _looping_stream() if isinstance(step, bytes))
    result, _, _ = _run(virtual_clock, [lambda: _sse(whole),
                                        lambda: _sse(*_openai_text("Done."))])
    assert result.message is not None
    assert result.message.text == "Done."
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.kind == "doom_loop"


def test_without_loop_detection_a_loop_is_cut_text(virtual_clock: VirtualClock) -> None:
    config = StreamConfig(backoff_jitter=0.0, detect_loops=False, max_continuations=0)
    result, _, _ = _run(virtual_clock, [lambda: _sse(*_looping_stream())], config=config)
    assert result.outcome == "truncated"


def _cut_call() -> list[Step]:
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "mail", "arguments": '{"to": "ops@exa'}}
    return [_openai_chunk({"role": "assistant", "tool_calls": [call]}),
            _openai_chunk({}, "length"), _openai_usage(10, 1024), DONE]


def _whole_call() -> list[Step]:
    call = {"index": 0, "id": "call_2", "type": "function",
            "function": {"name": "mail", "arguments": '{"to": "ops@example.com"}'}}
    return [_openai_chunk({"role": "assistant", "tool_calls": [call]}),
            _openai_chunk({}, "tool_calls"), _openai_usage(10, 12), DONE]


def test_a_cut_answer_is_asked_for_again_at_the_models_ceiling(
        virtual_clock: VirtualClock) -> None:
    request = {**REQUEST, "max_completion_tokens": 1024}
    result, endpoint, log = _run(virtual_clock, [lambda: _sse(*_cut_call()),
                                                 lambda: _sse(*_whole_call())],
                                 request=request, output_ceiling=8192)
    assert result.outcome == "committed"
    assert result.message is not None
    assert [c.call_id for c in result.message.tool_calls] == ["call_2"]
    assert [body["max_completion_tokens"] for _, body in endpoint.seen] == [1024, 8192]
    assert [a.status for a in result.attempts] == ["truncated", "complete"]
    # Each attempt's usage counts once, the dropped one's too.
    assert result.usage_total is not None
    assert result.usage_total.output_tokens == 1024 + 12
    assert [e.reason for e in log.events if e.kind == "retry_scheduled"] == [
        "cut at the output limit of 1024 tokens: asked again with 8192 (level 1)"]


@pytest.mark.parametrize("ceiling", [None, 1024])
def test_without_headroom_a_cut_call_is_rejected_at_once(virtual_clock: VirtualClock,
                                                         ceiling: int | None) -> None:
    request = {**REQUEST, "max_completion_tokens": 1024}
    result, endpoint, _ = _run(virtual_clock, [lambda: _sse(*_cut_call())],
                               request=request, output_ceiling=ceiling)
    assert result.outcome == "truncated"
    assert [c.call_id for c in result.rejected_tool_calls] == ["call_1"]
    assert len(endpoint.seen) == 1


def test_cut_again_at_the_ceiling_the_call_is_rejected(virtual_clock: VirtualClock) -> None:
    request = {**REQUEST, "max_completion_tokens": 1024}
    result, endpoint, _ = _run(virtual_clock, [lambda: _sse(*_cut_call())] * 2,
                               request=request, output_ceiling=4096)
    assert result.outcome == "truncated"
    assert [body["max_completion_tokens"] for _, body in endpoint.seen] == [1024, 4096]


def _anthropic_event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n".encode()


def _anthropic_text(text: str) -> list[Step]:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 1}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-x",
        "stop_reason": None,
        "usage": usage,
    }
    block = {"type": "text", "text": ""}
    delta = {"type": "text_delta", "text": text}
    return [
        _anthropic_event("message_start", {"message": message}),
        _anthropic_event("content_block_start", {"index": 0, "content_block": block}),
        _anthropic_event("ping", {}),
        _anthropic_event("content_block_delta", {"index": 0, "delta": delta}),
        _anthropic_event("content_block_stop", {"index": 0}),
        _anthropic_event(
            "message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}
        ),
        _anthropic_event("message_stop", {}),
    ]


def test_anthropic_overloaded_in_stream_is_retried_then_committed(
    virtual_clock: VirtualClock,
) -> None:
    """S10: an error event inside a 200 stream is classified like a 529."""
    overloaded = [
        *_anthropic_text("Hal")[:4],
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        b'"message": "Overloaded"}}\n\n',
    ]
    result, endpoint, log = _run(
        virtual_clock,
        [lambda: _sse(*overloaded), lambda: _sse(*_anthropic_text("Hallo"))],
        dialect="anthropic",
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "Hallo"
    assert result.attempts[0].partial_text == "Hal"
    assert result.attempts[0].error is not None
    assert result.attempts[0].error.effective_status == 529
    assert [t for t, _ in endpoint.seen] == [0.0, 2.0]
    assert "stream_options" not in endpoint.seen[0][1]
    # both attempts reported input usage; each is counted once
    assert result.usage_total == Usage(20, 5, 14, None)
    assert log.events[0].layer == "request"


def test_same_seed_gives_the_same_attempt_ids_and_jitter() -> None:
    config = StreamConfig()  # default jitter on

    def once() -> tuple[list[str], list[float]]:
        clock = VirtualClock()
        result, endpoint, _ = _run(
            clock, [lambda: _status(503)] * 3 + [lambda: _sse(*_openai_text("ok"))], config=config
        )
        return [a.attempt_id for a in result.attempts], [t for t, _ in endpoint.seen]

    assert once() == once()
    ids, times = once()
    assert len(set(ids)) == 4
    assert 2.0 * (1 - config.backoff_jitter) <= times[1] <= 2.0


def test_the_budget_resumes_from_the_retry_log_after_a_restart(virtual_clock: VirtualClock) -> None:
    budget = Budget(deadline=600.0, max_attempts=20)
    _, _, log = _run(
        virtual_clock,
        [lambda: _status(503), lambda: _status(503), lambda: _sse(*_openai_text("ok"))],
        budget=budget,
    )
    restored = Budget.restore(log.events, Budget(deadline=9999.0, max_attempts=20))
    assert restored.attempts_used == 3
    assert restored.deadline == 600.0


def test_a_stall_after_done_keeps_the_complete_message(virtual_clock: VirtualClock) -> None:
    """S9: [DONE] ends the attempt; a connection left open after it is not a stall to retry.

    The client reads on to the end of the body (the watchdog ends that read at t=30),
    but what happens after the terminal event cannot undo the complete message.
    """
    result, endpoint, log = _run(
        virtual_clock, [lambda: _sse(*_openai_text("All there"), HANG), lambda: _sse(DONE)]
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "All there"
    assert len(endpoint.seen) == 1
    assert log.events == []
    assert [(a.status, a.error, a.ended_at) for a in result.attempts] == [("complete", None, 30.0)]


def test_a_reset_after_message_stop_keeps_the_complete_message(
    virtual_clock: VirtualClock,
) -> None:
    """S9: message_stop ends the attempt; a reset while the body closes is not a failure."""
    after_stop = [*_anthropic_text("Hallo"), httpx.ReadError("connection reset")]
    result, endpoint, _ = _run(
        virtual_clock,
        [lambda: _sse(*after_stop), lambda: _sse(*_anthropic_text("again"))],
        dialect="anthropic",
    )
    assert result.outcome == "committed"
    assert result.message is not None
    assert result.message.text == "Hallo"
    assert [a.status for a in result.attempts] == ["complete"]
    assert len(endpoint.seen) == 1


def test_a_complete_attempt_ends_a_run_of_429s(virtual_clock: VirtualClock) -> None:
    """S5: the 429 cap counts 429s *in a row*; the truncated answer between them breaks the row."""
    rate_limited = lambda: _status(429, {"retry-after": "1"})  # noqa: E731
    result, endpoint, _ = _run(
        virtual_clock,
        [
            rate_limited,
            rate_limited,
            lambda: _sse(*_openai_text("Once upon a", "length")),
            rate_limited,
            lambda: _sse(*_openai_text(" time.")),
        ],
    )
    assert (result.outcome, result.stop_reason) == ("committed", "complete")
    assert result.message is not None
    assert result.message.text == "Once upon a time."
    assert len(endpoint.seen) == 5


def test_keep_alives_refresh_the_watchdog_and_the_deadline_bounds_them(
    virtual_clock: VirtualClock,
) -> None:
    """S1 + S8: a ping every 20 s is a chunk, so the 30 s watchdog never fires; the
    shared deadline is what ends a stream that only ever sends keep-alives."""
    pings: list[Step] = [*_anthropic_text("Hal")[:4]]
    for _ in range(10):
        pings += [20.0, _anthropic_event("ping", {}), 0.0, b": keep-alive\n\n"]
    result, endpoint, _ = _run(
        virtual_clock,
        [lambda: _sse(*pings, HANG)],
        dialect="anthropic",
        budget=Budget(deadline=150.0, max_attempts=20),
    )
    assert result.outcome == "failed"
    assert result.error is not None
    assert (result.error.kind, virtual_clock.now()) == ("deadline_exceeded", 150.0)
    assert len(endpoint.seen) == 1
