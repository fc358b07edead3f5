"""S8: one budget for every layer; S7: its counters survive a restart."""

from __future__ import annotations

import pytest

from harness import ConfigError
from harness.agent import Budget, StreamConfig
from harness.agent._retry_log import RetryEvent
from harness.ports import Usage


def _event(kind: str, attempts_used: int, deadline: float | None = 100.0) -> RetryEvent:
    return RetryEvent(
        kind,  # type: ignore[arg-type]
        "transport",
        "openai:https://api.test/v1/chat/completions",
        f"att_{attempts_used}",
        None,
        1,
        5.0,
        2.0,
        "transient reset",
        attempts_used,
        deadline,
    )


def test_attempts_are_shared_across_layers() -> None:
    budget = Budget(deadline=None, max_attempts=3)
    assert budget.acquire_attempt("transport", now=0.0)
    assert budget.acquire_attempt("tool", now=0.0)
    assert budget.acquire_attempt("task", now=0.0)
    assert not budget.acquire_attempt("request", now=0.0)
    assert budget.attempts_by_layer == {"transport": 1, "tool": 1, "task": 1}
    assert budget.exhausted_reason(0.0) == "shared attempt budget of 3 used up"


def test_the_deadline_bounds_attempts_and_waits() -> None:
    budget = Budget(deadline=60.0, max_attempts=None)
    assert budget.remaining(45.0) == 15.0
    assert budget.can_wait(now=45.0, seconds=14.0)
    assert not budget.can_wait(now=45.0, seconds=15.0)
    assert not budget.acquire_attempt("request", now=60.0)
    assert budget.exhausted_reason(61.0) == "deadline 60s reached at 61s"


def test_cost_is_charged_once_per_attempt_through_the_hook() -> None:
    budget = Budget(
        deadline=None,
        max_attempts=None,
        max_cost=1.0,
        cost_model=lambda u: u.input_tokens * 0.001 + u.output_tokens * 0.002,
    )
    budget.charge(Usage(300, 100))
    budget.charge(None)
    assert budget.cost_used == pytest.approx(0.5)
    assert budget.tokens_used == 400
    budget.charge(Usage(300, 100))
    assert budget.exhausted_reason(0.0) == "cost budget 1 used up (1)"


def test_for_run_takes_the_config_deadline_from_now() -> None:
    budget = Budget.for_run(StreamConfig(overall_deadline=90.0, budget_attempts=4), now=10.0)
    assert (budget.deadline, budget.max_attempts) == (100.0, 4)


def test_restore_resumes_from_the_last_event_and_keeps_the_first_deadline() -> None:
    events = [_event("retry_scheduled", 1), _event("retry_started", 2), _event("retry_started", 3)]
    restored = Budget.restore(events, Budget(deadline=999.0, max_attempts=5))
    assert (restored.attempts_used, restored.deadline, restored.max_attempts) == (3, 100.0, 5)
    round_trip = [RetryEvent.from_json(e.to_json()) for e in events]
    assert round_trip == events


def test_restore_without_events_is_the_fallback() -> None:
    fallback = Budget(deadline=1.0, max_attempts=1)
    assert Budget.restore([], fallback) is fallback


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("idle_timeout", 0, r"^idle_timeout: got 0; expected a finite number > 0.0"),
        ("max_attempts", 0, r"^max_attempts: got 0; expected an integer >= 1$"),
        ("backoff_factor", 0.5, r"^backoff_factor: got 0.5; expected a finite number >= 1.0"),
        ("backoff_jitter", 2.0, r"^backoff_jitter: got 2.0; expected a finite number >= 0.0 and"),
        ("retry_after_cap", float("inf"), r"^retry_after_cap: got inf; expected a finite number"),
        ("max_continuations", -1, r"^max_continuations: got -1; expected an integer >= 0$"),
    ],
)
def test_stream_config_rejects_bad_values(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        StreamConfig(**{field: value})  # type: ignore[arg-type]
