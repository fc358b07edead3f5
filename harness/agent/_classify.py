"""The retry classifier (S5): a pure function from a failure to a decision.

Seed 002 §19.1 asks three questions of every failure — whose fault, would a
retry do better, is a retry safe — and grok-build answers them in a near-pure
function returning retry / do-not-retry / modify-and-retry while the network
layer does the waiting. So here: :func:`classify` reads a :class:`ProviderError`
and a :class:`RetryContext` (counters, the seeded jitter draw, the calendar
now) and returns a :class:`RetryDecision`; it never sleeps, reads a clock or
draws randomness, so a table test covers it.

The rules (seed 002 §19.1 and "自建起步" ⑤):

* transient transport failures retry: idle and first-byte timeouts, connect
  errors, resets, a stream cut before its terminal event (S9);
* ``x-should-retry: false`` vetoes any retry; ``true`` is advice only;
* quota / insufficient balance and context overflow never retry (fail fast;
  overflow goes to compaction, not to a blind retry);
* 413 drops images and retries once (the input changes, so it may succeed);
* a degenerate, repeating answer (DoomLoop) is resampled at another temperature,
  at most ``max_resamples`` times: the same request would loop again;
* 408, 409, 429, 5xx and 529 retry, except TLS 525 / 526 (deterministic);
* 400, 401, 403, 404, 422 and any other status do not;
* an in-stream error (S10) is mapped to the status it stands for and judged
  the same way; a malformed frame is a deterministic failure;
* the wait is ``retry-after-ms``, then ``Retry-After``, else exponential backoff
  with seeded jitter; a server wait above the cap is surfaced, not waited for;
  a zero wait (or a date already past) backs off instead, as the official SDKs
  do (they only take ``0 < wait <= cap``): retrying at once is how a storm starts;
  too many 429s in a row are surfaced too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from harness._errors import HarnessError
from harness.agent._defaults import StreamConfig
from harness.ports import parse_retry_after

ErrorKind: TypeAlias = Literal[
    "http_status",  # a non-200 response
    "stream_error",  # an error object inside a 200 stream (S10)
    "idle_timeout",  # the watchdog saw no chunk for too long (S1)
    "first_byte_timeout",  # nothing arrived after the request was sent (S1)
    "connect_error",  # the connection could not be made
    "reset",  # the connection broke while reading
    "truncated_stream",  # the stream ended without its terminal event (S9)
    "malformed_frame",  # a frame's data is not the JSON the dialect promises
    "deadline_exceeded",  # the shared deadline ran out (S8)
    "budget_exhausted",  # the shared or local attempt budget ran out (S8)
    "doom_loop",  # the answer degenerated into one phrase said over and over
]
RetryAction: TypeAlias = Literal["retry", "do_not_retry", "modify_and_retry"]
RetryLayer: TypeAlias = Literal["transport", "request", "tool", "task"]

# ------------------------------------------------------------------------ the table
# One table of failure classes: the classifier decides retries from it (S5), and the
# agent loop names its stop states from it (L5, I4). Each class is one fact:
#
#   transient  transport failures a retry may cure        retry (transport layer)
#   infra      transient, or a stream the provider broke  never a ``complete`` stop
#   auth       the caller is not allowed                  no retry; stop ``blocked``
#   quota      the account ran out                        no retry; stop ``usage_limited``
#   fatal      anything else not retryable (400, 404, …)  no retry; stop ``failed``

TRANSIENT_KINDS: frozenset[ErrorKind] = frozenset(
    {"idle_timeout", "first_byte_timeout", "connect_error", "reset", "truncated_stream"}
)
#: An error event (S10) or a malformed frame is the provider's failure, so the run
#: pauses on infrastructure; but neither is retried blindly (see :func:`classify`).
INFRA_KINDS: frozenset[ErrorKind] = TRANSIENT_KINDS | {"stream_error", "malformed_frame"}
RETRYABLE_STATUSES = frozenset({408, 409, 429, 529})  # and every other 5xx but TLS
TLS_STATUSES = frozenset({525, 526})  # Cloudflare TLS handshake / invalid certificate
AUTH_STATUSES = frozenset({401, 403})
#: The phrases that veto a retry: precise, since a false match gives up on a request.
QUOTA_MARKERS = (
    "insufficient_quota",
    "billing",
    "insufficient balance",
    "insufficient_balance",
    "credit balance",
    "exceeded your current quota",
)
#: A stop names ``usage_limited`` on a 402 or 429, or on any mention of a quota or a
#: balance: broader than :data:`QUOTA_MARKERS`, since no retry is at stake any more.
USAGE_STATUSES = frozenset({402, 429})
USAGE_MARKERS = (*QUOTA_MARKERS, "quota", "balance")
OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "context window",
    "exceeds the maximum number of tokens",  # Gemini's INVALID_ARGUMENT
)


# In-stream error types (every dialect) → the HTTP status they stand for.
_STATUS_OF_TYPE: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "tokens": 429,
    "requests": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    # Gemini's google.rpc status words.
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
@dataclass(frozen=True, slots=True)
class ProviderError:
    """What went wrong in one attempt, as plain data.

    ``status`` is the HTTP status (``None`` for transport failures and in-stream
    errors); ``error_type`` and ``error_code`` are the provider's labels (e.g.
    ``overloaded_error``, ``insufficient_quota``); ``headers`` are lower-cased.

    >>> ProviderError("stream_error", "Overloaded", error_type="overloaded_error").effective_status
    529
    """

    kind: ErrorKind
    message: str
    status: int | None = None
    error_type: str | None = None
    error_code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def effective_status(self) -> int | None:
        """The HTTP status, or the one an in-stream error type stands for."""
        if self.status is not None:
            return self.status
        for label in (self.error_code, self.error_type):
            if label is not None and label in _STATUS_OF_TYPE:
                return _STATUS_OF_TYPE[label]
        return None

    def mentions(self, markers: tuple[str, ...]) -> bool:
        """Whether the type, code or message contains one of ``markers``."""
        text = " ".join(filter(None, (self.error_type, self.error_code, self.message))).lower()
        return any(marker in text for marker in markers)


@dataclass(frozen=True, slots=True)
class RetryContext:
    """What the classifier needs besides the error; all of it plain data.

    ``retry_number`` is the retry this would be (1 for the first); ``consecutive_429``
    counts 429s in a row *including* this one; ``jitter`` is a draw in [0, 1) from
    ``rng_stream(seed, "backoff")``; ``now_unix`` is the virtual now on the calendar.
    """

    retry_number: int = 1
    consecutive_429: int = 0
    jitter: float = 0.0
    now_unix: float = 0.0
    images_dropped: bool = False
    resamples: int = 0  # the resamples of a looping answer this request has had


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """The classifier's answer: what to do, why, after how long, at which layer.

    >>> RetryDecision("retry", "server error 503", 2.0, "request").should_retry
    True
    """

    action: RetryAction
    reason: str
    delay: float = 0.0
    layer: RetryLayer = "request"
    modification: Literal["drop_images", "resample"] | None = None

    @property
    def should_retry(self) -> bool:
        return self.action != "do_not_retry"


def backoff_delay(retry_number: int, config: StreamConfig, jitter: float) -> float:
    """Exponential backoff, capped, minus a seeded share of jitter.

    >>> [backoff_delay(n, StreamConfig(), 0.0) for n in (1, 2, 3, 4, 5, 6)]
    [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    """
    exponent = max(0, retry_number - 1)
    try:
        raw = config.backoff_base * config.backoff_factor**exponent
    except OverflowError:
        raw = config.backoff_cap
    return min(config.backoff_cap, raw) * (1.0 - config.backoff_jitter * jitter)


def classify(error: ProviderError, context: RetryContext, config: StreamConfig) -> RetryDecision:
    """Decide whether and how to retry ``error``; see the module docstring.

    >>> classify(ProviderError("http_status", "bad", status=400), RetryContext(), StreamConfig())
    RetryDecision(action='do_not_retry', reason='400 is not retryable', delay=0.0, \
layer='request', modification=None)
    """
    if error.kind in TRANSIENT_KINDS:
        delay = backoff_delay(context.retry_number, config, context.jitter)
        return RetryDecision("retry", f"transient {error.kind}", delay, "transport")
    if error.kind == "malformed_frame":
        # Seed 002 §19.1 (grok): a parse failure is deterministic; retrying it
        # burns the budget against the same wall.
        return _stop("malformed frame is a deterministic failure")
    if error.kind in ("deadline_exceeded", "budget_exhausted"):
        return _stop(error.kind.replace("_", " "))
    if error.kind == "doom_loop":
        return _resample(context, config)
    return _classify_status(error, context, config)


def _classify_status(
    error: ProviderError, context: RetryContext, config: StreamConfig
) -> RetryDecision:
    advice = error.headers.get("x-should-retry", "").strip().lower()
    if advice == "false":
        return _stop("server vetoed the retry (x-should-retry: false)")
    if error.mentions(QUOTA_MARKERS):
        return _stop("quota or balance exhausted; retrying cannot help")
    if error.mentions(OVERFLOW_MARKERS):
        return _stop("context overflow; compact the input instead of retrying")
    status = error.effective_status
    if status == 413:
        return _request_too_large(context, config)
    if not _retryable_status(status, error.kind):
        label = str(status) if status is not None else error.kind
        return _stop(f"{label} is not retryable")
    return _wait_decision(error, status, context, config)


def _retryable_status(status: int | None, kind: ErrorKind) -> bool:
    if status is None:
        # An in-stream error of an unknown type is a stream error, transient
        # in every implementation seed 002 §19.1 compares.
        return kind == "stream_error"
    if status in TLS_STATUSES:
        return False
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def _request_too_large(context: RetryContext, config: StreamConfig) -> RetryDecision:
    if context.images_dropped:
        return _stop("413 again after dropping images")
    delay = backoff_delay(context.retry_number, config, context.jitter)
    return RetryDecision(
        "modify_and_retry", "413: drop images and retry once", delay, "request", "drop_images"
    )


def _resample(context: RetryContext, config: StreamConfig) -> RetryDecision:
    # Seed 002 §19.1 (grok-build): a DoomLoop is not retried as it was, it is resampled
    # with other parameters; a recovery of its own kind, with its own cap.
    if context.resamples >= config.max_resamples:
        return _stop(f"the answer looped again after {context.resamples} resample(s)")
    return RetryDecision("modify_and_retry", "the answer loops (DoomLoop): resample at "
                         "another temperature", 0.0, "request", "resample")


def retried_a_rate_limit(reason: str) -> bool:
    """Whether a retry's reason (as :func:`_wait_decision` words it) is an HTTP 429's.

    >>> retried_a_rate_limit("429, server wait 1s"), retried_a_rate_limit("503, backoff 2s")
    (True, False)
    """
    return reason.startswith("429, ")


def _wait_decision(
    error: ProviderError, status: int | None, context: RetryContext, config: StreamConfig
) -> RetryDecision:
    label = str(status) if status is not None else f"in-stream {error.error_type or 'error'}"
    if status == 429 and context.consecutive_429 >= config.max_consecutive_429:
        return _stop(
            f"{context.consecutive_429} consecutive 429s (cap {config.max_consecutive_429})"
        )
    server_wait = parse_retry_after(error.headers, now_unix=context.now_unix)
    if server_wait is not None and server_wait > config.retry_after_cap:
        return _stop(
            f"{label}: server asked to wait {server_wait:g}s, above the "
            f"{config.retry_after_cap:g}s cap; surfaced instead of waiting"
        )
    if server_wait:
        delay, source = server_wait, "server wait"
    else:
        delay, source = backoff_delay(context.retry_number, config, context.jitter), "backoff"
    advised = " (server advised retry)" if error.headers.get("x-should-retry") == "true" else ""
    return RetryDecision("retry", f"{label}, {source} {delay:g}s{advised}", delay, "request")


def is_infra_failure(error: ProviderError) -> bool:
    """Whether ``error`` is the infrastructure's failure, not the request's (I4).

    >>> is_infra_failure(ProviderError("http_status", "overloaded", status=529))
    True
    """
    status = error.effective_status
    if error.kind in INFRA_KINDS:
        return True
    return status is not None and (status >= 500 or status in (408, 409))


def route_failure(error: ProviderError) -> bool:
    """Whether ``error`` says the model's route is down, not the request wrong: another
    model may answer it (seed 002 §19.2: 429、5xx、断流、空闲超时 → 同请求退避重试或切备用线路).

    A 5xx (TLS 525/526 aside) or 529, a stall, a reset or a stream cut short. Never a
    client error (400, 401, 403, 404, 422): the same request is as wrong for another
    model ("把确定性失败当瞬态故障" is the row below in the seed's table). Nor a 429: a
    rate limit or quota is the account's, and after a few in a row the run must stop
    ``usage_limited`` (S5), not go on asking elsewhere.

    >>> route_failure(ProviderError("http_status", "overloaded", status=529))
    True
    >>> route_failure(ProviderError("http_status", "bad request", status=400))
    False
    """
    status = error.effective_status
    if status is not None:
        return status >= 500 and status not in TLS_STATUSES
    return error.kind in TRANSIENT_KINDS


def _stop(reason: str) -> RetryDecision:
    return RetryDecision("do_not_retry", reason)


class StreamFailure(HarnessError):
    """An attempt failed; ``error`` says how. Raised inside the client, never past it.

    >>> StreamFailure(ProviderError("reset", "connection reset")).error.kind
    'reset'
    """

    def __init__(self, error: ProviderError) -> None:
        self.error = error
        super().__init__(f"{error.kind}: {error.message}")
