"""The job port and the cancel hook: background jobs and targeted cancellation (seed 002 §19.4).

Both are optional for an agent under test. The job port is how an agent starts
and watches work that outlives it: a job runner whose processes keep running
when the agent crashes ("活着不等于可恢复", seed 002 §19.4). A job is known by
more than its PID: :class:`JobIdentity` carries the runner's execution id and
the process start time, because an operating system reuses PIDs.

The cancel hook is a method an agent may offer, ``cancel(request) -> CancelAck``;
the harness calls it at a scenario's virtual time with an explicit target
(seed 002 §19.4 "取消必须明确目标"). An agent without it is judged ``unknown``.

Example::

    identity = port.start("build", {"target": "all"}, job_id="job-exec_1",
                          owner_session="run-7", owner_turn="turn_1", call_id="call_1")
    status = await port.wait(identity)
    chunk = port.read(identity, offset=0)      # chunk.lines, chunk.next_offset, chunk.lossy
    port.claim(identity)                        # the waiter has the result: no wake-up
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, get_args

from harness._errors import HarnessError

#: What a cancel names (seed 002 §19.4, the table "取消目标 / 典型行为").
CancelTarget = Literal["attempt", "tool_call", "turn", "job", "goal", "session"]
CANCEL_TARGETS: Final[tuple[CancelTarget, ...]] = get_args(CancelTarget)

#: How an agent answered a cancel: done now, done before (idempotent), nothing to
#: cancel, or a target it does not implement.
CancelStatus = Literal["cancelled", "already_cancelled", "not_found", "unsupported"]
CANCEL_STATUSES: Final[tuple[CancelStatus, ...]] = get_args(CancelStatus)

#: The session that owns the world's neighbour job: another session's shared task, which
#: no cancel of this session may touch (seed 002 §19.4, session row). The job runner
#: starts it under this owner and the cancel checks leave it out by this owner.
NEIGHBOUR_SESSION: Final = "other-session"

#: Where a job stands in the runner (a vanished process left no exit code to read).
JobState = Literal["running", "exited", "killed", "vanished"]

#: The runner's signals; TERM first, KILL after a grace period (seed 002 §19.4, stopping row).
Signal = Literal["TERM", "KILL"]

#: The marker a wake-up message carries, followed by the job's execution id: how a
#: job's completion that no waiter received reaches the model (seed 002 §19.4, grok).
JOB_COMPLETED_MARKER: Final = "JOB_COMPLETED"


class JobRunnerUnavailable(HarnessError):
    """The runner cannot be asked about a job now (the "外部状态无法查询" row of §19.4)."""


@dataclass(frozen=True)
class JobIdentity:
    """A process as the runner knows it: execution id, PID and start time together.

    >>> JobIdentity("exec-1", 4100, 2.0) == JobIdentity("exec-1", 4100, 2.0)
    True
    """

    execution_id: str
    pid: int
    started_at: float


@dataclass(frozen=True)
class JobStatus:
    """A job's state in the runner: ``running``, ``exited``, ``killed`` or ``vanished``.

    ``exit_code`` is ``None`` unless the runner saw the process exit: a vanished
    process has none, and none may be invented for it.
    """

    state: JobState
    exit_code: int | None = None

    @property
    def alive(self) -> bool:
        return self.state == "running"


@dataclass(frozen=True)
class OutputChunk:
    """Output lines from an offset on; ``lossy`` when the retained window slid past it."""

    lines: tuple[str, ...]
    next_offset: int
    lossy: bool = False
    dropped: int = 0


@dataclass(frozen=True)
class Wakeup:
    """A completion no waiter claimed, kept by the runner until acknowledged."""

    execution_id: str
    job_id: str
    owner_session: str
    exit_code: int | None


class JobPort(Protocol):
    """A job runner whose jobs survive the agent (see the module docstring)."""

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools the runner runs as jobs."""
        ...

    def start(self, tool: str, arguments: Mapping[str, Any], *, job_id: str,
              owner_session: str, owner_turn: str, call_id: str,
              env: Mapping[str, str] | None = None) -> JobIdentity:
        """Start a job for the model's call ``call_id``; ``job_id`` is the agent's own id.

        ``env`` is the environment handed to the job's process, as ``subprocess`` takes it
        (``None``: the runner's clean one). Seed 000 §5: a background job gets a cleaned
        environment, never the agent's credentials (env:children)."""
        ...

    def find(self, job_id: str) -> JobIdentity | None:
        """The job started under ``job_id``, or None; raises :class:`JobRunnerUnavailable`."""
        ...

    def process(self, pid: int) -> JobIdentity | None:
        """The process that holds ``pid`` now (maybe another one than before)."""
        ...

    def status(self, identity: JobIdentity) -> JobStatus: ...

    def read(self, identity: JobIdentity, offset: int) -> OutputChunk: ...

    def signal(self, identity: JobIdentity, signal: Signal) -> None: ...

    async def wait(self, identity: JobIdentity, timeout: float | None = None) -> JobStatus: ...

    def claim(self, identity: JobIdentity) -> None:
        """The waiter received the result: the runner keeps no wake-up for it."""
        ...

    def wakeups(self, owner_session: str) -> tuple[Wakeup, ...]: ...

    def acknowledge(self, execution_id: str) -> None: ...


@dataclass(frozen=True)
class CancelRequest:
    """One cancel, with its target spelled out. ``ref`` names the call, job or turn.

    ``ref`` is ``None`` for the current attempt or turn and for the session.
    ``session`` is the owner session the request speaks for: a job of another
    session is never this request's to cancel.
    """

    request_id: str
    target: CancelTarget
    session: str
    ref: str | None = None


@dataclass(frozen=True)
class CancelAck:
    """What the agent did with a :class:`CancelRequest`."""

    status: CancelStatus
    detail: str = ""


class CancelHook(Protocol):
    """An agent that can be cancelled by target."""

    def cancel(self, request: CancelRequest) -> CancelAck: ...
