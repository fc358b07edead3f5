"""The world keeps each request as the trace's own record, not a twin copied field by field.

What a request asked and what it was answered are fixed when the world takes it; only
the stream's progress changes as the client reads. A second record type holding the same
fields had to be copied into a :class:`RequestRecord` one field at a time, where a field
added to one and not the other is silently lost.
"""

from __future__ import annotations

import dataclasses

from harness.runner._world_streams import Pending
from harness.trace import RequestRecord

# What changes while a stream is played: counted on the request in flight, filled in
# when its record is read.
STREAM_PROGRESS = {"first_byte_at", "ended_at", "delivered_bytes", "longest_silence"}


def test_the_request_in_flight_holds_the_trace_record_and_only_the_stream_s_progress() -> None:
    in_flight = {f.name for f in dataclasses.fields(Pending)}
    recorded = {f.name for f in dataclasses.fields(RequestRecord)}
    assert in_flight & recorded == STREAM_PROGRESS
    assert dataclasses.fields(Pending)[0].type in (RequestRecord, "RequestRecord")
