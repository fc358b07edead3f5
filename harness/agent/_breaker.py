"""A three-state circuit breaker with one leased half-open probe (seed 002 §19.1).

Seed 002 §19.1 keeps three mechanisms apart: a retry handles one request's
transient failure, a circuit breaker a downstream that keeps failing ("熔断解决下游
整体持续故障:先拒绝新请求,让服务和自身资源恢复"), the loop guard the agent's own
repetition. The breaker's states:

- **closed**: requests pass; consecutive infrastructure failures are counted
  (5xx, 529, resets, timeouts: :func:`is_infra_failure`); a client error or a
  rate limit says nothing about the provider's health and is not counted;
- **open**: after :attr:`BreakerConfig.failures_to_open` of them, no request
  goes out for :attr:`BreakerConfig.cooldown_seconds`;
- **half-open**: then exactly one probe may go; success closes the breaker,
  failure opens it for another cooldown.

The probe's slot is a lease (grok-build, as the seed tells it: "给探测名额设置租约,
过期后允许新请求回收"): a probe that is cancelled and never reports back would
otherwise hold the slot for ever and the breaker would never close. An expired
lease is reclaimed by the next caller; the seed accepts the rare overlap of an
old slow probe with a new one ("偶尔多一个探测") over a breaker stuck open.

Each change of state is reported to ``on_change`` (the loop writes it into the
session log), so a restarted agent does not forget an open breaker and hammer a
provider that is still down (:meth:`CircuitBreaker.restore`).

Example::

    breaker = CircuitBreaker(BreakerConfig(failures_to_open=2, cooldown_seconds=30), clock)
    lease = breaker.acquire()          # a ProbeLease while closed
    breaker.release(lease, error)      # count the failure
    breaker.wait_seconds()             # 30.0 once open
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from harness.agent._classify import ProviderError, is_infra_failure
from harness.ports import Clock

BreakerState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class BreakerConfig:
    """The breaker's thresholds (seconds are virtual). ``enabled=False``: every request passes."""

    enabled: bool = True
    # Seed 002 §19.1: "达到最小样本数且错误率超过阈值后进入 Open". One agent sends one
    # request at a time, so the sample is the run of consecutive failures.
    failures_to_open: int = 3
    # Long enough for a provider to recover; the per-request backoff (2-30 s) keeps
    # retrying inside it, the breaker stops that.
    cooldown_seconds: float = 60.0
    # "只允许少量探测": one probe at a time.
    half_open_probes: int = 1
    # A probe that has not reported back after this long no longer holds its slot.
    probe_lease_seconds: float = 120.0


@dataclass(frozen=True)
class ProbeLease:
    """Permission for one request; ``probe`` marks the half-open probe."""

    number: int
    probe: bool
    expires_at: float


class CircuitBreaker:
    """Closed, open and half-open, with leased probes; see the module docstring."""

    def __init__(self, config: BreakerConfig, clock: Clock, *,
                 on_change: Callable[[BreakerState, float | None], None] | None = None) -> None:
        self.config = config
        self._clock = clock
        self._on_change = on_change
        self._failures = 0
        self._open_until: float | None = None
        self._probes: dict[int, ProbeLease] = {}
        self._issued = 0

    def restore(self, open_until: float | None) -> None:
        """Resume an open breaker a previous incarnation recorded (its cooldown still runs)."""
        self._open_until = open_until

    @property
    def state(self) -> BreakerState:
        if self._open_until is None:
            return "closed"
        return "open" if self._clock.now() < self._open_until else "half_open"

    def wait_seconds(self) -> float:
        """How long until a request may go: the cooldown's rest, or a live probe's lease."""
        if not self.config.enabled:
            return 0.0
        now = self._clock.now()
        state = self.state
        if state == "open":
            assert self._open_until is not None
            return self._open_until - now
        if state == "half_open" and len(self._live_probes(now)) >= self.config.half_open_probes:
            return min(lease.expires_at for lease in self._live_probes(now)) - now
        return 0.0

    def acquire(self) -> ProbeLease | None:
        """A lease for one request, or ``None`` while the breaker lets nothing through."""
        if self.wait_seconds() > 0:
            return None
        now = self._clock.now()
        self._issued += 1
        lease = ProbeLease(self._issued, self.state == "half_open" and self.config.enabled,
                      now + self.config.probe_lease_seconds)
        if lease.probe:
            self._probes[lease.number] = lease
        return lease

    def release(self, lease: ProbeLease, error: ProviderError | None) -> None:
        """Report how the leased request ended; ``error=None`` is a success."""
        self._probes.pop(lease.number, None)
        if not self.config.enabled:
            return
        failed = error is not None and is_infra_failure(error)
        if not failed:
            self._failures = 0
            if self._open_until is not None:
                self._open_until = None
                self._probes.clear()
                self._changed("closed", None)
            return
        self._failures += 1
        if lease.probe or self._failures >= self.config.failures_to_open:
            self._open_until = self._clock.now() + self.config.cooldown_seconds
            self._changed("open", self._open_until)

    def _live_probes(self, now: float) -> list[ProbeLease]:
        return [lease for lease in self._probes.values() if lease.expires_at > now]

    def _changed(self, state: BreakerState, until: float | None) -> None:
        if self._on_change is not None:
            self._on_change(state, until)
