"""Trace records of background jobs and cancels: what the world's job runner saw.

Written by the runner from :class:`fakes.FakeJobRunner` and the cancel schedule,
read by :mod:`harness.checks._jobs` (seed 002 §19.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.ports import CancelStatus, CancelTarget, JobState, Signal

#: How a cancel was answered: the agent's :data:`~harness.ports.CancelStatus`, or what
#: the harness saw instead: no hook to call (``no_hook``), a hook that raised or answered
#: something else (``error``), an incarnation that died answering (``crashed``).
CancelAnswer = Literal[CancelStatus, "no_hook", "error", "crashed"]


@dataclass(frozen=True)
class SignalRecord:
    """A signal the runner received for a job, from which incarnation, when."""

    signal: Signal
    at: float
    incarnation: int


@dataclass(frozen=True)
class ReadRecord:
    """One output read: from which offset, up to where, whether output was lost."""

    offset: int
    next_offset: int
    lossy: bool
    at: float
    incarnation: int


@dataclass(frozen=True)
class JobRecord:
    """One job of the runner, as it really went.

    ``state``: ``running`` (still, at the end of the case), ``exited``, ``killed``
    or ``vanished``; ``exit_code`` is ``None`` unless the runner saw an exit.
    ``claimed_by`` is the incarnation whose waiter took the result (no wake-up);
    ``acknowledged_by`` the one that took the wake-up instead.
    """

    execution_id: str
    tool: str
    job_id: str
    owner_session: str
    owner_turn: str
    call_id: str
    fingerprint: str
    started_at: float
    incarnation: int
    state: JobState
    exit_code: int | None
    ended_at: float | None
    lines: int
    signals: tuple[SignalRecord, ...] = ()
    reads: tuple[ReadRecord, ...] = ()
    claimed_by: int | None = None
    acknowledged_by: int | None = None
    unqueryable_after_crash: bool = False


@dataclass(frozen=True)
class CancelRecord:
    """One cancel request the harness issued, and what the agent answered.

    ``ack`` is the agent's :data:`harness.ports.CancelStatus`, or what the harness saw
    instead (:data:`CancelAnswer`); ``detail`` the agent's words or the harness's.
    """

    index: int
    repeat: int
    at: float
    target: CancelTarget
    ref: str | None
    incarnation: int | None
    ack: CancelAnswer
    detail: str = ""
