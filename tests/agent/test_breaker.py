"""The circuit breaker (seed 002 §19.1): closed, open, half-open with one leased probe."""

from __future__ import annotations

from fakes import VirtualClock
from harness.agent import BreakerConfig
from harness.agent._breaker import CircuitBreaker
from harness.agent._classify import ProviderError

DOWN = ProviderError("http_status", "overloaded", status=503)
BAD_REQUEST = ProviderError("http_status", "bad", status=400)
CONFIG = BreakerConfig(failures_to_open=2, cooldown_seconds=30.0, probe_lease_seconds=10.0)


def _fail(breaker: CircuitBreaker, error: ProviderError | None = DOWN) -> None:
    lease = breaker.acquire()
    assert lease is not None
    breaker.release(lease, error)


def _half_open(clock: VirtualClock, **kwargs: object) -> CircuitBreaker:
    breaker = CircuitBreaker(CONFIG, clock, **kwargs)  # type: ignore[arg-type]
    _fail(breaker)
    _fail(breaker)
    clock.advance(30.0)
    return breaker


def test_consecutive_infra_failures_open_it_for_the_cooldown() -> None:
    clock = VirtualClock()
    breaker = CircuitBreaker(CONFIG, clock)
    _fail(breaker)
    assert breaker.state == "closed"
    _fail(breaker)
    assert breaker.state == "open"
    assert breaker.acquire() is None
    assert breaker.wait_seconds() == 30.0


def test_a_client_error_says_nothing_about_the_provider() -> None:
    breaker = CircuitBreaker(CONFIG, VirtualClock())
    for _ in range(5):
        _fail(breaker, BAD_REQUEST)
    assert breaker.state == "closed"


def test_half_open_lets_exactly_one_probe_through() -> None:
    breaker = _half_open(VirtualClock())
    assert breaker.state == "half_open"
    probe = breaker.acquire()
    assert probe is not None
    assert probe.probe
    assert breaker.acquire() is None  # a second caller waits for the probe
    assert breaker.wait_seconds() == 10.0


def test_a_failed_probe_opens_again_and_a_good_one_closes() -> None:
    clock = VirtualClock()
    changes: list[tuple[str, float | None]] = []
    breaker = _half_open(clock, on_change=lambda s, u: changes.append((s, u)))
    _fail(breaker)
    assert breaker.state == "open"
    clock.advance(30.0)
    _fail(breaker, None)
    assert breaker.state == "closed"
    assert changes == [("open", 30.0), ("open", 60.0), ("closed", None)]


def test_an_abandoned_probe_lease_expires_and_is_reclaimed() -> None:
    # grok-build, as seed 002 §19.1 tells it: a cancelled probe must not jam the breaker.
    clock = VirtualClock()
    breaker = _half_open(clock)
    assert breaker.acquire() is not None  # this probe is cancelled and never reports
    clock.advance(10.0)
    reclaimed = breaker.acquire()
    assert reclaimed is not None
    assert reclaimed.probe


def test_a_restored_breaker_keeps_its_cooldown() -> None:
    clock = VirtualClock()
    breaker = CircuitBreaker(CONFIG, clock)
    breaker.restore(45.0)
    assert breaker.state == "open"
    assert breaker.wait_seconds() == 45.0


def test_disabled_it_lets_everything_through() -> None:
    breaker = CircuitBreaker(BreakerConfig(enabled=False), VirtualClock())
    for _ in range(10):
        _fail(breaker)
    assert breaker.wait_seconds() == 0.0
    assert breaker.acquire() is not None
