"""The budget tree (seed 002 §19.2): sub-budgets spend only from the goal budget."""

from __future__ import annotations

from harness.agent import Budget, BudgetPolicy
from harness.agent._budget_tree import SubBudget, goal_budget
from harness.ports import Task, Usage, UsagePrices

PRICES = UsagePrices(input=2.0, cache_read=0.5, output=8.0)


def test_the_goal_budget_caps_tokens_and_cost() -> None:
    task = Task("t", max_tokens=100, max_cost_usd=1.0, prices=PRICES)
    budget = goal_budget(task, deadline=600.0, attempts_used=0)
    budget.charge(Usage(40, 10))
    assert budget.exhausted_reason(0.0) is None
    budget.charge(Usage(40, 10))
    assert budget.exhausted_reason(0.0) == "token budget of 100 used up (100)"


def test_cost_is_priced_per_bucket_and_caps_the_run() -> None:
    task = Task("t", max_cost_usd=0.00002, prices=PRICES)
    budget = goal_budget(task, deadline=600.0, attempts_used=0)
    budget.charge(Usage(10, 1, cache_read_tokens=4))  # 6*2 + 4*0.5 + 1*8 = 22 per million
    assert budget.cost_used == 22 / 1_000_000
    assert budget.exhausted_reason(0.0) == "cost budget 2e-05 used up (2.2e-05)"


def test_a_policy_that_does_not_cap_leaves_the_limits_off() -> None:
    task = Task("t", max_tokens=1, max_cost_usd=0.0, prices=PRICES)
    budget = goal_budget(task, deadline=600.0, attempts_used=0,
                         policy=BudgetPolicy(cap_tokens=False, cap_cost=False))
    budget.charge(Usage(1000, 1000))
    assert budget.exhausted_reason(0.0) is None


def test_a_sub_budget_never_outlives_its_parent() -> None:
    root = Budget(deadline=100.0, max_attempts=10)
    tools = SubBudget(root, "tool", max_uses=3)
    assert tools.seconds_for(300.0, now=40.0) == 60.0
    assert tools.acquire(now=99.0)
    assert not tools.acquire(now=100.0)
    assert tools.exhausted_reason(100.0) == "the shared deadline 100s has passed"


def test_a_sub_budget_has_a_cap_of_its_own() -> None:
    tools = SubBudget(Budget(deadline=None, max_attempts=None), "tool", max_uses=1)
    assert tools.acquire(now=0.0)
    assert not tools.acquire(now=0.0)
    assert tools.exhausted_reason(0.0) == "tool budget of 1 used up"


def test_outside_the_deadline_policy_the_tool_keeps_its_own_timeout() -> None:
    tools = SubBudget(Budget(deadline=100.0, max_attempts=None), "tool", within_deadline=False)
    assert tools.seconds_for(300.0, now=40.0) == 300.0
