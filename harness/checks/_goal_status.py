"""I5:status: a run that stops to wait leaves its goal waiting too, not active.

Seed 002 §19.2's stop table: paused (用户主动暂停), blocked (缺少输入/权限/外部条件),
infra_paused (provider、验证器或执行设施故障), usage_limited (账号/速率限制) and budget_limited
(本 Goal 的 token/time/cost 用尽) each wait for something to change, and none may continue
by itself (能否自动继续: 否); "不要把'本轮停止'写成'目标完成',也不要用一个 error 覆盖所有可恢复
状态". A goal left ``active`` by such a stop is taken up again by the next start, or by
an idle auto-continue (codex), while the limit, the outage or the missing approval still
holds. Judged from the goal service's record alone:

- ``fail``: the run ended in one of those stop states and the goal service holds
  another status for the goal (``active`` most often);
- ``pass``: it holds the same one;
- ``unknown``: the run ended otherwise (``complete``, ``failed``, a turn ``cancelled``:
  nothing that waits), the agent never called the goal port, or the user edited the goal
  after the agent last touched it (an edit makes a goal active again).

Example::

    check_goal_status(trace)  # fail: "the run stopped usage_limited; goal rotate-keys is active"
"""

from __future__ import annotations

from typing import Final

from harness.checks._verdict import Verdict
from harness.ports import WAITING_GOAL_STATUSES
from harness.trace import Trace

_ID: Final = "I5:status"
_ADVICE: Final = ("when the run stops to wait (usage_limited, infra_paused, budget_limited, "
                  "blocked, paused), set the goal to that status before the stop is written, "
                  "so no start or auto-continue takes it up until what it waits for changes")


def check_goal_status(trace: Trace) -> Verdict | None:
    """Fail when a waiting stop left the goal in another status; ``None`` without a goal."""
    goal, outcome = trace.goal, trace.outcome
    if goal is None:
        return None
    if not goal.used:
        return Verdict(_ID, "unknown", "the agent never called the goal port (AgentPorts.goals)")
    stop = outcome.stop_state if outcome is not None else None
    if stop not in WAITING_GOAL_STATUSES:
        return Verdict(_ID, "unknown", f"the run ended {stop or 'without an outcome'}: no stop "
                       "that waits for something to change")
    last_by_agent = max((e.seq for e in goal.events if e.incarnation != 0), default=0)
    if any(e.kind == "edit" and e.seq > last_by_agent for e in goal.events):
        return Verdict(_ID, "unknown", "the user edited the goal after the agent last touched "
                       "it, which makes it active again")
    if goal.final_status != stop:
        return Verdict(_ID, "fail", f"the run stopped {stop}; goal {goal.goal_id} is "
                       f"{goal.final_status} at the goal service, so the next start or an idle "
                       "auto-continue takes it up while what it waits for still holds",
                       advice=_ADVICE)
    return Verdict(_ID, "pass", f"the run stopped {stop}, and the goal service holds the goal "
                   f"{stop} too")
