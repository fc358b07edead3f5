"""Compaction, judged from the requests the provider received (seed 000 §3.2; seed 002 §19.1).

Both checks apply under a context window (the scenario's ``provider.context_window``),
where the world records each request's prompt tokens and the tool replies it carried:

- ``compaction`` (compaction loses nothing): every tool result reaches the model
  whole at least once before a compaction may replace it. A result that arrived
  while a compaction ran and was covered by it (seed 000 §3.2: "压缩结果可能覆盖刚收
  到的新消息") only ever reaches the model as a placeholder: that fails. Judged for
  the results the same process received (a crash may lose a result honestly);
  ``unknown`` when nothing was compacted, or when the agent's replies are not the
  tools' JSON results, so that a compacted one cannot be told from an original;
- ``compaction:overflow`` (seed 002 §19.1, pi: "上下文溢出不会落入普通网络重试,而是先
  压缩上下文再重试一次"): after the provider's context-length error the next request
  is smaller (compacted, not the same input again), and an overflow is retried at
  most once. ``unknown`` when no request overflowed, or when the agent sent nothing
  after one (it has no compaction: its stop state is I4's to judge).

Example::

    check_compaction_keeps(trace)   # fail: "1 tool result(s) reached the model only compacted"
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from harness.checks._verdict import Verdict
from harness.trace import InvocationRecord, RequestRecord, Trace

_KEEPS = "compaction"
_OVERFLOW = "compaction:overflow"


def _measured(trace: Trace) -> list[RequestRecord]:
    return [r for r in trace.requests if r.prompt_tokens is not None and r.delivery != "refused"]


def _answered(request: RequestRecord) -> bool:
    """A request the model read and answered (not refused by an error or a condition)."""
    return request.status == 200 and request.condition is None


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


# ------------------------------------------------------------------- compaction


def check_compaction_keeps(trace: Trace) -> Verdict | None:
    """Every tool result reaches the model whole before it is compacted."""
    requests = _measured(trace)
    if not requests:
        return None
    if not _anything_compacted(requests):
        return Verdict(_KEEPS, "unknown", "no earlier tool reply changed between requests: "
                       "nothing was compacted")
    judged, lost = 0, []
    for invocation, result in _results(trace):
        carried = [r for r in requests if r.incarnation == invocation.incarnation
                   and _reply_to(r, invocation.call_id) is not None]
        answered = [r for r in carried if _answered(r)]
        if not answered:
            continue  # the process never asked the model again: nothing to judge
        texts = [_reply_to(r, invocation.call_id) for r in answered]
        if any(_parsed(text) == result for text in texts if text is not None):
            judged += 1
            continue
        lost.append(f"call {invocation.call_id} ({invocation.tool}) returned {invocation.result}; "
                    f"request #{answered[0].index} carried {texts[0]!r}")
    if lost:
        return Verdict(_KEEPS, "fail", f"{len(lost)} tool result(s) reached the model only "
                       "compacted: a compaction covered history it never read", tuple(lost),
                       advice="write a compaction back over the records it read, never over "
                              "what arrived while it ran (seed 000 §3.2)")
    if not judged:
        return Verdict(_KEEPS, "unknown", "no tool reply equals its tool's JSON result, so a "
                       "compacted reply cannot be told from an original")
    return Verdict(_KEEPS, "pass", f"{judged} tool result(s) each reached the model whole "
                   "before any compaction replaced them")


def _anything_compacted(requests: list[RequestRecord]) -> bool:
    first: dict[str, str] = {}
    for request in requests:
        for reply in request.replies:
            if first.setdefault(reply.call_id, reply.text) != reply.text:
                return True
    return False


def _results(trace: Trace) -> Iterator[tuple[InvocationRecord, Any]]:
    for invocation in trace.invocations:
        if invocation.outcome == "ok" and invocation.result is not None:
            yield invocation, json.loads(invocation.result)


def _reply_to(request: RequestRecord, call_id: str) -> str | None:
    return next((r.text for r in request.replies if r.call_id == call_id), None)


# ---------------------------------------------------------- compaction:overflow


def check_overflow_retry(trace: Trace) -> Verdict | None:
    """After a context overflow: one smaller request, never the same input again."""
    requests = _measured(trace)
    if not requests:
        return None
    overflows = [r for r in requests if r.condition == "context_overflow"]
    if not overflows:
        return Verdict(_OVERFLOW, "unknown", "no request overflowed the context window")
    followed = [(r, nxt) for r in overflows if (nxt := _next_after(requests, r)) is not None]
    # A crash between the two may have lost the compaction: the new process resending the
    # same input proves nothing against it (it will meet the overflow itself).
    judged = [(r, nxt) for r, nxt in followed
              if nxt.incarnation == r.incarnation or _smaller(nxt, r)]
    if not judged:
        return Verdict(_OVERFLOW, "unknown", "the agent sent nothing after the context overflow "
                       "(it does not compact, or a crash came first); I4 judges its stop state")
    problems = [f"request #{nxt.index} resent {nxt.prompt_tokens} prompt tokens after request "
                f"#{r.index} overflowed with {r.prompt_tokens}"
                for r, nxt in judged if not _smaller(nxt, r)]
    problems += [f"request #{nxt.index} overflowed again after request #{r.index}, and the "
                 f"agent sent request #{again.index} for the same turn once more"
                 for r, nxt in judged if nxt.condition == "context_overflow"
                 and (again := _next_after(requests, nxt)) is not None
                 and again.incarnation == nxt.incarnation and again.turn == nxt.turn]
    if problems:
        return Verdict(_OVERFLOW, "fail", problems[0], tuple(problems),
                       advice="on a context overflow, compact and send once more; never "
                              "resend the same input, never retry a second overflow")
    shrunk = ", ".join(f"{r.prompt_tokens}→{nxt.prompt_tokens}" for r, nxt in judged)
    return Verdict(_OVERFLOW, "pass", f"{len(judged)} overflow(s), each followed by one "
                   f"smaller request ({shrunk} prompt tokens)")


def _smaller(request: RequestRecord, than: RequestRecord) -> bool:
    return (request.prompt_tokens or 0) < (than.prompt_tokens or 0)


def _next_after(requests: list[RequestRecord], request: RequestRecord) -> RequestRecord | None:
    """The run's next request after ``request`` (from any process)."""
    return next((r for r in requests if r.index > request.index), None)
