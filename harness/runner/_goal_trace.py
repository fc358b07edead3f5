"""The goal service's record as the trace keeps it (seed 002 §19.2-§19.3).

The service logs its events as the trace's records already; what is added here is each
revision's identity and the final state.
"""

from __future__ import annotations

from fakes import GoalService
from harness.trace import GoalTrace, goal_identity_json


def goal_trace(service: GoalService | None) -> GoalTrace | None:
    """What the checkers read of the goal service; ``None`` for a scenario without a goal."""
    if service is None:
        return None
    first = service.revisions[0]
    return GoalTrace(
        goal_id=first.goal_id,
        restart_policy=first.restart_policy,
        acceptance=tuple(goal.acceptance for goal in service.revisions),
        revisions=tuple(goal_identity_json(goal) for goal in service.revisions),
        events=tuple(service.events),
        final_status=service.status,
        used=service.used,
    )
