"""L2:path: two writes of one path asked for together never run side by side.

Seed 002 §19.5 (pi: 同一真实文件路径的内部修改还会排队): calls of one assistant message
may run in parallel when their tools are concurrency-safe, but two that change the same
file queue, in the model's order; run side by side, the later write may land first, or
both read the file before either wrote it, and one change is lost. L2 judges tools that
must run alone; this judges writers declared safe to run beside others.

A call names its path by its ``path`` argument (normalised as a POSIX path). Judged
from the world's record alone: each invocation's start and end on the virtual clock,
the tool kind (a ``read`` or ``inspect`` changes nothing), and which calls one answer of
the model carried. Applies to a case in which one answer asked for two writes of one
path; ``unknown`` when none of those writes took any time (an overlap cannot be seen).

Example::

    check_path_queue(trace)  # fail: "edit call c1 (notes.md) ran 0-2s beside edit call c2 ..."
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Final

from harness.checks._verdict import Verdict
from harness.ports import PURE_TOOL_KINDS, named_path
from harness.trace import InvocationRecord, Trace

_ID: Final = "L2:path"


def check_path_queue(trace: Trace) -> Verdict | None:
    """No two writes of one path, asked for in one answer, ran at the same time."""
    pairs = _same_path_pairs(trace)
    if not pairs:
        return None
    timed = [(a, b) for a, b in pairs if _end(a) > a.started_at or _end(b) > b.started_at]
    if not timed:
        return Verdict(_ID, "unknown", f"{len(pairs)} pair(s) of writes of one path were "
                       "asked for together, but none took any time (no overlap to see)")
    side_by_side = [_line(a, b) for a, b in timed
                    if a.started_at < _end(b) and b.started_at < _end(a)]
    if side_by_side:
        return Verdict(_ID, "fail", f"two writes of one path ran side by side: "
                       f"{side_by_side[0]}", tuple(side_by_side),
                       advice="queue the calls of a parallel batch that write the same path: "
                              "run them one after another in the model's order")
    return Verdict(_ID, "pass", f"{len(timed)} pair(s) of writes of one path asked for "
                   "together, each run after the other")


def _same_path_pairs(trace: Trace) -> list[tuple[InvocationRecord, InvocationRecord]]:
    """Writes of one path by one incarnation whose calls one answer of the model carried."""
    batches = [{c.call_id for c in r.calls} for r in trace.requests if len(r.calls) > 1]
    writes = [i for i in trace.invocations
              if not i.refused and i.kind not in PURE_TOOL_KINDS and _path(i) is not None]
    return [(a, b) for a, b in combinations(writes, 2)
            if a.incarnation == b.incarnation and _path(a) == _path(b)
            and any(a.call_id in batch and b.call_id in batch for batch in batches)]


def _path(invocation: InvocationRecord) -> str | None:
    return named_path(invocation.arguments)


def _end(invocation: InvocationRecord) -> float:
    return math.inf if invocation.ended_at is None else invocation.ended_at


def _line(a: InvocationRecord, b: InvocationRecord) -> str:
    return (f"{a.tool} call {a.call_id} ({_path(a)}) ran {a.started_at:g}-{_end(a):g}s beside "
            f"{b.tool} call {b.call_id} {b.started_at:g}-{_end(b):g}s")
