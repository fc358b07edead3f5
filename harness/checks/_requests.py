"""The requests a check reads: those that reached the provider, and what followed one.

A request a dead incarnation sent was refused and never reached the model; the request
that follows another is the next its own incarnation sent (a restart asks afresh).
"""

from __future__ import annotations

from harness.trace import RequestRecord, Trace


def live_requests(trace: Trace) -> list[RequestRecord]:
    """The requests that reached the provider, in the order it took them."""
    return sorted((r for r in trace.requests if r.delivery != "refused"), key=lambda r: r.index)


def next_in_incarnation(live: list[RequestRecord], request: RequestRecord
                        ) -> RequestRecord | None:
    """The next request ``request``'s incarnation sent, or ``None``."""
    return next((r for r in live if r.index > request.index
                 and r.incarnation == request.incarnation), None)
