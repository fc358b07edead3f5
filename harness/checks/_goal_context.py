"""I5:context: the goal stays in the model's view across compactions and restarts.

Seed 002 §19.3: "压缩前后都从 Goal 服务重新读取 objective、验收条件、当前阶段、预算和下一步;摘要
只引用 goalRevision,不要复制一份以后可能过期的目标", and §19.6's bar for long tasks: "经历 N 次
压缩 + 重启后,goalRevision/验收条件/预算逐字段一致". I5 judges the goal the agent names to the
goal service; this check judges the goal its model reads. Under a context window with a
goal, the world records which revisions each request carried (the objective and every
acceptance criterion, anywhere in the body: :mod:`harness.runner._goal_seen`). Once a
request told the model the goal, every later one must still tell it:

- a request that carries no revision of the goal fails: a compaction summarised the task
  away, or a restart rebuilt the history without it;
- a request that carries only a revision older than the one its process had declared to
  the goal service before sending it fails: the model works from a copy kept in a summary
  while the service holds an edit.

``unknown`` when no request carried the goal whole (an agent that tells its model the
goal some other way) or when nothing was compacted after it did (nothing to survive).
Applies to goal scenarios under a context window only (``None`` elsewhere).

Example::

    check_goal_in_context(trace)  # fail: "request #6 (turn 4, incarnation 2) told ..."
"""

from __future__ import annotations

from typing import Final

from harness.checks._verdict import Verdict
from harness.trace import GoalInRequest, RequestRecord, Trace, request_turn

_ID: Final = "I5:context"


def check_goal_in_context(trace: Trace) -> Verdict | None:
    """Fail when a request after the first that carried the goal lost it or went stale."""
    seen = trace.extra.goal_in_requests
    if seen is None:
        return None
    carried = {g.request: g for g in seen}
    requests = [r for r in trace.requests if r.index in carried]
    first = next((r for r in requests if carried[r.index].revisions), None)
    if first is None:
        return Verdict(_ID, "unknown", "no request carried the goal's objective and every "
                       "acceptance criterion: the agent tells its model the goal some other "
                       "way, or not at all")
    later = [r for r in requests if r.index > first.index]
    compacted = _compacted_at(requests)
    if not any(index > first.index for index in compacted):
        return Verdict(_ID, "unknown", "nothing was compacted after the goal first reached "
                       "the model: nothing for the goal to survive")
    problems = [p for r in later if (p := _problem(trace, r, carried[r.index])) is not None]
    if problems:
        return Verdict(_ID, "fail", problems[0], tuple(problems[:12]),
                       advice="read the goal from the goal service before every request and "
                              "put it where compaction never reaches (the system prompt); a "
                              "summary names the goal revision, never a copy of the goal")
    restarts = len({r.incarnation for r in later} - {first.incarnation})
    return Verdict(_ID, "pass", f"{len(later)} request(s) after the first each told the model "
                   f"the goal, across {len(compacted)} compaction(s) and {restarts} "
                   "restart(s)")


def _problem(trace: Trace, request: RequestRecord, seen: GoalInRequest) -> str | None:
    where = (f"request #{request.index} ({request_turn(trace, request, attempt=False)}, "
             f"incarnation {request.incarnation})")
    if not seen.revisions:
        return f"{where} told the model no revision of the goal: its objective or criteria " \
               "were gone"
    declared = _declared_before(trace, request)
    if declared is not None and max(seen.revisions) < declared:
        return (f"{where} told the model goal revision {max(seen.revisions)} after its process "
                f"had declared revision {declared} to the goal service")
    return None


def _declared_before(trace: Trace, request: RequestRecord) -> int | None:
    """The newest revision the request's process declared to the goal service before it."""
    if trace.goal is None:
        return None
    revisions = [e.declared_revision for e in trace.goal.events
                 if e.kind == "declare" and e.incarnation == request.incarnation
                 and e.requests_before < request.index and e.declared_revision is not None]
    return max(revisions) if revisions else None


def _compacted_at(requests: list[RequestRecord]) -> list[int]:
    """The requests at which an earlier tool reply first came back changed (compacted)."""
    first: dict[str, str] = {}
    changed: set[str] = set()
    found: list[int] = []
    for request in requests:
        new = {reply.call_id for reply in request.replies
               if first.setdefault(reply.call_id, reply.text) != reply.text} - changed
        if new:
            changed |= new
            found.append(request.index)
    return found
