"""The catalogue: realistic broken agents, each named after the rule it breaks.

Each :class:`Mutant` is the reference agent with one bug the seeds warn about,
and names the shipped cases that kill it: the scenario file, the crash case
(``None``: the crash-free one) and the check whose ``fail`` proves the kill. A
check exists only with the broken agent it catches; this table is that pairing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from harness.agent import (
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    RecoveryReport,
    StreamConfig,
    Task,
    ToolContext,
)
from harness.mutants._build import (
    ToolWrapper,
    reference,
    retasking,
    rewriting,
    with_responses,
    with_tools,
)


@dataclass(frozen=True)
class Kill:
    """A case that kills a mutant: the check ``check`` fails on it."""

    scenario: str  # path from the project root, such as scenarios/streaming/stall-then-429.yaml
    check: str
    crash: str | None = None  # a crash label such as journal:fsync#2:after:unsynced_lost


@dataclass(frozen=True)
class Mutant:
    """One broken agent: its name (rule first), the seed section, the bug, its killers."""

    name: str
    seed: str
    bug: str
    factory: AgentFactory
    kills: tuple[Kill, ...]


class _Idle:
    """Does nothing at all and says it finished: the laziest agent there is."""

    def __init__(self, ports: AgentPorts) -> None:
        self._ports = ports

    async def recover(self) -> RecoveryReport:
        return RecoveryReport()

    async def run(self, task: Task) -> AgentOutcome:  # noqa: ARG002 - it reads nothing
        return AgentOutcome("complete", "done", (), None, None, 0)


def _none(*_: object) -> Any:
    return None


def _without_retry_after(response: httpx.Response) -> httpx.Response:
    # As an HTTP layer that keeps only the status and body of an error answer.
    for name in ("retry-after", "retry-after-ms"):
        response.headers.pop(name, None)
    return response


class _WalksAway(ToolWrapper):
    """On a timeout, asks the call to stop and returns at once (Promise.race)."""

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        work = asyncio.ensure_future(self.inner.run(arguments, context))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            work.cancel()  # asked to stop, never waited for
            raise


class _ClaimsSafe(ToolWrapper):
    """Declares every tool safe to run beside others."""

    @property
    def concurrency_safe(self) -> bool:
        return True


def _budget_per_restart(task: Task, ports: AgentPorts) -> Task:
    # As an agent whose attempt limit is per process: every restart grants it anew.
    return replace(task, max_attempts=task.max_attempts * ports.incarnation)


_STALL = "scenarios/streaming/stall-then-429.yaml"
_SETTLE = "scenarios/tools/timeouts-settle.yaml"
_WRITERS = "scenarios/tools/writers-take-turns.yaml"
_429S = "scenarios/streaming/rate-limited-in-a-row.yaml"
_BUDGET = "scenarios/crash/budget-spent-at-a-crash.yaml"

MUTANTS: tuple[Mutant, ...] = (
    Mutant("I4-claims-success-doing-nothing", "seed 002 §19.2 (complete 状态本身不是证据)",
           "never calls the model or a tool and reports complete",
           _Idle, (Kill(_STALL, "I4"),)),
    Mutant("L5-no-outcome", "seed 002 §19.2 (不要用一个 error 覆盖所有可恢复状态)",
           "does the work but its run() returns None instead of a stop state",
           rewriting(reference(), _none), (Kill(_STALL, "outcome"),)),
    Mutant("S1-no-idle-watchdog", "seed 002 §19.1 ② and 自建起步 ① (空闲超时监视器)",
           "only a read timeout of an hour: a stalled stream is waited out",
           reference(config=StreamConfig(idle_timeout=3600.0)), (Kill(_STALL, "S1"),)),
    Mutant("S5-ignores-retry-after", "seed 002 §19.1 (尊重服务端 Retry-After)",
           "drops the Retry-After headers and retries on its own backoff",
           with_responses(reference(), _without_retry_after), (Kill(_STALL, "S5"),)),
    Mutant("J7-walks-away-from-timed-out-tool", "seed 002 §19.1 (工具超时为什么不能直接 "
           "Promise.race)", "a timed-out call is told to stop but never waited for",
           with_tools(reference(), _WalksAway), (Kill(_SETTLE, "J7"),)),
    Mutant("L2-runs-writers-in-parallel", "seed 002 §19.5 (isConcurrencySafe)",
           "treats every tool as concurrency-safe, so writers run side by side",
           with_tools(reference(), _ClaimsSafe), (Kill(_WRITERS, "L2"),)),
    Mutant("S5-no-429-cap", "seed 002 自建起步 ⑤ (限制连续 429 次数)",
           "waits out rate limits without a cap on how many come in a row",
           reference(config=StreamConfig(max_consecutive_429=100)),
           (Kill(_429S, "S5:429"), Kill(_429S, "I4"))),
    Mutant("S8-budget-resets-after-restart", "seed 002 §19.1 (dsh: 进程恢复后延续原计数)",
           "a restart grants the attempt budget anew on top of what was spent",
           retasking(reference(), _budget_per_restart),
           (Kill(_BUDGET, "I9", "session:fsync#5:after:unsynced_lost"),)),
)
"""Every mutant of the catalogue, in the order of the README's table."""
