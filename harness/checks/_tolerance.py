"""How much a timing check allows a run on real time: nothing in-process, a real process's jitter
when served.

In-process, time is virtual and exact: a wait honoured is honoured to the microsecond.
An agent behind ``harness serve`` or ``--exec`` runs on real time read in scenario
seconds (``--time-scale``): a served trace says so (``time_scale`` in ``Trace.extra``),
and each check that compares a time with a bound allows a margin of real seconds,
read in scenario seconds (over the scale):

==========  ========================  ============================================
S1          + 0.1 real s (10 s at     a real process on a loaded machine is late now
            0.01)                     and then (scheduling, a garbage collection), and
                                      late is the failing side of an upper bound
I9          + 0.1 real s              the same, for the deadline
S5,         - 0.005 real s (0.5 s at  late is the passing side of a lower bound: only
S5:backoff, 0.01)                     the server's millisecond timers and the rounding
breaker                               of the wire's values can make a wait look short
==========  ========================  ============================================

A bound no larger than its margin cannot be judged on that clock: S1 is then
``unknown`` saying so, and S5 judges only the asked waits longer than their margin
(run at a larger ``--time-scale`` to judge the rest).
"""

from __future__ import annotations

from typing import Final

from harness.trace import Trace

#: Real seconds an upper bound (S1's idle bound, I9's deadline) allows a served run.
LATE_REAL_SECONDS: Final = 0.1
#: Real seconds a lower bound (S5's asked wait, a backoff, a cooldown) allows a served run.
EARLY_REAL_SECONDS: Final = 0.005


def _scale(trace: Trace) -> float | None:
    scale = trace.extra.time_scale
    return float(scale) if isinstance(scale, int | float) and scale > 0 else None


def late_tolerance(trace: Trace) -> float:
    """Scenario seconds an upper bound allows (0.0 in-process)."""
    scale = _scale(trace)
    return 0.0 if scale is None else LATE_REAL_SECONDS / scale


def early_tolerance(trace: Trace) -> float:
    """Scenario seconds a lower bound allows (0.0 in-process)."""
    scale = _scale(trace)
    return 0.0 if scale is None else EARLY_REAL_SECONDS / scale


def tolerance_note(tolerance: float) -> str:
    """`` (allowing Xs for a real process)``, or nothing in-process."""
    return f" (allowing {tolerance:g}s for a real process)" if tolerance else ""
