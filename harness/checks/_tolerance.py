"""How much a timing check allows a run on real time: nothing in-process, a real process's jitter
when served.

In-process, time is virtual and exact: a wait honoured is honoured to the microsecond.
An agent behind ``harness serve`` or ``--exec`` runs on real time read in scenario
seconds (``--time-scale``), and a real process on a loaded machine is late by some
milliseconds now and then (scheduling, a garbage collection, the server's own 2 ms between
a split's parts). So a served trace states how many scenario seconds its clock may be
off (:data:`TOLERANCE_KEY` in ``Trace.extra``: 0.1 real seconds over the scale; 10 s at
0.01), and each check that compares a time with a bound gives it that much:

==========  =====================================================================
S1          silent for at most the idle bound + tolerance
S5          the next request no sooner than the asked wait - tolerance
S5:backoff  a retry no sooner than the backoff floor - tolerance
I9          every request started by the deadline + tolerance
breaker     the cooldown - tolerance before the next request
==========  =====================================================================

A bound no larger than the tolerance cannot be judged on that clock: S1 is then
``unknown`` with the reason (run at a larger ``--time-scale``).
"""

from __future__ import annotations

from typing import Final

from harness.trace import Trace

#: The key of ``Trace.extra`` holding a served run's timing tolerance, in scenario seconds.
TOLERANCE_KEY: Final = "timing_tolerance_seconds"


def timing_tolerance(trace: Trace) -> float:
    """Scenario seconds the trace's clock may be off (0.0 in-process)."""
    value = trace.extra.get(TOLERANCE_KEY, 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def tolerance_note(trace: Trace) -> str:
    """`` (allowing Xs of a real process's jitter)``, or nothing in-process."""
    tolerance = timing_tolerance(trace)
    return f" (allowing {tolerance:g}s of a real process's jitter)" if tolerance else ""
