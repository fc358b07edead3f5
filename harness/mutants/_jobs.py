"""Broken background-job and cancel handling: the bugs seed 002 §19.4 warns about.

Each is the reference agent with one job or cancel rule broken, as real agents
break it; the catalogue (:mod:`._catalogue`) names the cases that kill them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from harness.agent import CancelRouter, JobEntry, JobSupervisor, ReferenceAgent
from harness.mutants._build import reference
from harness.ports import (
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    CancelAck,
    CancelRequest,
    JobStatus,
    RecoveryReport,
    Task,
    ToolContext,
)


class _RerunsAfterRestart(JobSupervisor):
    """As an agent that keeps its jobs in memory: after a restart it simply runs them again."""

    async def reconcile(self, entry: JobEntry | None, call: ToolContext) -> JobEntry:
        if entry is not None and entry.state in ("completed", "cancelled", "orphaned"):
            return await super().reconcile(entry, call)
        await self.start_and_wait(call.invocation.tool, call.invocation.arguments, call)
        found = self.book.for_call(call.invocation.turn_id, call.invocation.call_id)
        assert found is not None
        return found


class _ExitCodeForOrphans(JobSupervisor):
    """As ``exit_code = proc.returncode or 0``: a vanished process reads as a clean exit."""

    def settle(self, entry: JobEntry, status: JobStatus, *, claim: bool) -> JobEntry:
        if status.state == "vanished":
            status = JobStatus("exited", 0)
        return super().settle(entry, status, claim=claim)


class _CancelledWaiterClaims(JobSupervisor):
    """A waiter cancelled as its job completes still claims the completion, then drops it."""

    async def stop(self, entry: JobEntry) -> JobEntry:
        ended = await super().stop(entry)
        if ended.state == "completed" and ended.identity is not None:
            self.port.claim(ended.identity)
        return ended


class _NeverClaims(JobSupervisor):
    """Reads the result but never tells the runner: the wake-up comes on top of the reply."""

    def settle(self, entry: JobEntry, status: JobStatus, *, claim: bool) -> JobEntry:
        del claim  # the bug: whatever the waiter got, the runner is never told
        return super().settle(entry, status, claim=False)


class _WaitsForStopping(JobSupervisor):
    """After a restart, reads a ``stopping`` record as a running job and waits for it:
    the cancel accepted before the crash is never finished with TERM→KILL."""

    async def reconcile(self, entry: JobEntry | None, call: ToolContext) -> JobEntry:
        if entry is not None and entry.state == "stopping":
            entry = replace(entry, state="running", cancelled=False)
        return await super().reconcile(entry, call)


class _JobsGetTheWholeEnviron(JobSupervisor):
    """Starts each job's process with a copy of its own ``os.environ`` (as
    ``subprocess.Popen`` does unless told otherwise): the provider's key goes with it."""

    async def start_and_wait(self, tool: str, arguments: Mapping[str, Any],
                             context: ToolContext) -> dict[str, Any]:
        return await super().start_and_wait(tool, arguments,
                                            replace(context, env=dict(os.environ)))


class _RuntimeNotCapped(JobSupervisor):
    """Records the run's background budget but never reads it: a job is waited out however
    long it runs."""

    def runtime_deadline(self, entry: JobEntry) -> float | None:
        del entry  # the bug: no job ever has a runtime deadline
        return None


class _RuntimeFromRestart(JobSupervisor):
    """Times a job's runtime budget from when this process began to wait for it (as an
    ``asyncio.wait_for`` around the waiter does), not from the job's recorded start: a
    restart that re-attaches grants the job its whole budget anew."""

    def runtime_deadline(self, entry: JobEntry) -> float | None:
        if self.max_runtime is None or entry.identity is None:
            return None
        return self.clock.now() + self.max_runtime


class _JobsNotCapped(JobSupervisor):
    """Records the run's cap on jobs but never reads it: every job the model asks for starts."""

    def cap_reached(self, job_id: str) -> bool:
        del job_id  # the bug: the cap is never consulted
        return False


class _JobsCountedPerProcess(JobSupervisor):
    """Counts the jobs it started in memory, so each restart starts a fresh cap."""

    def jobs_started(self, job_id: str) -> int:
        mine: set[str] = self.__dict__.setdefault("_started_here", set())
        mine.add(job_id)
        return len(mine - {job_id})


class _OutputNotCapped(JobSupervisor):
    """Records the run's output budget for jobs but never reads it: a job writes on to its end."""

    def output_spent(self, entry: JobEntry) -> bool:
        del entry  # the bug: the output budget is never consulted
        return False


class _OutputCountedPerProcess(JobSupervisor):
    """Counts a job's output from the offset this process first read it at (the lines it
    read itself), not from the job's first line: a restart that re-attaches grants the job
    its whole output budget anew."""

    def output_spent(self, entry: JobEntry) -> bool:
        seen: dict[str, int] = self.__dict__.setdefault("_first_offset", {})
        first = seen.setdefault(entry.job_id, entry.output_offset)
        return self.max_output_lines is not None and \
            entry.output_offset - first > self.max_output_lines


class _ForgetfulRouter(CancelRouter):
    """Acts on every cancel it receives, the same request again included."""

    def cancel(self, request: CancelRequest) -> CancelAck:
        ack = self._dispatch_again(request)
        self.answered[request.request_id] = ack
        return ack

    def _dispatch_again(self, request: CancelRequest) -> CancelAck:
        handler = self.handlers.get(request.target)
        return handler(request) if handler is not None else CancelAck("unsupported")


def reruns_jobs_after_restart() -> AgentFactory:
    return reference(job_supervisor=_RerunsAfterRestart)


def jobs_get_the_whole_environ() -> AgentFactory:
    return reference(job_supervisor=_JobsGetTheWholeEnviron)


def job_runtime_not_capped() -> AgentFactory:
    return reference(job_supervisor=_RuntimeNotCapped)


def job_runtime_from_restart() -> AgentFactory:
    return reference(job_supervisor=_RuntimeFromRestart)


def jobs_not_capped() -> AgentFactory:
    return reference(job_supervisor=_JobsNotCapped)


def jobs_counted_per_process() -> AgentFactory:
    return reference(job_supervisor=_JobsCountedPerProcess)


def job_output_not_capped() -> AgentFactory:
    return reference(job_supervisor=_OutputNotCapped)


def job_output_counted_per_process() -> AgentFactory:
    return reference(job_supervisor=_OutputCountedPerProcess)


def invents_exit_codes() -> AgentFactory:
    return reference(job_supervisor=_ExitCodeForOrphans)


def cancelled_waiter_claims() -> AgentFactory:
    return reference(job_supervisor=_CancelledWaiterClaims)


def never_claims() -> AgentFactory:
    return reference(job_supervisor=_NeverClaims)


def waits_for_stopping_jobs() -> AgentFactory:
    return reference(job_supervisor=_WaitsForStopping)


def cancel_not_idempotent(ports: AgentPorts) -> Agent:
    agent = ReferenceAgent(ports)
    router = _ForgetfulRouter()
    router.handlers.update(agent.cancels.handlers)
    agent.cancels = router
    return agent




def goal_cancel_as_turn_cancel(ports: AgentPorts) -> Agent:
    """A goal cancel handled like a turn cancel: the run stops, the goal stays active."""
    agent = ReferenceAgent(ports)
    agent.cancels.register("goal", agent.cancels.handlers["turn"])
    return agent


class _GoalCancelLeavesRunArmed:
    """Marks the goal cancelled and cancels its running call, but never notes the run's
    stop: the turn goes on, and a late completion is taken as a wake-up for the goal."""

    def __init__(self, ports: AgentPorts) -> None:
        self._agent = ReferenceAgent(ports)
        self._ports = ports
        self._opened = False
        self._cancel_call = self._agent.cancels.handlers["tool_call"]
        self._agent.cancels.register("goal", self._cancel_goal)

    async def recover(self) -> RecoveryReport:
        report = await self._agent.recover()
        self._opened = True
        return report

    async def run(self, task: Task) -> AgentOutcome:
        if not self._opened:
            await self.recover()
        return await self._agent.run(task)

    def cancel(self, request: CancelRequest) -> CancelAck:
        return self._agent.cancel(request)

    def _cancel_goal(self, request: CancelRequest) -> CancelAck:
        goals, agent = self._ports.goals, self._agent
        if goals is not None:
            goal = goals.read()
            goals.set_status(agent.lease.epoch, goal.revision, "cancelled", "by request")
        log = agent.log if self._opened else None
        answered = {r.reply.call_id for r in log.replies()} if log is not None else set()
        calls = [c.call_id for a in log.assistants() for c in a.calls] if log is not None else []
        for call_id in (c for c in calls if c not in answered):
            self._cancel_call(replace(request, target="tool_call", ref=call_id))
        return CancelAck("cancelled", "the goal record says cancelled")


def goal_cancel_leaves_run_armed(ports: AgentPorts) -> Agent:
    return _GoalCancelLeavesRunArmed(ports)
