"""Serve scenarios from a thread for the length of a ``with`` block (the pytest fixture's engine).

Example::

    with serving(["scenarios/crash/unknown-send-is-inspected.yaml"], time_scale=0.01) as served:
        client = openai.OpenAI(base_url=served.env["OPENAI_BASE_URL"], api_key="k")
        ...
        assert served.world.ledger.duplicates() == {}
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.scenario import Scenario, load_scenario
from harness.serve._app import Worlds, agent_environment, build_app
from harness.serve._guard import new_token
from harness.serve._server import ServerThread
from harness.serve._world import ServedWorld


@dataclass(frozen=True)
class RunningServer:
    """A running server: its URL, what an agent process is told, and the worlds it plays.

    ``token`` opens the control endpoint: ``Authorization: Bearer TOKEN``.
    """

    url: str
    worlds: Worlds
    token: str

    @property
    def world(self) -> ServedWorld:
        """The active scenario's world: its requests, ledger and clock."""
        return self.worlds.world

    @property
    def env(self) -> dict[str, str]:
        """The environment of an agent process (``OPENAI_BASE_URL``, ``HARNESS_TOOLS_URL`` …)."""
        return agent_environment(self.url, self.world.scenario, self.token,
                                 self.world.time_scale)

    @property
    def control_headers(self) -> dict[str, str]:
        """The headers a request to the control endpoint (``/_harness…``) needs."""
        return {"Authorization": f"Bearer {self.token}"}


@contextlib.contextmanager
def serving(scenarios: Sequence[Scenario | str | Path], *, time_scale: float = 1.0,
            seed: int | None = None, port: int = 0) -> Iterator[RunningServer]:
    """Serve ``scenarios`` (the first is active) on 127.0.0.1 until the block ends."""
    loaded = [s if isinstance(s, Scenario) else load_scenario(Path(s)) for s in scenarios]
    worlds = Worlds(loaded, lambda s: ServedWorld(
        s, seed=s.seed if seed is None else seed, time_scale=time_scale))
    token = new_token()
    with ServerThread(build_app(worlds, token), port) as url:
        yield RunningServer(url, worlds, token)
