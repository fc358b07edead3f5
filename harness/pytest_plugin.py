"""The harness's pytest plugin: YAML scenarios as test items, and virtual-time fixtures.

Registered through the ``pytest11`` entry point, so installing the project is
enough. It only wires: loading, planning, running and judging live in the
library (``harness.scenario``, ``harness.runner``); rendering in
``harness._report_text``; result files in ``harness._output``.

Every ``*.yaml`` / ``*.yml`` under the scenario folders (ini ``harness_scenarios``
or ``--harness-scenarios``, default ``scenarios`` under the rootdir) becomes one
test item per planned case::

    scenarios/x.yaml::parallel-append-crash[journal:fsync#3:after:unsynced_lost]

A file that does not load is one failing item whose report is the located
error. A user's own agent plugs in through the ``pytest_harness_agent_factory``
hook, in a ``conftest.py``::

    def pytest_harness_agent_factory(config, scenario):
        return lambda ports: MyAgent(ports)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fakes import VirtualClock
    from harness.agent import AgentFactory
    from harness.runner._results import Case, CaseResult
    from harness.scenario import Scenario

CRASH_MODES = ("all", "none", "listed")


class HarnessHookSpecs:
    """Hooks a ``conftest.py`` may implement."""

    @pytest.hookspec(firstresult=True)
    def pytest_harness_agent_factory(
        self, config: pytest.Config, scenario: Scenario
    ) -> AgentFactory | None:
        """The agent to run ``scenario`` with; ``None`` (the default) runs the reference agent."""


@dataclass
class HarnessSettings:
    """The plugin's options, resolved once per session, and the results this process saw."""

    roots: tuple[Path, ...]
    named: frozenset[Path]
    crash: str | None
    seed: int | None
    results_dir: Path | None
    results: list[CaseResult] = field(default_factory=list)

    def collects(self, path: Path) -> bool:
        """Whether ``path`` is a scenario: under a scenario folder or named on the command line."""
        if path.suffix not in {".yaml", ".yml"}:
            return False
        return path in self.named or any(path.is_relative_to(root) for root in self.roots)


_SETTINGS = pytest.StashKey[HarnessSettings]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from harness._options import parse_seed

    group = parser.getgroup("harness", "chaos harness scenarios")
    group.addoption("--harness-scenarios", action="append", metavar="PATH", default=None,
                    help="folder (or file) of YAML scenarios to collect, relative to the rootdir;"
                         " repeatable (default: ini harness_scenarios, else 'scenarios')")
    group.addoption("--harness-crash", choices=CRASH_MODES, default=None,
                    help="crash at every recorded point (all), at none, or only at the points a"
                         " scenario lists by id (listed); default: as each scenario says")
    group.addoption("--harness-seed", type=parse_seed, metavar="N", default=None,
                    help="run every scenario with this seed instead of its own")
    group.addoption("--harness-results", metavar="DIR", default=None,
                    help="write cases/attempts as JSONL and Parquet to DIR, one set of files per"
                         " xdist worker")
    parser.addini("harness_scenarios", type="args", default=["scenarios"],
                  help="folders of YAML scenarios, relative to the rootdir")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(HarnessHookSpecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness_scenario(name): a case planned from the YAML scenario 'name'")
    rootdir = config.rootpath
    given = config.getoption("harness_scenarios") or config.getini("harness_scenarios")
    results = config.getoption("harness_results")
    for path in config.getoption("harness_scenarios") or ():
        if not (rootdir / path).exists():
            raise pytest.UsageError(f"--harness-scenarios: got {path!r}: no such file or folder "
                                    f"under {rootdir}; expected a folder or file of YAML "
                                    "scenarios")
    config.stash[_SETTINGS] = HarnessSettings(
        roots=tuple((rootdir / path).resolve() for path in given),
        named=_named_on_command_line(config),
        crash=config.getoption("harness_crash"),
        seed=config.getoption("harness_seed"),
        results_dir=None if results is None else (rootdir / results).resolve(),
    )


def _named_on_command_line(config: pytest.Config) -> frozenset[Path]:
    # `pytest some/other/x.yaml` asks for that file by name: collect it even outside
    # the scenario folders, as pytest does for a test module outside testpaths.
    here = config.invocation_params.dir
    paths = (here / arg.split("::")[0] for arg in config.invocation_params.args
             if not arg.startswith("-"))
    return frozenset(path.resolve() for path in paths if path.suffix in {".yaml", ".yml"})


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    settings = parent.config.stash.get(_SETTINGS, None)
    if settings is None or not settings.collects(file_path.resolve()):
        return None
    file: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return file


class ScenarioFile(pytest.File):
    """One YAML scenario file; its items are the cases the runner plans for it."""

    def collect(self) -> Iterator[pytest.Item]:
        from harness._errors import HarnessError

        try:
            scenario, cases = self._plan()
        except HarnessError as error:
            yield ScenarioErrorItem.from_parent(self, name=self.path.name, error=error)
            return
        for case in cases:
            yield ScenarioItem.from_parent(self, name=case.case_id, case=case, scenario=scenario)

    def _plan(self) -> tuple[Scenario, list[Case]]:
        from harness import runner
        from harness._options import with_overrides
        from harness.scenario import load_scenario

        settings = self.config.stash[_SETTINGS]
        source = _display_path(self.path)
        scenario = with_overrides(load_scenario(source), crash=settings.crash, seed=settings.seed)
        # The points to crash at are those the agent under test reaches, as with
        # `harness run --agent`. xdist compares the collection of every worker:
        # plan_cases must be a pure function of the scenario and the agent
        # (recording runs included), and it is kept in its order.
        return scenario, list(runner.plan_cases(scenario, source, _agent_factory(
            self.config, scenario)))


def _agent_factory(config: pytest.Config, scenario: Scenario) -> AgentFactory | None:
    """The ``pytest_harness_agent_factory`` hook's agent; ``None`` for the reference agent."""
    factory: AgentFactory | None = config.hook.pytest_harness_agent_factory(
        config=config, scenario=scenario)
    return factory


def _display_path(path: Path) -> Path:
    """``path`` relative to the working folder when inside it, so messages stay short."""
    relative = Path(os.path.relpath(path))
    return path if relative.parts[:1] == ("..",) else relative


class CaseFailed(Exception):
    """A case ran to the end and a verdict went against it (not a bug: no traceback)."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.case.case_id)
        self.result = result


class ScenarioItem(pytest.Item):
    """One planned case: run it, judge it, report it."""

    def __init__(self, *, case: Case, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.scenario = scenario
        self.add_marker(pytest.mark.harness_scenario(scenario.name))

    def runtest(self) -> None:
        from harness import runner

        result = runner.run_case(self.case, scenario=self.scenario,
                                 agent_factory=_agent_factory(self.config, self.scenario))
        self.config.stash[_SETTINGS].results.append(result)
        self.user_properties += [(v.invariant, v.status) for v in result.verdicts]
        if not result.passed:
            raise CaseFailed(result)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailed):
            from harness._report_text import render_failure

            return render_failure(excinfo.value.result, self.scenario)
        from harness._errors import ScenarioError

        if isinstance(excinfo.value, ScenarioError):  # bad input found mid-run: no traceback
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.case.case_id}"


class ScenarioErrorItem(pytest.Item):
    """Stands for a scenario file that cannot be loaded or planned; it fails with the error."""

    def __init__(self, *, error: Exception, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None,
    ) -> str | Any:
        if excinfo.value is self.error:
            return str(self.error)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario file {self.path.name}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    settings = session.config.stash.get(_SETTINGS, None)
    if settings is None or settings.results_dir is None or not settings.results:
        return
    from harness._output import write_results

    write_results(settings.results_dir, settings.results, suffix=f"-{_worker_id(session.config)}")


def _worker_id(config: pytest.Config) -> str:
    """``gw0``, ``gw1`` … under pytest-xdist; ``main`` without it."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    return "main" if workerinput is None else str(workerinput["workerid"])


@pytest.fixture
def virtual_clock() -> VirtualClock:
    """A fresh :class:`fakes.VirtualClock` at t=0.

    Drive async code with ``virtual_clock.run(coro)``; every sleep, timeout and
    stall inside it runs on virtual time::

        def test_backoff(virtual_clock):
            virtual_clock.run(asyncio.sleep(60))
            assert virtual_clock.now() == 60
    """
    from fakes import VirtualClock

    return VirtualClock()
