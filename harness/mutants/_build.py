"""Building blocks of the mutants: the reference agent, bent only through public names.

A mutant is the reference agent with one realistic bug, made by configuring it,
wrapping its ports (the HTTP client, the tools, the disk) or rewriting what its
``run()`` returns — never by reaching into private modules, so the catalogue
survives refactors of the core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import httpx

from harness.agent import (
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    GuardLimits,
    RecoveryReport,
    ReferenceAgent,
    StreamConfig,
    Task,
    Tool,
    ToolContext,
)


def reference(*, config: StreamConfig | None = None,
              limits: GuardLimits | None = None) -> AgentFactory:
    """The reference agent with ``config`` and ``limits`` (a bad setting is a bug too)."""

    def build(ports: AgentPorts) -> Agent:
        return ReferenceAgent(ports, config=config, limits=limits)

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


ResponseHook = Callable[[httpx.Response], httpx.Response]


def with_responses(inner: AgentFactory, hook: ResponseHook) -> AgentFactory:
    """``inner`` whose HTTP client hands every response through ``hook`` first."""

    def change(ports: AgentPorts) -> AgentPorts:
        transport = _HookedTransport(ports.http, hook)
        http = httpx.AsyncClient(transport=transport, base_url=ports.http.base_url)
        return replace(ports, http=http)

    return with_ports(inner, change)


class _HookedTransport(httpx.AsyncBaseTransport):
    def __init__(self, client: httpx.AsyncClient, hook: ResponseHook) -> None:
        self._client = client
        self._hook = hook

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._client.send(request, stream=True)
        return self._hook(response)


OutcomeRewrite = Callable[[AgentOutcome, Task, AgentPorts], Any]


class RewritingAgent:
    """Runs ``inner`` and hands back ``rewrite(outcome)``: a bug in what the agent reports."""

    def __init__(self, inner: Agent, ports: AgentPorts, rewrite: OutcomeRewrite) -> None:
        self._inner = inner
        self._ports = ports
        self._rewrite = rewrite

    async def recover(self) -> RecoveryReport:
        return await self._inner.recover()

    async def run(self, task: Task) -> AgentOutcome:
        outcome = await self._inner.run(task)
        rewritten: AgentOutcome = self._rewrite(outcome, task, self._ports)
        return rewritten


def rewriting(inner: AgentFactory, rewrite: OutcomeRewrite) -> AgentFactory:
    """``inner`` whose outcome is rewritten on the way out."""
    return lambda ports: RewritingAgent(inner(ports), ports, rewrite)


TaskChange = Callable[[Task, AgentPorts], Task]


class RetaskingAgent:
    """Runs ``inner`` on ``change(task)``: a bug in how the agent reads its task."""

    def __init__(self, inner: Agent, ports: AgentPorts, change: TaskChange) -> None:
        self._inner = inner
        self._ports = ports
        self._change = change

    async def recover(self) -> RecoveryReport:
        return await self._inner.recover()

    async def run(self, task: Task) -> AgentOutcome:
        return await self._inner.run(self._change(task, self._ports))


def retasking(inner: AgentFactory, change: TaskChange) -> AgentFactory:
    """``inner`` that works on ``change(task)`` instead of the task it was given."""
    return lambda ports: RetaskingAgent(inner(ports), ports, change)


class ToolWrapper:
    """A tool as another tool: override what a mutant changes, pass the rest through."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def concurrency_safe(self) -> bool:
        return self.inner.concurrency_safe

    @property
    def idempotent(self) -> bool:
        return self.inner.idempotent

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        return await self.inner.run(arguments, context)
