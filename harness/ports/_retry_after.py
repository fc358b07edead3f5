"""How long the server asked us to wait: ``retry-after-ms``, then ``Retry-After`` (S5).

A pure function of the headers and "now": no clock is read here, so the table
tests need no sleeping (seed 002 §19.1, grok-build: classification as a near-pure
function, the network layer does the waiting). An HTTP date is compared with the
caller's idea of now, which under the harness is the *virtual* now mapped onto
a calendar date (``StreamConfig.clock_epoch_unix``).

Whether the wait is acceptable (not above the cap) is the classifier's call, not
the parser's: the parser reports what the server said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime


def parse_retry_after(headers: Mapping[str, str], *, now_unix: float) -> float | None:
    """Seconds to wait as the server asked, or ``None`` when it asked nothing usable.

    ``retry-after-ms`` (OpenAI, Anthropic) wins over ``Retry-After``; the latter
    is either delta-seconds or an HTTP date. Negative, non-finite and garbled
    values are ignored, as dsh does ("only a positive wait within the local cap
    is accepted", seed 002 §19.1); a date in the past means "now" (``0.0``).
    Header names must be lower case (httpx's ``Headers`` compare case-blind).

    >>> parse_retry_after({"retry-after-ms": "1500"}, now_unix=0)
    1.5
    >>> parse_retry_after({"retry-after": "Thu, 01 Jan 1970 00:01:00 GMT"}, now_unix=30)
    30.0
    >>> parse_retry_after({"retry-after": "soon"}, now_unix=0) is None
    True
    """
    from_ms = _non_negative_number(headers.get("retry-after-ms"))
    if from_ms is not None:
        return from_ms / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative_number(value)
    if seconds is not None:
        return seconds
    return _seconds_until_date(value, now_unix)


def _non_negative_number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return number


def _seconds_until_date(value: str, now_unix: float) -> float | None:
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        # RFC 9110 dates are GMT; "-0000" and zone-less dates parse as naive.
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now_unix)
