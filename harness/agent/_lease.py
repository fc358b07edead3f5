"""The execution lease: whose authority an action runs under (seed 002 §19.3).

"保存了目标状态,不等于允许继续执行": a restarted agent rebuilds its goal from the
trusted log, but takes execution authority anew, with an epoch one higher than
the last one ("每次恢复都递增的执行授权版本号 executionEpoch"). Work that began
under an older epoch — a queued auto-continue, a background watcher, a late
``finally:`` of the dead incarnation, a compaction result — is void: it calls
:meth:`ExecutionLease.guard` with the epoch it started under before it writes.

With a goal port the epoch comes from the world's lease record (the one every
incarnation must take); without one, the incarnation number stands in for it,
which the runner raises on every restart, so the same check applies.

Example::

    started = agent.lease.epoch          # remember it when the work starts
    ...
    agent.lease.guard(started)           # StaleLeaseError if a recovery came between
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness._errors import HarnessError

LeaseSource = Literal["goal_service", "incarnation"]


class StaleLeaseError(HarnessError):
    """Work begun under lease epoch ``started`` tried to act under epoch ``current``."""

    def __init__(self, started: int, current: int, what: str) -> None:
        self.started = started
        self.current = current
        self.what = what
        super().__init__(
            f"{what} began under execution epoch {started}, but the lease is now at epoch "
            f"{current}: a recovery took authority since, so it is dropped (seed 002 §19.3)")


@dataclass(frozen=True)
class ExecutionLease:
    """The lease this incarnation holds: its epoch, its holder, where the epoch came from."""

    epoch: int
    holder: int
    source: LeaseSource = "incarnation"

    def guard(self, started_epoch: int, what: str = "work") -> None:
        """Refuse work that began under another epoch.

        >>> ExecutionLease(2, 2).guard(2)
        >>> ExecutionLease(2, 2).guard(1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        harness.agent._lease.StaleLeaseError: work began under execution epoch 1, but the ...
        """
        if started_epoch != self.epoch:
            raise StaleLeaseError(started_epoch, self.epoch, what)
