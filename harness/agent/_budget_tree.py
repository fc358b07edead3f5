"""The budget tree: one goal budget that the turn, provider and tool budgets spend from.

Seed 002 §19.2: "provider、Agent loop 和审查 Agent 必须共享总预算" — with five provider
retries, 64 turns and three reviewers each capped only locally, the worst case is
hundreds of calls. So budgets are handed down from the goal's:

    GoalBudget(token/time/cost/deadline)        Budget (the root, :mod:`._budget`)
    ├─ TurnBudget(maxTurns)                      Task.max_turns, in the loop
    │  ├─ ProviderBudget(maxAttempts)            the stream client's local cap, drawing on the root
    │  └─ ToolBudget(maxCalls/perToolTimeout)    :class:`SubBudget` over the root's deadline

"子预算只能消费父预算,不能自行续杯": a :class:`SubBudget` has a cap of its own, but
every use is also a use of its parent, it never has more time than its parent has
left, and it is spent when its parent is. A tool's timeout is therefore cut to the
time the run has left (a tool never runs past the shared deadline), and the root
caps billed tokens and cost as well as attempts and time.

Example::

    root = goal_budget(task, deadline=600.0, attempts_used=0)
    tools = SubBudget(root, "tool", max_uses=50)
    tools.seconds_for(120.0, now=590.0)       # 10.0: the deadline is nearer than the timeout
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.agent._budget import Budget
from harness.agent._output_spill import DEFAULT_INLINE_CHARS
from harness.ports import Task


@dataclass(frozen=True)
class BudgetPolicy:
    """Which of the goal budget's limits the reference agent enforces (all, by default).

    Turning one off reproduces a bug seed 002 §19.2 warns about; the mutant
    catalogue does exactly that.
    """

    cap_tokens: bool = True
    cap_cost: bool = True
    cap_verifier_rounds: bool = True
    tool_timeouts_within_deadline: bool = True
    cap_tool_calls: bool = True
    # Off: the calls are counted in memory only, so each restart starts a fresh cap.
    count_tool_calls_durably: bool = True
    # Off: 429s in a row are counted in memory only, so a restart buys a fresh run of them.
    count_rate_limits_durably: bool = True
    # The most characters of one tool result sent to the model inline (or the task's
    # ``max_tool_result_chars`` when lower); a longer one is kept whole in a file and sent in
    # part with its reference (seed 002 §19.2: 超长输出有稳定引用). None: every result is
    # sent whole, however long, in every later request.
    inline_tool_result_chars: int | None = DEFAULT_INLINE_CHARS


def goal_budget(task: Task, *, deadline: float, attempts_used: int,
                policy: BudgetPolicy | None = None) -> Budget:
    """The root budget of a run: the task's deadline, attempts, tokens and cost."""
    policy = policy or BudgetPolicy()
    prices = task.prices
    cost_capped = policy.cap_cost and task.max_cost_usd is not None and prices is not None
    return Budget(
        deadline=deadline,
        max_attempts=task.max_attempts,
        max_cost=task.max_cost_usd if cost_capped else None,
        cost_model=prices.cost if prices is not None else None,
        attempts_used=attempts_used,
        max_tokens=task.max_tokens if policy.cap_tokens else None,
    )


class SubBudget:
    """A child budget: its own cap, spent only from ``parent`` (seed 002 §19.2).

    A use needs the parent's time: none starts once the parent's deadline has
    passed, and none is given more seconds than the parent has left.

    >>> root = Budget(deadline=100.0, max_attempts=2)
    >>> child = SubBudget(root, "tool", max_uses=2)
    >>> [child.acquire(now=0.0) for _ in range(3)], child.acquire(now=100.0)
    ([True, True, False], False)
    """

    def __init__(self, parent: Budget, layer: str, *, max_uses: int | None = None,
                 within_deadline: bool = True) -> None:
        self.parent = parent
        self.layer = layer
        self.max_uses = max_uses
        self.used = 0
        self.within_deadline = within_deadline

    def exhausted_reason(self, now: float) -> str | None:
        """Why no further use may start: the parent's deadline, then the own cap."""
        left = self.parent.remaining(now)
        if self.within_deadline and left is not None and left <= 0:
            return f"the shared deadline {self.parent.deadline:g}s has passed"
        if self.max_uses is not None and self.used >= self.max_uses:
            return f"{self.layer} budget of {self.max_uses} used up"
        return None

    def acquire(self, *, now: float) -> bool:
        """Take one use; ``False`` (nothing taken) when this budget or its parent is spent."""
        if self.exhausted_reason(now) is not None:
            return False
        self.used += 1
        return True

    def seconds_for(self, wanted: float, *, now: float) -> float:
        """``wanted`` seconds cut to what the parent has left before its deadline."""
        left = self.parent.remaining(now)
        if not self.within_deadline or left is None:
            return wanted
        return min(wanted, left)
