"""Typed views of the session log's records that recovery reads back, one class per kind.

A record's ``body`` is a ``Mapping[str, Any]``: a misspelt key read from it is a
``KeyError`` at restore, the worst time to find it. Each class here names the
fields of one kind (the table in :mod:`._session_log`) so mypy checks every read.
The views only read: the line format, and so every digest, stays as written.
Each ``from_body`` converts a field exactly as the readers did before it, and
leaves raw what they compared raw, so a view decides nothing a reader did not.

Example::

    SessionHeader.from_body({"epoch": 2, "deadline": 600.0, ...}).deadline   # 600.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.ports import StopState


@dataclass(frozen=True)
class SessionHeader:
    """The ``session`` record: the session's epoch and its absolute virtual deadline, and
    whether the session is collected as training data (its task says so only then)."""

    epoch: int
    deadline: float
    training_data: bool = False
    # How long a background job may run (seed 002 §19.2, BackgroundBudget(maxRuntime)),
    # read at recovery, before the task is given again; None: not capped.
    max_job_seconds: float | None = None
    # How many background jobs the run may start (BackgroundBudget(maxJobs)); None: any.
    max_jobs: int | None = None
    # Lines of output a background job may write (BackgroundBudget(maxOutput)); None: any.
    max_job_output_lines: int | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> SessionHeader:
        task = body.get("task")
        task = task if isinstance(task, Mapping) else {}
        training = task.get("trainingData") is True
        runtime, jobs = task.get("maxJobSeconds"), task.get("maxJobs")
        output = task.get("maxJobOutputLines")
        return cls(int(body["epoch"]), float(body["deadline"]), training,
                   float(runtime) if isinstance(runtime, int | float) else None,
                   jobs if isinstance(jobs, int) else None,
                   output if isinstance(output, int) else None)


@dataclass(frozen=True)
class GuardRecord:
    """A ``guard`` record: which counter fired, ``remind`` or ``stop``, and why."""

    counter: str
    action: str
    reason: str

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> GuardRecord:
        return cls(body["counter"], body["action"], str(body["reason"]))


@dataclass(frozen=True)
class TurnEndRecord:
    """A ``turn_end`` record; ``reason`` is ``None`` when the line has none."""

    reason: str | None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> TurnEndRecord:
        return cls(body.get("reason"))


@dataclass(frozen=True)
class StopRecord:
    """The ``stop`` record: how the run ended, as the outcome reports it again."""

    stop_state: StopState
    reason: str
    infra_failure: bool

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> StopRecord:
        return cls(body["stopState"], str(body["reason"]), bool(body["infraFailure"]))


@dataclass(frozen=True)
class BreakerRecord:
    """A ``breaker`` record: the state the breaker entered and, when open, until when."""

    state: str
    until: float | None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> BreakerRecord:
        until = body["until"]
        return cls(body["state"], None if until is None else float(until))


@dataclass(frozen=True)
class VerificationRecord:
    """A ``verification`` record: one verifier round's verdict on a goal revision."""

    revision: int
    round: int
    outcome: str
    fingerprint: str

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> VerificationRecord:
        return cls(body["revision"], body["round"], body["outcome"], body["fingerprint"])


@dataclass(frozen=True)
class RecoveryRecord:
    """A ``recovery`` record at a safe boundary: what comes next, under which goal and epoch."""

    boundary: str
    next_action: str
    goal: Mapping[str, Any]
    epoch: int

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> RecoveryRecord:
        return cls(body["boundary"], body["nextAction"], body["goal"], body["epoch"])


@dataclass(frozen=True)
class GoalRecord:
    """A ``goal`` record: the goal as this session last knew it, why it was written, the epoch."""

    goal: Mapping[str, Any]
    source: str
    epoch: int

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> GoalRecord:
        return cls(body["goal"], body["source"], body["epoch"])


@dataclass(frozen=True)
class CompactionStartRecord:
    """A ``compaction_start`` record: a compaction begun, and why."""

    compaction_id: str
    reason: str

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> CompactionStartRecord:
        return cls(str(body["compactionId"]), body["reason"])


@dataclass(frozen=True)
class CompactionEndRecord:
    """A ``compaction`` or ``compaction_discarded`` record: the compaction it ends."""

    compaction_id: str

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> CompactionEndRecord:
        return cls(str(body["compactionId"]))


def cleared_of(body: Mapping[str, Any]) -> tuple[int, ...]:
    """The session seqs a committed ``compaction`` record replaced."""
    return tuple(int(seq) for seq in body["cleared"])
