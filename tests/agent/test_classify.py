"""S5: the retry classifier as a table — status, headers, body → decision."""

from __future__ import annotations

import pytest

from harness.agent import StreamConfig
from harness.agent._classify import (
    ProviderError,
    RetryContext,
    RetryDecision,
    backoff_delay,
    classify,
)
from harness.ports import rng_stream

CONFIG = StreamConfig(backoff_jitter=0.0)
EPOCH = CONFIG.clock_epoch_unix


def _http(
    status: int,
    headers: dict[str, str] | None = None,
    *,
    error_type: str | None = None,
    code: str | None = None,
    message: str = "error",
) -> ProviderError:
    return ProviderError("http_status", message, status, error_type, code, headers or {})


def _in_stream(error_type: str, message: str = "error") -> ProviderError:
    return ProviderError("stream_error", message, error_type=error_type)


RETRY = "retry"
STOP = "do_not_retry"
MODIFY = "modify_and_retry"

TABLE = [
    # transient transport failures (S1, S9)
    ("idle timeout", ProviderError("idle_timeout", "no data for 30s"), RETRY, 2.0),
    ("first byte", ProviderError("first_byte_timeout", "no data"), RETRY, 2.0),
    ("connect", ProviderError("connect_error", "refused"), RETRY, 2.0),
    ("reset", ProviderError("reset", "ReadError"), RETRY, 2.0),
    ("cut stream", ProviderError("truncated_stream", "no [DONE]"), RETRY, 2.0),
    # retryable statuses
    ("408", _http(408), RETRY, 2.0),
    ("409", _http(409), RETRY, 2.0),
    ("429", _http(429), RETRY, 2.0),
    ("500", _http(500), RETRY, 2.0),
    ("502", _http(502), RETRY, 2.0),
    ("503", _http(503), RETRY, 2.0),
    ("529", _http(529), RETRY, 2.0),
    # never retried
    ("400", _http(400), STOP, 0.0),
    ("401", _http(401), STOP, 0.0),
    ("403", _http(403), STOP, 0.0),
    ("404", _http(404), STOP, 0.0),
    ("422", _http(422), STOP, 0.0),
    ("418", _http(418), STOP, 0.0),
    ("525 TLS", _http(525), STOP, 0.0),
    ("526 TLS", _http(526), STOP, 0.0),
    (
        "429 insufficient_quota",
        _http(
            429,
            error_type="insufficient_quota",
            code="insufficient_quota",
            message="You exceeded your current quota, please check your plan and billing details.",
        ),
        STOP,
        0.0,
    ),
    ("402 balance", _http(402, message="Insufficient balance"), STOP, 0.0),
    (
        "400 context overflow",
        _http(400, error_type="invalid_request_error", code="context_length_exceeded"),
        STOP,
        0.0,
    ),
    ("anthropic too long", _http(400, message="prompt is too long: 210000 tokens"), STOP, 0.0),
    ("malformed frame", ProviderError("malformed_frame", "not JSON"), STOP, 0.0),
    ("deadline", ProviderError("deadline_exceeded", "late"), STOP, 0.0),
    # 413 drops images and retries once
    ("413", _http(413), MODIFY, 2.0),
    ("413 in stream", _in_stream("request_too_large"), MODIFY, 2.0),
    # x-should-retry: false vetoes; true is advice only
    ("503 veto", _http(503, {"x-should-retry": "false"}), STOP, 0.0),
    ("429 veto", _http(429, {"x-should-retry": "false", "retry-after": "1"}), STOP, 0.0),
    ("400 advised", _http(400, {"x-should-retry": "true"}), STOP, 0.0),
    ("503 advised", _http(503, {"x-should-retry": "true"}), RETRY, 2.0),
    # server waits: retry-after-ms first, then Retry-After seconds or HTTP date
    ("429 retry-after", _http(429, {"retry-after": "7"}), RETRY, 7.0),
    ("429 ms wins", _http(429, {"retry-after-ms": "250", "retry-after": "7"}), RETRY, 0.25),
    ("503 date", _http(503, {"retry-after": "Thu, 01 Jan 2026 00:00:12 GMT"}), RETRY, 12.0),
    ("429 garbage", _http(429, {"retry-after": "soon"}), RETRY, 2.0),
    ("429 at cap", _http(429, {"retry-after": "60"}), RETRY, 60.0),
    ("429 above cap", _http(429, {"retry-after": "61"}), STOP, 0.0),
    ("503 date above cap", _http(503, {"retry-after": "Thu, 01 Jan 2026 01:00:00 GMT"}), STOP, 0.0),
    # a zero wait (or a date already past) is no wait at all: back off instead of hammering
    ("503 retry-after 0", _http(503, {"retry-after": "0"}), RETRY, 2.0),
    ("429 retry-after-ms 0", _http(429, {"retry-after-ms": "0"}), RETRY, 2.0),
    ("503 past date", _http(503, {"retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"}), RETRY, 2.0),
    # in-stream errors are judged like the status they stand for (S10)
    ("overloaded in stream", _in_stream("overloaded_error"), RETRY, 2.0),
    ("api_error in stream", _in_stream("api_error"), RETRY, 2.0),
    ("rate limit in stream", _in_stream("rate_limit_error"), RETRY, 2.0),
    ("server_error in stream", _in_stream("server_error"), RETRY, 2.0),
    ("unknown in stream", _in_stream("mystery_error"), RETRY, 2.0),
    ("invalid request in stream", _in_stream("invalid_request_error"), STOP, 0.0),
    ("auth in stream", _in_stream("authentication_error"), STOP, 0.0),
]


@pytest.mark.parametrize(
    ("error", "action", "delay"),
    [pytest.param(error, action, delay, id=name) for name, error, action, delay in TABLE],
)
def test_classifier_table(error: ProviderError, action: str, delay: float) -> None:
    decision = classify(error, RetryContext(consecutive_429=1, now_unix=EPOCH), CONFIG)
    assert (decision.action, decision.delay) == (action, pytest.approx(delay))


def test_transport_failures_retry_at_the_transport_layer() -> None:
    decision = classify(ProviderError("idle_timeout", "x"), RetryContext(), CONFIG)
    assert decision.layer == "transport"
    assert classify(_http(503), RetryContext(), CONFIG).layer == "request"


def test_413_retries_once_then_surfaces() -> None:
    first = classify(_http(413), RetryContext(), CONFIG)
    assert first.modification == "drop_images"
    again = classify(_http(413), RetryContext(images_dropped=True), CONFIG)
    assert again.action == STOP


def test_a_looping_answer_is_resampled_up_to_its_own_cap() -> None:
    looping = ProviderError("doom_loop", "the answer keeps repeating 'again.'")
    first = classify(looping, RetryContext(), CONFIG)
    assert (first.action, first.modification, first.delay) == (MODIFY, "resample", 0.0)
    assert classify(looping, RetryContext(resamples=1), CONFIG).action == MODIFY
    spent = classify(looping, RetryContext(resamples=CONFIG.max_resamples), CONFIG)
    assert spent.action == STOP
    assert "looped again after 2 resample(s)" in spent.reason


@pytest.mark.parametrize(("in_a_row", "action"), [(1, RETRY), (2, RETRY), (3, STOP), (4, STOP)])
def test_consecutive_429s_are_capped(in_a_row: int, action: str) -> None:
    decision = classify(_http(429), RetryContext(consecutive_429=in_a_row), CONFIG)
    assert decision.action == action


def test_retry_after_above_the_cap_says_it_was_surfaced() -> None:
    decision = classify(_http(429, {"retry-after": "3600"}), RetryContext(now_unix=EPOCH), CONFIG)
    assert decision == RetryDecision(
        "do_not_retry",
        "429: server asked to wait 3600s, above the 60s cap; surfaced instead of waiting",
    )


@pytest.mark.parametrize(
    ("retry_number", "delay"), [(1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0), (5, 30.0), (50, 30.0)]
)
def test_backoff_doubles_from_two_seconds_and_caps_at_thirty(
    retry_number: int, delay: float
) -> None:
    assert backoff_delay(retry_number, CONFIG, jitter=0.0) == delay
    decision = classify(_http(503), RetryContext(retry_number=retry_number), CONFIG)
    assert decision.delay == delay


def test_jitter_is_seeded_and_stays_under_the_undithered_delay() -> None:
    config = StreamConfig()
    draws = [rng_stream(7, "backoff").random() for _ in range(2)]
    assert draws[0] == draws[1]
    delays = [backoff_delay(3, config, rng_stream(seed, "backoff").random()) for seed in range(50)]
    assert all(8.0 * (1 - config.backoff_jitter) <= d <= 8.0 for d in delays)
    assert len(set(delays)) > 1


def test_classify_is_pure() -> None:
    error = _http(429, {"retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"})
    context = RetryContext(now_unix=EPOCH + 10, consecutive_429=1)
    assert classify(error, context, CONFIG) == classify(error, context, CONFIG)
    assert classify(error, context, CONFIG).delay == 20.0
