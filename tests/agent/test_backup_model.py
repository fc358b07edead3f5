"""The reference agent's backup model (seed 002 §19.2: 同请求退避重试或切备用线路).

Past the primary's retries on a failed route (its breaker opens after three 529s), the
same request names the backup; the switch is written before the backup's first request,
so a restart keeps asking the backup for that request; a client error never switches;
and the backup draws on the one attempt budget.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agent import BreakerConfig
from harness.agent._classify import ProviderError, route_failure
from harness.mutants import Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.ports import AgentFactory
from harness.trace import Trace

TAKES_OVER = "scenarios/streaming/backup-model-takes-over.yaml"
BAD_REQUEST = "scenarios/streaming/backup-model-not-for-a-bad-request.yaml"


def _trace(scenario: str, crash: str | None = None,
           factory: AgentFactory | None = None) -> Trace:
    result = run_kill(Kill(scenario, "retry:backup", crash), factory or reference())
    assert result.trace is not None
    return result.trace


def _asked(trace: Trace) -> list[tuple[int, str | None, int]]:
    return [(r.incarnation, r.model, r.status) for r in trace.requests]


def test_the_backup_answers_once_the_primary_breaker_opens() -> None:
    trace = _trace(TAKES_OVER)

    assert _asked(trace) == [(1, "fake-sonnet", 529)] * 3 + [(1, "fake-haiku", 200)] * 2
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "complete"


def test_a_restart_after_the_switch_was_written_keeps_asking_the_backup() -> None:
    # Without a breaker the primary gets its six attempts; the switch is record #20.
    no_breaker = reference(breaker=BreakerConfig(enabled=False))
    before = _trace(TAKES_OVER, "session:fsync#19:after:unsynced_lost", no_breaker)
    after = _trace(TAKES_OVER, "session:fsync#20:after:unsynced_lost", no_breaker)

    first = next((i, m) for i, m, _ in _asked(before) if i == 2)
    assert first == (2, "fake-sonnet")  # the switch was never written: the primary again
    asked = _asked(after)
    assert [m for i, m, _ in asked if i == 1] == ["fake-sonnet"] * 6
    assert next((i, m) for i, m, _ in asked if i == 2) == (2, "fake-haiku")


def test_a_client_error_is_never_sent_to_the_backup() -> None:
    trace = _trace(BAD_REQUEST)

    assert _asked(trace) == [(1, "fake-gpt", 400)]
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "failed"


def test_the_backup_draws_on_the_one_attempt_budget(tmp_path: Path) -> None:
    # Three attempts in all: the primary spends them, nothing is left to switch with.
    text = Path(TAKES_OVER).read_text(encoding="utf-8")
    path = tmp_path / "three-attempts.yaml"
    path.write_text(text.replace("max_attempts: 30", "max_attempts: 3"), encoding="utf-8")

    trace = _trace(str(path))

    assert _asked(trace) == [(1, "fake-sonnet", 529)] * 3
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "budget_limited"


@pytest.mark.parametrize(("error", "switches"), [
    (ProviderError("http_status", "overloaded", status=529), True),
    (ProviderError("http_status", "unavailable", status=503), True),
    (ProviderError("http_status", "bad gateway", status=502), True),
    (ProviderError("idle_timeout", "no chunk for 30s"), True),
    (ProviderError("reset", "connection reset"), True),
    (ProviderError("truncated_stream", "no terminal event"), True),
    (ProviderError("http_status", "bad request", status=400), False),
    (ProviderError("http_status", "unauthorized", status=401), False),
    (ProviderError("http_status", "forbidden", status=403), False),
    (ProviderError("http_status", "not found", status=404), False),
    (ProviderError("http_status", "unprocessable", status=422), False),
    (ProviderError("http_status", "rate limited", status=429), False),
    (ProviderError("http_status", "tls", status=525), False),
    (ProviderError("malformed_frame", "not JSON"), False),
])
def test_only_a_failed_route_goes_to_the_backup(error: ProviderError, switches: bool) -> None:
    assert route_failure(error) is switches
