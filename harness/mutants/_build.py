"""Building blocks of the mutants: the reference agent, bent only through public names.

A mutant is the reference agent with one realistic bug, made by configuring it,
wrapping its ports (the HTTP client, the tools, the disk) or rewriting what its
``run()`` returns — never by reaching into private modules, so the catalogue
survives refactors of the core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import httpx

from harness.agent import (
    BreakerConfig,
    BudgetPolicy,
    CompactionConfig,
    Discipline,
    GuardLimits,
    JobSupervisor,
    ReferenceAgent,
    StreamConfig,
)
from harness.ports import (
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    AppendFile,
    ClosesOnExit,
    CompletionProof,
    Disk,
    Goal,
    GoalAction,
    GoalAnswer,
    GoalPort,
    GoalStatus,
    Lease,
    PassThroughTool,
    RecoveryReport,
    Task,
    Tool,
    Verification,
)


def reference(*, config: StreamConfig | None = None, limits: GuardLimits | None = None,
              compaction: CompactionConfig | None = None, breaker: BreakerConfig | None = None,
              budget_policy: BudgetPolicy | None = None,
              job_supervisor: type[JobSupervisor] = JobSupervisor,
              discipline: Discipline | None = None) -> AgentFactory:
    """The reference agent with these settings (a bad setting is a bug too), and its
    background jobs run by ``job_supervisor``."""

    def build(ports: AgentPorts) -> Agent:
        return ReferenceAgent(ports, config=config, limits=limits, compaction=compaction,
                              breaker=breaker, budget_policy=budget_policy,
                              job_supervisor=job_supervisor,
                              discipline=discipline)

    return build


def with_ports(inner: AgentFactory, change: Callable[[AgentPorts], AgentPorts]) -> AgentFactory:
    """``inner`` built over the ports ``change`` makes of the runner's."""

    def build(ports: AgentPorts) -> Agent:
        return inner(change(ports))

    return build


def with_tools(inner: AgentFactory, wrap: Callable[[Tool], Tool]) -> AgentFactory:
    """``inner`` whose every tool is ``wrap(tool)``."""
    return with_ports(inner, lambda ports: replace(
        ports, tools={name: wrap(tool) for name, tool in ports.tools.items()}))


ResponseHook = Callable[[httpx.Response], Awaitable[httpx.Response]]


def with_responses(inner: AgentFactory, hook: ResponseHook) -> AgentFactory:
    """``inner`` whose HTTP client hands every response through ``hook`` first."""

    def change(ports: AgentPorts) -> AgentPorts:
        transport = _HookedTransport(ports.http, hook)
        http = httpx.AsyncClient(transport=transport, base_url=ports.http.base_url)
        return replace(ports, http=http)

    return with_ports(inner, change)


RequestHook = Callable[[httpx.Request, AgentPorts], httpx.Request]


def with_requests(inner: AgentFactory, hook: RequestHook) -> AgentFactory:
    """``inner`` whose HTTP client sends ``hook(request, ports)`` instead of each request."""

    def change(ports: AgentPorts) -> AgentPorts:
        transport = _RewritingTransport(ports, hook)
        http = httpx.AsyncClient(transport=transport, base_url=ports.http.base_url)
        return replace(ports, http=http)

    return with_ports(inner, change)


class _RewritingTransport(httpx.AsyncBaseTransport):
    def __init__(self, ports: AgentPorts, hook: RequestHook) -> None:
        self._ports = ports
        self._hook = hook

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return await self._ports.http.send(self._hook(request, self._ports), stream=True)


class _HookedTransport(httpx.AsyncBaseTransport):
    def __init__(self, client: httpx.AsyncClient, hook: ResponseHook) -> None:
        self._client = client
        self._hook = hook

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._client.send(request, stream=True)
        return await self._hook(response)


OutcomeRewrite = Callable[[AgentOutcome, Task, AgentPorts], Any]


class _ChangedRun:
    """``inner`` with its recovery as it is: a subclass changes one thing of its run."""

    def __init__(self, inner: Agent, ports: AgentPorts) -> None:
        self._inner = inner
        self._ports = ports

    async def recover(self) -> RecoveryReport:
        return await self._inner.recover()


class RewritingAgent(_ChangedRun):
    """Runs ``inner`` and hands back ``rewrite(outcome)``: a bug in what the agent reports."""

    def __init__(self, inner: Agent, ports: AgentPorts, rewrite: OutcomeRewrite) -> None:
        super().__init__(inner, ports)
        self._rewrite = rewrite

    async def run(self, task: Task) -> AgentOutcome:
        outcome = await self._inner.run(task)
        rewritten: AgentOutcome = self._rewrite(outcome, task, self._ports)
        return rewritten


def rewriting(inner: AgentFactory, rewrite: OutcomeRewrite) -> AgentFactory:
    """``inner`` whose outcome is rewritten on the way out."""
    return lambda ports: RewritingAgent(inner(ports), ports, rewrite)


TaskChange = Callable[[Task, AgentPorts], Task]


class RetaskingAgent(_ChangedRun):
    """Runs ``inner`` on ``change(task)``: a bug in how the agent reads its task."""

    def __init__(self, inner: Agent, ports: AgentPorts, change: TaskChange) -> None:
        super().__init__(inner, ports)
        self._change = change

    async def run(self, task: Task) -> AgentOutcome:
        return await self._inner.run(self._change(task, self._ports))


def retasking(inner: AgentFactory, change: TaskChange) -> AgentFactory:
    """``inner`` that works on ``change(task)`` instead of the task it was given."""
    return lambda ports: RetaskingAgent(inner(ports), ports, change)


class ToolWrapper(PassThroughTool[Tool]):
    """A tool as another tool: override what a mutant changes, pass the rest through."""


class AppendWrapper(ClosesOnExit):
    """An open append file as another: override what a mutant changes."""

    def __init__(self, inner: AppendFile, path: str) -> None:
        self.inner = inner
        self.path = path

    @property
    def created(self) -> bool:
        return self.inner.created

    def write(self, data: bytes) -> None:
        self.inner.write(data)

    def fsync(self) -> None:
        self.inner.fsync()

    def close(self) -> None:
        self.inner.close()


class DiskWrapper:
    """A disk as another: every operation passes through unless a mutant overrides it."""

    def __init__(self, inner: Disk, files: Callable[[AppendFile, str], AppendFile]) -> None:
        self.inner = inner
        self._files = files

    def exists(self, path: str) -> bool:
        return self.inner.exists(path)

    def size(self, path: str) -> int:
        return self.inner.size(path)

    def read(self, path: str) -> bytes:
        return self.inner.read(path)

    def mkdir(self, path: str) -> bool:
        return self.inner.mkdir(path)

    def open_append(self, path: str) -> AppendFile:
        return self._files(self.inner.open_append(path), path)

    def truncate(self, path: str, length: int) -> None:
        self.inner.truncate(path, length)

    def fsync_dir(self, path: str) -> None:
        self.inner.fsync_dir(path)

    def replace(self, source: str, target: str) -> None:
        self.inner.replace(source, target)


def with_files(inner: AgentFactory, files: Callable[[AppendFile, str], AppendFile]) -> AgentFactory:
    """``inner`` whose every opened file is ``files(file, path)``."""
    return with_ports(inner, lambda ports: replace(ports, disk=DiskWrapper(ports.disk, files)))


class GoalPortWrapper:
    """A goal port as another: every call passes through unless a mutant overrides it."""

    def __init__(self, inner: GoalPort) -> None:
        self.inner = inner

    def read(self) -> Goal:
        return self.inner.read()

    def current_lease(self) -> Lease | None:
        return self.inner.current_lease()

    def acquire(self) -> Lease:
        return self.inner.acquire()

    def declare(self, epoch: int, goal: Goal, action: GoalAction) -> None:
        self.inner.declare(epoch, goal, action)

    def verify(self, goal: Goal, epoch: int) -> Verification:
        return self.inner.verify(goal, epoch)

    def complete(self, epoch: int, proof: CompletionProof) -> GoalAnswer:
        return self.inner.complete(epoch, proof)

    def set_status(self, epoch: int, revision: int, status: GoalStatus, reason: str) -> GoalAnswer:
        return self.inner.set_status(epoch, revision, status, reason)


def with_goals(inner: AgentFactory, wrap: Callable[[GoalPort], GoalPort]) -> AgentFactory:
    """``inner`` whose goal port (when the scenario offers one) is ``wrap(port)``."""
    return with_ports(inner, lambda ports: ports if ports.goals is None else replace(
        ports, goals=wrap(ports.goals)))
