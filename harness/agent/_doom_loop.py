"""A degenerate, repeating answer (DoomLoop): seen mid-stream, dropped, resampled.

Seed 002 §19.1 (grok-build's table): "推理死循环(DoomLoop) 🔄 换法重采样 — 重试无意义,
换参数重采样才有意义". A model that keeps saying one phrase will say it again to the
same request, so the stream client watches the text as it arrives: once its tail is
one unit said :data:`MIN_REPEATS` times over at least :data:`MIN_SPAN` characters, it
lets go of the stream (the rest would only be billed), keeps none of the text, and asks
again with other sampling parameters, at most ``StreamConfig.max_resamples`` times.

Example::

    looping_unit("Let me look. " * 20)          # 'Let me look. ' (or a rotation of it)
    resampled({"messages": []}, "openai", 1)    # {'messages': [], 'temperature': 0.8}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.ports import Dialect

#: The times a unit must be said in a row, and the fewest characters that makes:
#: a list's rule line or "ha ha ha" is no loop, twelve lines of one sentence are.
MIN_REPEATS = 6
MIN_SPAN = 160
#: The longest unit looked for; a loop of longer sentences is caught at the output limit.
MAX_UNIT = 200
#: The temperatures of the first and later resamples: each differs from the default the
#: first request left to the provider, and from the one before it.
RESAMPLE_TEMPERATURES = (0.8, 1.0)


def looping_unit(text: str) -> str | None:
    """The unit ``text`` ends by repeating (a degenerate loop), or ``None``.

    >>> looping_unit("Let me look at the notes again. " * 6) is not None
    True
    >>> looping_unit("-" * 400), looping_unit("The notes say three things: a, b and c.")
    (None, None)
    """
    if len(text) < MIN_SPAN:
        return None
    for size in range(4, MAX_UNIT + 1):
        span = max(size * MIN_REPEATS, MIN_SPAN)
        if span > len(text):
            return None
        tail = text[-span:]
        # A tail with period ``size``: it equals itself shifted by one unit.
        if tail[size:] == tail[:-size]:
            unit = tail[-size:]
            # Words or numbers said over and over; a rule line ("-----") is no loop.
            return unit if any(c.isalnum() for c in unit) else None
    return None


def resampled(body: Mapping[str, Any], dialect: Dialect, resample: int) -> dict[str, Any]:
    """``body`` asking for resample number ``resample`` (from 1) at another temperature.

    >>> resampled({"generationConfig": {"maxOutputTokens": 5}}, "gemini", 2)
    {'generationConfig': {'maxOutputTokens': 5, 'temperature': 1.0}}
    """
    temperature = RESAMPLE_TEMPERATURES[min(resample, len(RESAMPLE_TEMPERATURES)) - 1]
    new = dict(body)
    if dialect == "gemini":
        new["generationConfig"] = {**new.get("generationConfig", {}), "temperature": temperature}
    else:
        new["temperature"] = temperature
    return new
