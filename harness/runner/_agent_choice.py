"""Which agent a worker runs, as the command line chose it (sent to each worker)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakes import ModelPrice
    from harness.runner._run import AgentUnderTest


@dataclass(frozen=True)
class AgentChoice:
    """The agent a worker runs: the ``--agent`` spec (None: the reference agent), its
    ``--target`` tool functions, whether each case runs twice (determinism), whether
    each crash case replays from its start (``--replay``), and the ``--prices`` the
    process priced models with (a spawned worker starts without them)."""

    spec: str | None = None
    targets: tuple[tuple[str, str], ...] = ()
    twice: bool = False
    replay: bool = False
    prices: tuple[tuple[str, ModelPrice], ...] = ()

    def load(self) -> AgentUnderTest | None:
        from harness.intercept import PlainEntry
        from harness.runner._agents import load_agent_factory

        agent = load_agent_factory(self.spec) if self.spec is not None else None
        if isinstance(agent, PlainEntry):
            return agent.with_tool_map(self.targets)
        return agent
