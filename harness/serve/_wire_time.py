"""What an answer's headers say about time, on the served clock: scaled waits, real dates.

The fakes plan every answer on the world's calendar: waits in scenario seconds
(``Retry-After: 30``, ``retry-after-ms``, OpenAI's ``x-ratelimit-reset-*`` durations)
and dates on a calendar that starts at ``CALENDAR_ORIGIN_UNIX`` (an HTTP-date
``Retry-After``, Anthropic's ``anthropic-ratelimit-*-reset``). The world's record
keeps them so, and the checks judge by them. On the wire a served world speaks the
client's time instead, or a client that honours a header waits a hundred times too
long at ``--time-scale 0.01`` and backs off on its own from a date in the past:

- a wait is multiplied by the scale (``Retry-After: 30`` at 0.01 is ``0.3``: seconds
  with up to three decimals, which the official SDKs read as a float; milliseconds
  with up to three decimals too), rounded up so that an honoured wait is never short;
- a date is the real calendar's: the world's start in real time plus the scaled
  offset, rounded up to the whole second an HTTP date or RFC 3339 can say (so a
  client that subtracts the ``Date`` header or its own clock gets the scaled wait,
  up to a second longer).

Gemini states its wait in an error's body (``google.rpc.RetryInfo``'s ``"retryDelay":
"30s"``): :func:`wire_body` scales it the same way. uvicorn writes the ``Date`` header
from the real clock. At scale 1 a wait is sent as planned; a date is still moved to the
real calendar.

>>> from harness.serve._world import ScaledClock
>>> wire_headers((("retry-after", "30"), ("retry-after-ms", "1500")), ScaledClock(0.01))
[('retry-after', '0.3'), ('retry-after-ms', '15')]
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Final

from fakes import go_duration
from harness.serve._world import ScaledClock

_GO_PART: Final = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_RETRY_DELAY: Final = re.compile(rb'("retryDelay":\s*")(\d+(?:\.\d+)?)s"')
_GO_UNIT: Final = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def wire_headers(headers: Sequence[tuple[str, str]], clock: ScaledClock
                 ) -> list[tuple[str, str]]:
    """``headers`` as the client must read them on ``clock`` (see the module docstring)."""
    return [(name, _on_wire(name.lower(), value, clock)) for name, value in headers]


def wire_body(data: bytes, clock: ScaledClock) -> bytes:
    """An error body with Gemini's ``retryDelay`` in scaled seconds.

    >>> wire_body(b'{"retryDelay":"30s"}', ScaledClock(0.01))
    b'{"retryDelay":"0.3s"}'
    """
    def scaled(found: re.Match[bytes]) -> bytes:
        seconds = _decimal(float(found.group(2)) * clock.scale)
        return found.group(1) + seconds.encode() + b's"'
    return _RETRY_DELAY.sub(scaled, data)


def _on_wire(name: str, value: str, clock: ScaledClock) -> str:
    rewrite = _rewrite(name)
    if rewrite is None:
        return value
    try:
        return rewrite(value, clock)
    except ValueError:
        return value  # a value the fakes did not write (a scenario's own): sent as it is


def _rewrite(name: str) -> Callable[[str, ScaledClock], str] | None:
    if name == "retry-after":
        return _retry_after
    if name == "retry-after-ms":
        return lambda value, clock: _decimal(float(value) * clock.scale)
    if name.startswith("x-ratelimit-reset-"):
        return lambda value, clock: go_duration(go_seconds(value) * clock.scale)
    if name.startswith("anthropic-ratelimit-") and name.endswith("-reset"):
        return _rfc3339
    return None


def _retry_after(value: str, clock: ScaledClock) -> str:
    if value.strip().isdigit():
        return _decimal(int(value) * clock.scale)
    parsed = email.utils.parsedate_to_datetime(value)  # ValueError when it is no date
    real = clock.real_unix(parsed.timestamp())
    return email.utils.formatdate(math.ceil(real), usegmt=True)


def _rfc3339(value: str, clock: ScaledClock) -> str:
    parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    real = clock.real_unix(parsed.timestamp())
    return datetime.fromtimestamp(math.ceil(real), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _decimal(amount: float) -> str:
    """``amount`` rounded up to the thousandth, without trailing zeros.

    >>> _decimal(0.3), _decimal(30.0), _decimal(0.0001), _decimal(0.0)
    ('0.3', '30', '0.001', '0')
    """
    thousandths = math.ceil(round(amount * 1000, 6))
    return f"{thousandths / 1000:.3f}".rstrip("0").rstrip(".")


def go_seconds(text: str) -> float:
    """Seconds of a Go duration as OpenAI writes it (``6m0s``, ``120ms``, ``1h2m3.5s``).

    >>> go_seconds("6m0s"), go_seconds("120ms"), go_seconds("1h2m3.5s")
    (360.0, 0.12, 3723.5)
    >>> go_seconds("soon")
    Traceback (most recent call last):
    ValueError: not a Go duration: 'soon'
    """
    parts = _GO_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(number) * _GO_UNIT[unit] for number, unit in parts)
