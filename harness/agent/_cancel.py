"""Cancellation by target (seed 002 §19.4, "取消必须明确目标").

``cancel()`` says what it cancels; it is never guessed from where it was called:

==========  ===============================================================
attempt     only the provider request in flight; the turn retries it
tool_call   that call: its task and process tree stop, its reply is ``cancelled``
turn        calls not started yet never start, running ones are cancelled, the
            request in flight is dropped; the run stops ``cancelled``
job         one job, by job id *and* owner session: never another session's
goal        with a goal port: the goal is set ``cancelled`` at the goal service (a
            terminal status), the auto-continue is disarmed (the run stops
            ``cancelled``, no turn or verifier round follows, a restart too), and
            by the reference's policy every job of the goal's run is stopped; a
            late completion is recorded, never woken. Without a goal port the
            answer is ``unsupported``
session     the turn's work and every job this session owns; never a job of
            another session, which the runner shares
==========  ===============================================================

Every request is idempotent: the same request id, or a target already
cancelled, is answered ``already_cancelled`` and changes nothing.

Example::

    router = CancelRouter()
    router.register("tool_call", lambda request: CancelAck("cancelled"))
    request = CancelRequest("c-1", "tool_call", "run-7", "call_1")
    router.cancel(request).status      # 'cancelled'
    router.cancel(request).status      # 'already_cancelled'

Any target's handler can be replaced the same way, the goal's included::

    agent.cancels.register("goal", my_goal_cancel)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from harness._errors import DiskError
from harness.agent._goal import GoalKeeper
from harness.agent._jobs import JobSupervisor
from harness.agent._journal import DurableLineFile
from harness.agent._stream_client import StreamClient
from harness.agent._tool_runner import ToolRunner
from harness.ports import CancelAck, CancelRequest, CancelTarget, Disk

CancelHandler = Callable[[CancelRequest], CancelAck]


@dataclass
class CancelRouter:
    """Routes a :class:`CancelRequest` to its target's handler, at most once."""

    handlers: dict[CancelTarget, CancelHandler] = field(default_factory=dict)
    answered: dict[str, CancelAck] = field(default_factory=dict)
    cancelled: set[tuple[str, str | None]] = field(default_factory=set)

    def register(self, target: CancelTarget, handler: CancelHandler) -> None:
        """Handle ``target`` with ``handler`` (the goal module registers ``goal``)."""
        self.handlers[target] = handler

    def cancel(self, request: CancelRequest) -> CancelAck:
        """The answer to ``request``; a repeated one acts no more."""
        earlier = self.answered.get(request.request_id)
        if earlier is not None:
            return CancelAck("already_cancelled" if earlier.status in ("cancelled",
                             "already_cancelled") else earlier.status,
                             f"request {request.request_id} was answered before")
        ack = self._dispatch(request)
        self.answered[request.request_id] = ack
        if ack.status == "cancelled":
            self.cancelled.add((request.target, request.ref))
        return ack

    def _dispatch(self, request: CancelRequest) -> CancelAck:
        if (request.target, request.ref) in self.cancelled:
            return CancelAck("already_cancelled", f"{request.target} {request.ref or ''} "
                             "was cancelled before".replace("  ", " "))
        handler = self.handlers.get(request.target)
        if handler is None:
            return CancelAck("unsupported", f"this agent has no {request.target} target "
                             "(register a handler for it)")
        return handler(request)


CANCELS_FILE = "cancels.jsonl"
GOAL_CANCELLED = "the goal was cancelled by request (seed 002 §19.4)"


class CancelLog:
    """Turn, goal and session cancels, durable before they act: a restart still honours them."""

    def __init__(self, disk: Disk, path: str, *, root: str = "/") -> None:
        self.file = DurableLineFile(disk, path, root=root)
        self.requests: list[CancelRequest] = []

    @classmethod
    def open(cls, disk: Disk, path: str, *, root: str = "/") -> CancelLog:
        log = cls(disk, path, root=root)
        log.requests = log.file.load(lambda fields: CancelRequest(**fields),
                                     expected="a cancel record")
        return log

    def record(self, request: CancelRequest) -> None:
        line = json.dumps(asdict(request), separators=(",", ":")).encode() + b"\n"
        self.file.append(line)
        self.requests.append(request)


@dataclass
class RunHandles:
    """What a cancel can reach in the running reference agent; the loop fills it in.

    ``stop_reason`` is set by a turn, goal or session cancel: the loop then stops
    ``cancelled`` at its next boundary. ``goal_cancelled`` is the reason of a goal
    cancel, applied at the goal service now if ``keeper`` holds the lease, else by
    :meth:`GoalKeeper.start` once it does.
    """

    session: str
    client: StreamClient | None = None
    runner: ToolRunner | None = None
    jobs: JobSupervisor | None = None
    run_task: asyncio.Task[Any] | None = None
    stop_reason: str | None = None
    stops_owned_jobs: bool = False  # a session or goal cancel: every job of ours stops
    keeper: GoalKeeper | None = None
    goal_cancelled: str | None = None
    log: CancelLog | None = None
    unrecorded: list[CancelRequest] = field(default_factory=list)

    def restore(self, log: CancelLog, router: CancelRouter) -> None:
        """After a restart: a turn, goal or session cancel accepted before the crash still stands,
        and the same request sent again is answered ``already_cancelled``. One accepted
        before the log was open (a cancel that reached the process as it started) is
        written now."""
        self.log = log
        recorded = {request.request_id for request in log.requests}
        for request in self.unrecorded:
            if request.request_id not in recorded:
                with contextlib.suppress(DiskError):
                    log.record(request)
        self.unrecorded.clear()
        for request in log.requests:
            _note_stop(self, request.target)
            if request.target == "goal":
                self.goal_cancelled = GOAL_CANCELLED
            router.answered[request.request_id] = CancelAck("cancelled", "before a restart")


def reference_router(handles: RunHandles, *, goals: bool) -> CancelRouter:
    """The reference agent's router: every target of the table (``goal`` with a goal port)."""
    router = CancelRouter()
    router.register("attempt", lambda _request: _cancel_attempt(handles))
    router.register("tool_call", lambda request: _cancel_call(handles, request.ref))
    router.register("job", lambda request: _cancel_job(handles, request))
    router.register("turn", lambda request: _stop_run(handles, request))
    router.register("session", lambda request: _stop_run(handles, request))
    if goals:
        router.register("goal", lambda request: _cancel_goal(handles, request))
    return router


def _cancel_attempt(handles: RunHandles) -> CancelAck:
    if handles.client is not None and handles.client.cancel_attempt():
        return CancelAck("cancelled", "the request in flight was dropped; the turn retries it")
    return CancelAck("not_found", "no provider request is in flight")


def _cancel_call(handles: RunHandles, call_id: str | None) -> CancelAck:
    if call_id is not None and handles.runner is not None and handles.runner.cancel_call(call_id):
        return CancelAck("cancelled", f"call {call_id} cancelled; its reply says so")
    return CancelAck("not_found", f"no call {call_id} is running")


def _cancel_job(handles: RunHandles, request: CancelRequest) -> CancelAck:
    """By job id *and* owner session: a job of another session is never ours to stop."""
    jobs = handles.jobs
    entry = jobs.book.entries.get(request.ref or "") if jobs is not None else None
    if jobs is None or entry is None or entry.owner_session != request.session:
        return CancelAck("not_found", f"no job {request.ref} of session {request.session}")
    waiter = next((call for call, job in jobs.waiting.items() if job == entry.job_id), None)
    if waiter is None:
        return CancelAck("not_found", f"job {entry.job_id} is {entry.state}, not running")
    return _cancel_call(handles, waiter)


def _stop_run(handles: RunHandles, request: CancelRequest) -> CancelAck:
    """Turn and session: nothing new starts, running calls are cancelled, the run stops."""
    target = request.target
    if handles.log is None:
        handles.unrecorded.append(request)  # written once the state is open
    else:
        with contextlib.suppress(DiskError):  # unrecorded, it still acts in this process
            handles.log.record(request)
    _note_stop(handles, target)
    runner = handles.runner
    live = list(runner.live) if runner is not None else []
    if runner is not None:
        runner.refusing = f"not started: the {target} was cancelled"
        for call_id in live:
            runner.cancel_call(call_id)
    if not live and handles.run_task is not None:
        handles.run_task.cancel()  # a request in flight, or between two steps
    return CancelAck("cancelled", f"the {target} was cancelled by request")


def _cancel_goal(handles: RunHandles, request: CancelRequest) -> CancelAck:
    """Goal: the goal record says ``cancelled``, the auto-continue is disarmed, the goal's
    jobs stop (the reference's policy: a goal's run owns them all); idempotent."""
    handles.goal_cancelled = GOAL_CANCELLED
    ack = _stop_run(handles, request)  # durable first: a restart still honours it
    keeper = handles.keeper
    if keeper is not None and keeper.lease.epoch > 0:
        keeper.cancel(GOAL_CANCELLED)  # else start() applies it once it holds the lease
    return ack


def _note_stop(handles: RunHandles, target: str) -> None:
    handles.stop_reason = handles.stop_reason or f"the {target} was cancelled by request"
    handles.stops_owned_jobs = handles.stops_owned_jobs or target in ("session", "goal")
    if handles.jobs is not None:
        handles.jobs.owner_cancelled = True
