"""Rules of the reference agent that no budget, limit or config number expresses.

Each is on by default; turning one off reproduces a bug a seed warns about, which is
what the mutant catalogue does (as :class:`~harness.agent.BudgetPolicy` does for the
budget's limits). Example::

    ReferenceAgent(ports, discipline=Discipline(park_goal_on_stop=False))
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Discipline:
    """What the reference agent holds to; see the module docstring."""

    #: Seed 002 §19.5 (同一真实文件路径的内部修改还会排队): calls of one parallel batch
    #: that name the same ``path`` run one after another, in the model's order.
    queue_writes_by_path: bool = True
    #: Seed 000 §4 (没有送出 / 是否送达还不清楚): a tool whose answer was lost after its request
    #: went out (a reset or aborted connection, a broken pipe, a timeout) is answered
    #: "outcome unknown: inspect first", never "error", which a model takes for "not done".
    lost_replies_unknown: bool = True
    #: Seed 002 §19.2: only a request whose route failed goes to the task's backup model,
    #: never one the provider called bad (400, 401, 403, 404, 422: 把确定性失败当瞬态故障).
    backup_only_on_route_failures: bool = True
    #: Seed 002 §19.2 (防止"把测试改绿" ④): a call naming a path the goal protects waits
    #: for the user's approval, and the goal is blocked meanwhile.
    keep_protected_paths: bool = True
    #: Seed 002 §19.2's stop table: a run that stops to wait writes that status onto a
    #: goal it leaves active, so no start or auto-continue takes it up meanwhile.
    park_goal_on_stop: bool = True
