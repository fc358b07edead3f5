"""The catalogue: realistic broken agents, each named after the rule it breaks.

Each :class:`Mutant` is the reference agent with one bug the seeds warn about,
and names the shipped cases that kill it: the scenario file, the crash case
(``None``: the crash-free one) and the check whose ``fail`` proves the kill. A
check exists only with the broken agent it catches; this table is that pairing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.agent import AgentFactory, AgentOutcome, AgentPorts, RecoveryReport, Task
from harness.mutants._build import reference, rewriting


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


_STALL = "scenarios/streaming/stall-then-429.yaml"

MUTANTS: tuple[Mutant, ...] = (
    Mutant("I4-claims-success-doing-nothing", "seed 002 §19.2 (complete 状态本身不是证据)",
           "never calls the model or a tool and reports complete",
           _Idle, (Kill(_STALL, "I4"),)),
    Mutant("L5-no-outcome", "seed 002 §19.2 (不要用一个 error 覆盖所有可恢复状态)",
           "does the work but its run() returns None instead of a stop state",
           rewriting(reference(), _none), (Kill(_STALL, "outcome"),)),
)
"""Every mutant of the catalogue, in the order of the README's table."""
