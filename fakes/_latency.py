"""Deterministic server timing: the first token waits for the uncached part of the prompt.

A provider reads (prefills) every prompt token it has not cached before it can
send the first output token; cached tokens are almost free. So a prompt-cache
regression shows up twice: in the bill and in time to first token, which is why
seed 002 §19.7 watches both. The model here is linear and fixed (a stand-in,
not a measurement of any real service), so the same request always waits the
same virtual time.

    >>> Latency().first_token_seconds(uncached_tokens=2000, cached_tokens=0)
    0.7
    >>> Latency().first_token_seconds(uncached_tokens=0, cached_tokens=2000)
    0.24
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness._errors import ConfigError


@dataclass(frozen=True)
class Latency:
    """Seconds before the first byte of a streamed answer, from the prompt's token counts."""

    base_seconds: float = 0.2
    """Queueing and the first decode step, paid by every request."""
    per_1k_uncached_seconds: float = 0.25
    """Prefill of prompt tokens the cache did not hold."""
    per_1k_cached_seconds: float = 0.02
    """Reading prompt tokens back from the cache."""

    def __post_init__(self) -> None:
        for name in ("base_seconds", "per_1k_uncached_seconds", "per_1k_cached_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value < 0:
                raise ConfigError(f"Latency.{name}", value, "a finite number of seconds >= 0")

    def first_token_seconds(self, *, uncached_tokens: int, cached_tokens: int) -> float:
        """The wait before the first byte, rounded to the microsecond for stable traces."""
        seconds = (self.base_seconds
                   + self.per_1k_uncached_seconds * uncached_tokens / 1000
                   + self.per_1k_cached_seconds * cached_tokens / 1000)
        return round(seconds, 6)
