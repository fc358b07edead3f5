"""Which agent a worker runs, as the command line chose it (sent to each worker)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakes import ModelPrice
    from harness.runner._run import AgentUnderTest
    from harness.scenario import Scenario


@dataclass(frozen=True)
class AgentChoice:
    """The agent a worker runs: the ``--agent`` spec (None: the reference agent), its
    ``--target`` tool functions, whether each case runs twice (determinism), whether
    each crash case replays from its start (``--replay``), and the ``--prices`` the
    process priced models with (a spawned worker starts without them).

    ``chosen`` (the pytest plugin's) picks the agent of each scenario in the worker itself,
    from what the worker was forked with (the plugin's hook, its ``harness_agent``); a
    function crosses to a forked worker only, never to a spawned one."""

    spec: str | None = None
    targets: tuple[tuple[str, str], ...] = ()
    twice: bool = False
    replay: bool = False
    prices: tuple[tuple[str, ModelPrice], ...] = ()
    chosen: Callable[[Scenario], AgentUnderTest | None] | None = None

    def load(self, scenario: Scenario | None = None) -> AgentUnderTest | None:
        """The agent of ``scenario``'s cases; ``None``: the reference agent (with ``chosen``
        and no scenario: nothing to import ahead of the first case)."""
        from harness.intercept import PlainEntry
        from harness.runner._agents import load_agent_factory

        if self.chosen is not None:
            return None if scenario is None else self.chosen(scenario)
        agent = load_agent_factory(self.spec) if self.spec is not None else None
        if isinstance(agent, PlainEntry):
            return agent.with_tool_map(self.targets)
        return agent
