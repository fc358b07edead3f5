"""A request named by the turn it was sent for, in every line that names one.

A request the provider refused before the model (tool calls sent without their
results) keeps turn 0 in its record: it never reached the model, so it met no
fault and no world event, and its record (and the digest) stay as they are. The
turn it was for is in ``trace.extra.refused_turns``; the failure timeline and the
checks' evidence name it by that, so no line says "turn 0 attempt 0".
"""

from __future__ import annotations

from harness.trace._records import RequestRecord, Trace

#: What follows the turn of a request refused before the model: its attempt is not
#: counted (the agent's next try of the turn is the same attempt).
REFUSED_NOTE = "refused before the model, not counted"


def request_turn(trace: Trace, request: RequestRecord, *, attempt: bool = True) -> str:
    """``turn T attempt A`` (``turn T`` without ``attempt``) of ``request`` in ``trace``.

    A request refused before the model: ``turn 2 attempt 1 (refused before the model,
    not counted)``, ``turn 2 (refused before the model)``.
    """
    refused = next((r for r in trace.extra.refused_turns or () if r.request == request.index),
                   None)
    if refused is None:
        return f"turn {request.turn} attempt {request.attempt}" if attempt else \
            f"turn {request.turn}"
    if attempt:
        return f"turn {refused.turn} attempt {refused.attempt} ({REFUSED_NOTE})"
    return f"turn {refused.turn} (refused before the model)"
