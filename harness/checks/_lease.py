"""I5:lease: no turn or side effect runs under an execution lease that has lapsed.

Seed 002 §19.3: "推荐单独保存一份带过期时间的执行授权,记录它允许执行哪个 goalId + goalRevision、由
哪个当前进程或 runner 持有" — authority over a goal has an end time. Each declared turn or tool
batch renews it while it holds; once it ran out (a long tool call, a long wait), nothing
renews it: the holder must acquire it again (a new epoch) before it acts, because another
runner may have taken the goal meanwhile. I5 judges that each action names the epoch the
service holds; this check judges that the epoch was still alive when the action started.

The lease's life is rebuilt from the goal service's event log alone: an ``acquire`` starts
it at ``at + lease_seconds``; a ``declare`` by its holder under its epoch, made before
that end, moves the end to ``at + lease_seconds``; a ``declare`` after it renews nothing.
Applies to scenarios that declare ``goal.lease_seconds``; ``unknown`` when the agent never
called the goal port, or when no action came after the lease first lapsed (nothing to judge).

Example::

    check_lease(trace)  # fail: "turn 2 (request #2, incarnation 1, at 300s) ran under ..."
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from harness.checks._goal_actions import goal_actions
from harness.checks._verdict import Verdict
from harness.ports import Lease
from harness.trace import GoalEventRecord, GoalTrace, Trace

_ID: Final = "I5:lease"


def check_lease(trace: Trace) -> Verdict | None:
    """Fail when a turn or side effect started after its incarnation's lease ran out."""
    seconds, goal = trace.extra.lease_seconds, trace.goal
    if seconds is None or goal is None:
        return None
    if not goal.used:
        return Verdict(_ID, "unknown", "the agent never called the goal port: an agent without "
                       "one holds no lease to judge")
    lapses = _lapses(goal, seconds)
    actions = sorted(goal_actions(trace, goal), key=lambda a: (a.at, len(a.events_before)))
    judged = [a for a in actions if any(at <= a.at for at in lapses)]
    if not judged:
        return Verdict(_ID, "unknown", "no turn or side effect came after a lease lapsed "
                       f"({seconds:g} s without a declared action): nothing to judge")
    late = [f"{a.what} ran under epoch {held.epoch} held by incarnation {held.holder}, whose "
            f"lease ended at {held.expires_at:g}s" if held is not None
            else f"{a.what} ran with no lease"
            for a in judged
            if (held := _held_at(goal, a.events_before, seconds)) is None
            or held.holder != a.incarnation or a.at >= held.expires_at]
    if late:
        return Verdict(_ID, "fail", late[0], tuple(late[:12]),
                       advice="keep the lease's end time and renew it with each declared "
                              "action; once it lapsed, acquire the lease again (a new epoch) "
                              "and re-read the goal before the next turn or tool")
    return Verdict(_ID, "pass", f"the lease lapsed {len(lapses)} time(s); the "
                   f"{len(judged)} turn(s) and side effect(s) after each ran under a lease "
                   "taken or renewed in time")


def _held_at(goal: GoalTrace, events: tuple[GoalEventRecord, ...], seconds: float
             ) -> Lease | None:
    """The lease after ``events``, as the goal service held it (``fakes.GoalService``):
    acquires start it, timely declares by its holder renew it."""
    held: Lease | None = None
    for e in events:
        if e.kind == "acquire":
            held = Lease(e.epoch, e.incarnation, goal.goal_id, e.revision, e.at + seconds)
        elif e.kind == "declare" and held is not None and e.incarnation == held.holder \
                and e.declared_epoch == held.epoch and e.at < held.expires_at:
            held = replace(held, expires_at=e.at + seconds)
    return held


def _lapses(goal: GoalTrace, seconds: float) -> list[float]:
    """The times at which a lease ran out before anything renewed or replaced it."""
    ends: list[float] = []
    events = goal.events
    for n, e in enumerate(events):
        if e.kind not in ("acquire", "declare"):
            continue
        held = _held_at(goal, events[:n], seconds)
        if held is not None and e.at >= held.expires_at:
            ends.append(held.expires_at)
    return ends
