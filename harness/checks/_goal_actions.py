"""The turns and side effects of a goal case, each placed among the goal events before it.

I5 judges each action against the epoch and revision those events left; I5:lease
against the lease they left alive. Both must see the same actions, placed alike: a
turn is its first request (refused requests and the turn-less ones excluded), a side
effect its tool invocation (refused calls and pure tools excluded).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from harness.trace import GoalEventRecord, GoalTrace, Trace


@dataclass(frozen=True)
class GoalAction:
    """A turn start or a side effect, placed among the goal events before it."""

    what: str  # as a failure message names it
    incarnation: int
    at: float
    is_turn: bool
    events_before: tuple[GoalEventRecord, ...]


def goal_actions(trace: Trace, goal: GoalTrace) -> Iterator[GoalAction]:
    """Each turn's first request, then each side effect, in trace order."""
    seen: set[tuple[int, int]] = set()
    for r in trace.requests:
        if r.delivery == "refused" or r.turn <= 0 or (r.incarnation, r.turn) in seen:
            continue
        seen.add((r.incarnation, r.turn))
        before = tuple(e for e in goal.events if e.requests_before < r.index)
        yield GoalAction(f"turn {r.turn} (request #{r.index}, incarnation {r.incarnation}, "
                         f"at {r.started_at:g}s)", r.incarnation, r.started_at, True, before)
    pure = set(trace.expect.pure_tools)
    for i in trace.invocations:
        if i.refused or i.tool in pure:
            continue
        before = tuple(e for e in goal.events if e.invocations_before < i.seq)
        yield GoalAction(f"tool {i.tool} #{i.call_id} (invocation {i.seq}, incarnation "
                         f"{i.incarnation}, at {i.started_at:g}s)", i.incarnation, i.started_at,
                         False, before)
