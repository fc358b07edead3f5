"""One budget shared by every retry layer (S8).

Seed 002 §19.1: SDK/transport, agent request, tool and task layers may each
keep a local counter, "但都必须消费同一个总截止时间、费用和 attempt 预算" — otherwise
3 retries per layer become 3 x 3 x 3 x 3. A :class:`Budget` holds the one
deadline (virtual time), the one attempt count, and an optional cost budget fed
by a pricing hook; each layer draws on it and records which layer drew.

After a restart the counters are restored from the retry log
(:meth:`Budget.restore`), as dsh resumes "从最后一条匹配事件继续计数".

Example::

    budget = Budget(deadline=600.0, max_attempts=10)
    budget.acquire_attempt("transport", now=0.0)      # True: one attempt used
    budget.can_wait(now=595.0, seconds=10.0)          # False: would pass the deadline
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.agent._classify import RetryLayer
from harness.agent._defaults import StreamConfig
from harness.agent._retry_log import RetryEvent
from harness.ports import Usage

#: Prices one attempt's usage (in any currency unit the caller chooses).
CostModel = Callable[[Usage], float]


# Not compared by value: each run draws on its own budget, however alike two start.
@dataclass(kw_only=True, eq=False)
class Budget:
    """The shared deadline, attempt count and cost of one run (or one goal).

    ``deadline`` is an absolute virtual time (``None``: no deadline);
    ``max_attempts`` caps attempts over all layers; ``max_cost`` with
    ``cost_model`` caps spending (both ``None``: not tracked); ``max_tokens``
    caps the billed tokens. It is the root of the budget tree of seed 002 §19.2
    (GoalBudget); :mod:`._budget_tree` hangs the turn, provider and tool budgets
    under it.

    >>> b = Budget(deadline=10.0, max_attempts=1)
    >>> b.acquire_attempt("request", now=0.0), b.acquire_attempt("request", now=0.0)
    (True, False)
    """

    deadline: float | None
    max_attempts: int | None
    max_cost: float | None = None
    cost_model: CostModel | None = None
    attempts_used: int = 0
    cost_used: float = 0.0
    max_tokens: int | None = None
    tokens_used: int = field(default=0, init=False)
    attempts_by_layer: Counter[str] = field(default_factory=Counter, init=False)

    @classmethod
    def for_run(cls, config: StreamConfig, *, now: float) -> Budget:
        """A budget from ``config``: deadline ``now + overall_deadline``."""
        return cls(deadline=now + config.overall_deadline, max_attempts=config.budget_attempts)

    @classmethod
    def restore(
        cls, events: Iterable[RetryEvent], fallback: Budget, *, cost_model: CostModel | None = None
    ) -> Budget:
        """Rebuild the budget after a restart from the persisted retry events.

        The latest event's snapshot wins (the deadline stays the one first set, so
        a restart never buys more time); without events, ``fallback`` is used.

        >>> ev = RetryEvent("retry_started", "transport", "k", "a2", "a1", 1, 5.0, 0.0, "", 2, 50.0)
        >>> Budget.restore([ev], Budget(deadline=999.0, max_attempts=9)).attempts_used
        2
        """
        last: RetryEvent | None = None
        for event in events:
            last = event
        if last is None:
            return fallback
        return cls(
            deadline=last.deadline,
            max_attempts=fallback.max_attempts,
            max_cost=fallback.max_cost,
            cost_model=cost_model or fallback.cost_model,
            attempts_used=max(last.attempts_used, fallback.attempts_used),
            cost_used=fallback.cost_used,
            max_tokens=fallback.max_tokens,
        )

    def remaining(self, now: float) -> float | None:
        """Virtual seconds left before the deadline (``None``: unbounded)."""
        return None if self.deadline is None else max(0.0, self.deadline - now)

    def exhausted_reason(self, now: float) -> str | None:
        """Why no further attempt may start, or ``None`` when one may."""
        if self.deadline is not None and now >= self.deadline:
            return f"deadline {self.deadline:g}s reached at {now:g}s"
        if self.max_attempts is not None and self.attempts_used >= self.max_attempts:
            return f"shared attempt budget of {self.max_attempts} used up"
        if self.max_cost is not None and self.cost_used >= self.max_cost:
            return f"cost budget {self.max_cost:g} used up ({self.cost_used:g})"
        if self.max_tokens is not None and self.tokens_used >= self.max_tokens:
            return f"token budget of {self.max_tokens} used up ({self.tokens_used})"
        return None

    def acquire_attempt(self, layer: RetryLayer, *, now: float) -> bool:
        """Take one attempt for ``layer``; ``False`` (and nothing taken) if exhausted."""
        if self.exhausted_reason(now) is not None:
            return False
        self.attempts_used += 1
        self.attempts_by_layer[layer] += 1
        return True

    def can_wait(self, *, now: float, seconds: float) -> bool:
        """Whether waiting ``seconds`` still leaves time before the deadline."""
        return self.deadline is None or now + seconds < self.deadline

    def charge(self, usage: Usage | None) -> None:
        """Count one attempt's usage once (tokens always, cost if priced)."""
        if usage is None:
            return
        self.tokens_used += usage.input_tokens + usage.output_tokens
        if self.cost_model is not None:
            self.cost_used += self.cost_model(usage)
