"""Rate-limit quotas on virtual time, and the headers each dialect states them in.

A real provider limits requests and tokens per minute and says where a client
stands on every answer: OpenAI in ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
(the reset as a duration such as ``6m0s`` or ``120ms``), Anthropic in
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
(the reset as an RFC 3339 date). A request over a limit gets a 429 whose
``retry-after-ms`` (OpenAI) or ``retry-after`` (Anthropic, whole seconds) is the
exact wait until it would be admitted (seed 002 §19.1, "尊重服务端 Retry-After").

:class:`QuotaWindow` keeps the admitted requests of the last 60 virtual seconds
(a sliding window): a request is admitted while each declared limit has room,
and charged the tokens its answer reports. A rejected request is not charged,
so a client that waits as asked is admitted when the wait is over; one that
retries sooner gets 429 after 429.

Example::

    window = QuotaWindow(Quota(requests_per_minute=2))
    window.admit(0.0); window.admit(1.0)
    window.wait(2.0)          # 58.0: the request of t=0 leaves the window at t=60
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Final, Literal

from harness._errors import ConfigError
from harness.ports import Count, Dialect, Doc, HttpError

WINDOW_SECONDS: Final = 60.0
# Virtual times are sums of floats: an entry due to leave at t leaves at t - 1 µs too.
_EPS: Final = 1e-6

Limited = Literal["requests", "tokens", "input_tokens", "output_tokens"]
Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Quota:
    """Limits per minute; ``None`` does not limit (headers then show a nominal tier).

    >>> Quota(requests_per_minute=3).limit("requests")
    3
    """

    requests_per_minute: Annotated[Count | None, Doc("Requests admitted per minute.")] = None
    tokens_per_minute: Annotated[
        Count | None, Doc("Input plus output tokens per minute.")] = None
    input_tokens_per_minute: Annotated[
        Count | None, Doc("Input tokens per minute (Anthropic's ITPM).")] = None
    output_tokens_per_minute: Annotated[
        Count | None, Doc("Output tokens per minute (Anthropic's OTPM).")] = None

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "tokens_per_minute", "input_tokens_per_minute",
                     "output_tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"Quota.{name}", value, "an int >= 1 or None")

    def limit(self, what: Limited) -> int | None:
        """The declared limit of ``what``, or ``None``."""
        limit: int | None = getattr(self, f"{what}_per_minute")
        return limit


# What the headers show for a limit the scenario left open: a generous paid tier.
_NOMINAL: Final[dict[Limited, int]] = {
    "requests": 10_000, "tokens": 2_000_000, "input_tokens": 2_000_000,
    "output_tokens": 400_000,
}
_LIMITS: Final[tuple[Limited, ...]] = ("requests", "tokens", "input_tokens", "output_tokens")


@dataclass
class _Admitted:
    at: float
    input_tokens: int = 0
    output_tokens: int = 0

    def used(self, what: Limited) -> int:
        if what == "requests":
            return 1
        if what == "input_tokens":
            return self.input_tokens
        if what == "output_tokens":
            return self.output_tokens
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Standing:
    """Where a client stands on one limit: the limit, what is left, seconds to a full reset."""

    limit: int
    remaining: int
    reset_seconds: float


@dataclass(frozen=True)
class Rejection:
    """A request over a limit: which one, and the exact wait until it would be admitted."""

    limited: Limited
    wait: float
    limit: int
    used: int


class QuotaWindow:
    """The admitted requests of the last minute; see the module docstring."""

    def __init__(self, quota: Quota | None = None) -> None:
        self.quota = quota or Quota()
        self._window: deque[_Admitted] = deque()
        # Running sums over the window: every answer reads them, a long run's window is long.
        self._totals: dict[Limited, int] = dict.fromkeys(_LIMITS, 0)

    def _forget(self, now: float) -> None:
        while self._window and self._window[0].at + WINDOW_SECONDS <= now + _EPS:
            gone = self._window.popleft()
            for what in _LIMITS:
                self._totals[what] -= gone.used(what)

    def _used(self, what: Limited) -> int:
        return self._totals[what]

    def check(self, now: float) -> Rejection | None:
        """``None`` when a request at ``now`` has room under every declared limit."""
        self._forget(now)
        rejections = [Rejection(what, self._wait_for(what, limit, now), limit, self._used(what))
                      for what in _LIMITS
                      if (limit := self.quota.limit(what)) is not None
                      and self._used(what) >= limit]
        return max(rejections, key=lambda r: r.wait) if rejections else None

    def wait(self, now: float) -> float:
        """Seconds until a request would be admitted (0.0: now)."""
        rejection = self.check(now)
        return 0.0 if rejection is None else rejection.wait

    def _wait_for(self, what: Limited, limit: int, now: float) -> float:
        # The oldest entries leave first; the wait ends when what stays is under the limit.
        used = self._used(what)
        for entry in self._window:
            used -= entry.used(what)
            if used < limit:
                return max(0.0, entry.at + WINDOW_SECONDS - now)
        return 0.0  # unreachable while used >= limit: the loop empties the window

    def admit(self, now: float) -> None:
        """Count a request admitted at ``now``; its tokens come with :meth:`charge`."""
        self._forget(now)
        self._window.append(_Admitted(now))
        self._totals["requests"] += 1

    def state(self) -> tuple[object, ...]:
        """What later answers depend on: the requests still in the window (crash exploration
        keys a world by it, so two worlds with different windows never pass for one)."""
        return tuple(repr(entry) for entry in self._window)

    def charge(self, input_tokens: int, output_tokens: int) -> None:
        """Charge the last admitted request the tokens its answer reports."""
        if self._window:
            last = self._window[-1]
            last.input_tokens += input_tokens
            last.output_tokens += output_tokens
            self._totals["input_tokens"] += input_tokens
            self._totals["output_tokens"] += output_tokens
            self._totals["tokens"] += input_tokens + output_tokens

    def standing(self, what: Limited, now: float) -> Standing:
        """The limit (declared or nominal), what is left of it and when all of it is back."""
        self._forget(now)
        limit = self.quota.limit(what) or _NOMINAL[what]
        used = self._used(what)
        # The newest entry that holds some of it: the whole limit is back when it leaves.
        last = next((entry.at for entry in reversed(self._window) if entry.used(what)), None)
        reset = 0.0 if last is None else max(0.0, last + WINDOW_SECONDS - now)
        return Standing(limit, max(0, limit - used), reset)


# ------------------------------------------------------------------ the dialects


def go_duration(seconds: float) -> str:
    """A wait as OpenAI writes it: Go's duration format, to the millisecond.

    >>> go_duration(0.12), go_duration(1), go_duration(360), go_duration(3723.5)
    ('120ms', '1s', '6m0s', '1h2m3.5s')
    """
    millis = math.ceil(round(seconds * 1000, 6))
    if millis < 1000:
        return f"{millis}ms"
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{secs}"
    return f"{minutes}m{secs}" if minutes else secs


def rfc3339(unix: float) -> str:
    """A time as Anthropic writes its resets: RFC 3339, whole seconds, UTC.

    >>> rfc3339(1_767_225_600.4)
    '2026-01-01T00:00:01Z'
    """
    return datetime.fromtimestamp(math.ceil(unix), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_OPENAI_LIMITS: Final[tuple[Limited, ...]] = ("requests", "tokens")


def _openai_headers(window: QuotaWindow, now: float, _origin: float) -> Headers:
    headers: list[tuple[str, str]] = []
    for what in _OPENAI_LIMITS:
        s = window.standing(what, now)
        headers += [(f"x-ratelimit-limit-{what}", str(s.limit)),
                    (f"x-ratelimit-remaining-{what}", str(s.remaining)),
                    (f"x-ratelimit-reset-{what}", go_duration(s.reset_seconds))]
    return tuple(headers)


def _anthropic_headers(window: QuotaWindow, now: float, origin: float) -> Headers:
    headers: list[tuple[str, str]] = []
    for what in _LIMITS:
        s = window.standing(what, now)
        name = f"anthropic-ratelimit-{what.replace('_', '-')}"
        headers += [(f"{name}-limit", str(s.limit)), (f"{name}-remaining", str(s.remaining)),
                    (f"{name}-reset", rfc3339(origin + now + s.reset_seconds))]
    return tuple(headers)


def _openai_rejection(rejection: Rejection) -> HttpError:
    what = {"requests": "requests per min (RPM)"}.get(rejection.limited,
                                                     "tokens per min (TPM)")
    message = (f"Rate limit reached in organization org-fake on {what}: Limit "
               f"{rejection.limit}, Used {rejection.used}. Please try again in "
               f"{go_duration(rejection.wait)}.")
    return HttpError(429, retry_after_ms=math.ceil(round(rejection.wait * 1000, 6)),
                     message=message)


def _anthropic_rejection(rejection: Rejection) -> HttpError:
    what = rejection.limited.replace("_", " ")
    message = (f"This request would exceed the rate limit for your organization of "
               f"{rejection.limit} {what} per minute. You can see the response headers for "
               "current usage. Please try again later.")
    return HttpError(429, retry_after=math.ceil(round(rejection.wait, 6)), message=message)


@dataclass(frozen=True)
class RateLimitWire:
    """How one dialect states its limits on every answer, and words a quota's 429."""

    limits: tuple[Limited, ...]
    """The limits the dialect has (a quota may declare only these)."""
    headers: Callable[[QuotaWindow, float, float], Headers]
    rejection: Callable[[Rejection], HttpError]


#: The rate-limit wire of each dialect; a dialect without an entry (Gemini, whose API
#: sends no rate-limit headers) sends none and a plain ``retry-after`` with its quota 429s.
RATE_LIMIT_WIRES: Final[dict[Dialect, RateLimitWire]] = {
    "openai": RateLimitWire(_OPENAI_LIMITS, _openai_headers, _openai_rejection),
    # The Responses API sits on the same account limits and sends the same headers.
    "openai-responses": RateLimitWire(_OPENAI_LIMITS, _openai_headers, _openai_rejection),
    "anthropic": RateLimitWire(_LIMITS, _anthropic_headers, _anthropic_rejection),
}


def quota_fields(dialect: Dialect) -> tuple[str, ...]:
    """The :class:`Quota` fields a quota for ``dialect`` may set.

    >>> quota_fields("openai")
    ('requests_per_minute', 'tokens_per_minute')
    """
    wire = RATE_LIMIT_WIRES.get(dialect)
    return tuple(f"{what}_per_minute" for what in (wire.limits if wire else _LIMITS))


def rate_limit_headers(dialect: Dialect, window: QuotaWindow, now: float,
                       calendar_origin: float) -> Headers:
    """The rate-limit headers ``dialect`` sends on every answer."""
    wire = RATE_LIMIT_WIRES.get(dialect)
    return () if wire is None else wire.headers(window, now, calendar_origin)


def quota_error(dialect: Dialect, rejection: Rejection) -> HttpError:
    """The 429 ``dialect`` answers a request over a quota with, its wait in the headers."""
    wire = RATE_LIMIT_WIRES.get(dialect)
    if wire is None:
        return HttpError(429, retry_after=math.ceil(round(rejection.wait, 6)))
    return wire.rejection(rejection)
