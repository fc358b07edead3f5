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
error. A user's own agent plugs in with the ini option ``harness_agent =
mypackage.agent:main`` (or ``--harness-agent``), or through the
``pytest_harness_agent_factory`` hook, in a ``conftest.py``::

    def pytest_harness_agent_factory(config, scenario):
        return mypackage.agent.main              # a plain main(prompt), run unchanged
        # or: return lambda ports: MyAgent(ports)   # the full Agent protocol

With ``--harness-fuzz N`` each scenario also gets a ``NAME[fuzz]`` item that searches N
fault schedules (``harness fuzz``) and fails with the path of the shrunk repro.

A case whose crash point the agent never reached is skipped with the reason
(its verdict is ``unknown``), and so is a scenario in a dialect the agent does
not speak (ini ``harness_dialects``, ``--harness-dialect``, or a ``dialects``
attribute on the agent).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fakes import VirtualClock
    from harness._shard import Shard
    from harness.runner import AgentUnderTest, Case, CaseResult, SealedCases, StepTo
    from harness.scenario import Scenario



class HarnessHookSpecs:
    """Hooks a ``conftest.py`` may implement."""

    @pytest.hookspec(firstresult=True)
    def pytest_harness_agent_factory(
        self, config: pytest.Config, scenario: Scenario
    ) -> Callable[..., Any] | None:
        """The agent to run ``scenario`` with: a plain ``main(prompt)`` or a factory over the
        ports; ``None`` (the default) runs ``harness_agent``, else the reference agent."""


@dataclass
class HarnessSettings:
    """The plugin's options, resolved once per session, and the results this process saw."""

    roots: tuple[Path, ...]
    named: frozenset[Path]
    crash: str | None
    seed: int | None
    results_dir: Path | None
    agent: str | None = None
    agent_source: str = "--harness-agent"  # or the ini option, for the error that names it
    dialects: tuple[str, ...] = ()
    targets: tuple[tuple[str, str], ...] = ()
    targets_source: str = "--harness-target"
    results: list[CaseResult] = field(default_factory=list)
    twice: bool = False  # --harness-check-determinism
    replay: bool = False  # --harness-replay
    strict: bool = False  # --harness-strict
    fuzz_budget: int | None = None  # --harness-fuzz N
    rootdir: Path = Path()
    shard: Shard | None = None  # --harness-shard K/N
    case_timeout: float = 60.0  # --harness-case-timeout (its default: DEFAULT_CASE_TIMEOUT)

    def takes(self, item_name: str) -> bool:
        """Whether this session's shard (all of them without one) runs the item of this name."""
        return self.shard is None or self.shard.holds(item_name)

    def collects(self, path: Path) -> bool:
        """Whether ``path`` is a scenario: under a scenario folder or named on the command line."""
        if path.suffix not in {".yaml", ".yml"}:
            return False
        return path in self.named or any(path.is_relative_to(root) for root in self.roots)


_SETTINGS = pytest.StashKey[HarnessSettings]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from harness._fuzz_options import parse_budget
    from harness._options import (
        CHECK_DETERMINISM_HELP,
        DEFAULT_CASE_TIMEOUT,
        REPLAY_HELP,
        crash_settings_help,
        parse_seed,
    )

    group = parser.getgroup("harness", "chaos harness scenarios")
    group.addoption("--harness-scenarios", action="append", metavar="PATH", default=None,
                    help="folder (or file) of YAML scenarios to collect, relative to the rootdir;"
                         " repeatable (default: ini harness_scenarios, else 'scenarios')")
    group.addoption("--harness-crash", metavar="SETTING",
                    default=None,
                    help=f"what every scenario crashes (default: ini harness_crash, else "
                         f"as-written): {crash_settings_help()}")
    group.addoption("--harness-seed", type=parse_seed, metavar="N", default=None,
                    help="run every scenario with this seed instead of its own")
    group.addoption("--harness-strict", action="store_true", default=False,
                    help="turn warnings (advice such as no backoff between retries) into "
                         "failures, and fail a case that proved nothing (its crash point or "
                         "fault never reached) instead of skipping it")
    group.addoption("--harness-check-determinism", action="store_true", default=False,
                    help=CHECK_DETERMINISM_HELP)
    group.addoption("--harness-replay", action="store_true", default=False, help=REPLAY_HELP)
    from harness._shard import parse_shard

    group.addoption("--harness-shard", type=parse_shard, metavar="K/N", default=None,
                    help="collect only shard K of N of the scenario items, chosen by a hash "
                         "of each item's case id (as 'harness run --shard'): one CI matrix "
                         "job per K")
    group.addoption("--harness-case-timeout", type=_seconds, metavar="SECONDS",
                    default=DEFAULT_CASE_TIMEOUT,
                    help="real seconds a case (or the agent's run that plans a scenario's "
                         "cases) may take before its agent is killed and the item fails "
                         f"(as 'harness run --case-timeout'; default: {DEFAULT_CASE_TIMEOUT:g})")
    group.addoption("--harness-results", metavar="DIR", default=None,
                    help="write cases/attempts as JSONL and Parquet to DIR, one set of files per"
                         " xdist worker")
    group.addoption("--harness-fuzz", type=parse_budget, metavar="N", default=None,
                    help="also fuzz N fault schedules per scenario (harness fuzz): one item per"
                         " scenario that fails with the path of the shrunk repro")
    group.addoption("--harness-agent", metavar="MODULE:CALLABLE", default=None,
                    help="the agent under test: a plain main(prompt) run unchanged, or a factory"
                         " over the ports (default: ini harness_agent, else the reference agent)")
    group.addoption("--harness-dialect", action="append", metavar="DIALECT", default=None,
                    help="a dialect the agent speaks (openai, anthropic); repeatable; scenarios"
                         " in another dialect are skipped")
    parser.addini("harness_crash", default="",
                  help="the crash setting when --harness-crash is not given (see "
                       "--harness-crash): as-written, none, listed, sample or all-points")
    group.addoption("--harness-prices", metavar="FILE", default=None,
                    help="your own prices, USD per million tokens by model (YAML or JSON), "
                         "before the shipped table and genai-prices (default: ini "
                         "harness_prices)")
    parser.addini("harness_prices", default="",
                  help="a price file, relative to the rootdir (see --harness-prices)")
    parser.addini("harness_scenarios", type="args", default=["scenarios"],
                  help="folders of YAML scenarios, relative to the rootdir")
    group.addoption("--harness-target", action="append", metavar="TOOL=MODULE:FUNCTION",
                    default=None, help="the agent's own function that scenario tool TOOL stands"
                                       " for (default: ini harness_targets); repeatable")
    parser.addini("harness_targets", type="args", default=[],
                  help="TOOL=MODULE:FUNCTION pairs (see --harness-target)")
    parser.addini("harness_agent", default="",
                  help="the agent under test, MODULE:CALLABLE (see --harness-agent)")
    parser.addini("harness_dialects", type="args", default=[],
                  help="the dialects the agent speaks (see --harness-dialect)")


def _seconds(text: str) -> float:
    from harness._options import positive_float

    return positive_float(text, "a number of seconds > 0, such as 60")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(HarnessHookSpecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness_scenario(name): a case planned from the YAML scenario 'name'")
    _refuse_a_rootdir_an_option_moved(config)
    rootdir = config.rootpath
    given = config.getoption("harness_scenarios") or config.getini("harness_scenarios")
    results = config.getoption("harness_results")
    for path in config.getoption("harness_scenarios") or ():
        if not (rootdir / path).exists():
            from harness._errors import got_expected

            raise pytest.UsageError(got_expected(
                "--harness-scenarios", got=f"{path!r}: no such file or folder under {rootdir}",
                expected="a folder or file of YAML scenarios"))
    _collect_outside_the_walk(config, rootdir)
    _use_prices(config, rootdir)
    config.stash[_SETTINGS] = HarnessSettings(
        roots=tuple((rootdir / path).resolve() for path in given),
        named=_named_on_command_line(config),
        crash=_crash_mode(config),
        seed=config.getoption("harness_seed"),
        results_dir=None if results is None else (rootdir / results).resolve(),
        agent=config.getoption("harness_agent") or config.getini("harness_agent") or None,
        agent_source=("--harness-agent" if config.getoption("harness_agent")
                      else f"ini harness_agent ({config.inipath or 'the ini file'})"),
        dialects=tuple(config.getoption("harness_dialect") or config.getini("harness_dialects")),
        targets=_targets(config.getoption("harness_target") or config.getini("harness_targets")),
        targets_source=("--harness-target" if config.getoption("harness_target")
                        else f"ini harness_targets ({config.inipath or 'the ini file'})"),
        twice=config.getoption("harness_check_determinism"),
        replay=config.getoption("harness_replay"),
        strict=config.getoption("harness_strict"),
        fuzz_budget=config.getoption("harness_fuzz"),
        rootdir=rootdir,
        shard=config.getoption("harness_shard"),
        case_timeout=config.getoption("harness_case_timeout"),
    )
    _hide_what_the_session_writes(config, config.stash[_SETTINGS])


# The plugin's options that take a path: written as two words, pytest reads the path as a
# test path when it chooses its rootdir, before this plugin (an entry point) is loaded.
_PATH_OPTIONS = ("--harness-scenarios", "--harness-results", "--harness-prices")


def _refuse_a_rootdir_an_option_moved(config: pytest.Config) -> None:
    """A usage error when ``--harness-scenarios PATH`` (two words) chose pytest's rootdir.

    pytest chooses its rootdir and ini file from the command line's paths before it loads
    the plugins installed as packages, so the PATH of a plugin option written as a word of
    its own counts as a test path: ``pytest --harness-scenarios ../other/scenarios`` took
    ``../other``'s ini file, and with it that project's agent, silently, instead of the
    one in the folder pytest ran in. Written ``--harness-scenarios=PATH``, it does not.
    """
    import inspect
    import itertools

    here = config.invocation_params.dir
    args = list(config.invocation_params.args)
    moved = [(flag, value) for flag, value in itertools.pairwise(args)
             if flag in _PATH_OPTIONS and (here / value).exists()]
    if not moved:
        return
    namespace = config.known_args_namespace  # parsed again with this plugin's options known
    try:  # pytest's own choice, made again without the options' paths
        from _pytest.config.findpaths import determine_setup

        known = inspect.signature(determine_setup).parameters
        wanted = {"inifile": namespace.inifilename, "override_ini": None,
                  "args": namespace.file_or_dir, "rootdir_cmd_arg": namespace.rootdir or None,
                  "invocation_dir": here}
        rootpath, inipath, *_ = determine_setup(
            **{key: value for key, value in wanted.items() if key in known})
    except Exception:  # a pytest whose internals differ: nothing to compare with
        return
    if (rootpath, inipath) == (config.rootpath, config.inipath):
        return
    flag, value = moved[0]
    raise pytest.UsageError(
        f"{flag} {value}: pytest read {value!r} as a test path when it chose its rootdir, so"
        f" it took {config.rootpath} (ini file {config.inipath or 'none'}) instead of"
        f" {rootpath} (ini file {inipath or 'none'}), and the options of {inipath or 'none'}"
        f" (harness_agent …) would not be read; write the option and its path as one word:"
        f" {flag}={value}")


def _hide_what_the_session_writes(config: pytest.Config, settings: HarnessSettings) -> None:
    """Keep the results and fuzz folders out of every case's start folder, as ``harness
    run`` keeps its ``--out``: they fill while the items run, so a case listing its folder
    would see other cases' results, and differ with the order the items ran in."""
    from contextlib import ExitStack

    from harness._environment import hiding

    stack = ExitStack()
    for folder in (settings.results_dir, settings.rootdir / ".harness-fuzz"):
        if folder is not None:
            stack.enter_context(hiding(str(folder)))
    config.add_cleanup(stack.close)


def _use_prices(config: pytest.Config, rootdir: Path) -> None:
    """Price models from ``--harness-prices`` or the ini's ``harness_prices`` in this process
    (each xdist worker configures itself, so each reads the file)."""
    from harness._errors import ScenarioError
    from harness.frontend import use_price_file

    given = config.getoption("harness_prices") or str(config.getini("harness_prices")).strip()
    if not given:
        return
    try:
        use_price_file(rootdir / given)
    except ScenarioError as error:
        raise pytest.UsageError(f"--harness-prices / harness_prices: {error}") from None
    config.add_cleanup(_default_prices)  # a session run inside another leaves its prices


def _default_prices() -> None:
    from fakes import use_prices

    use_prices({})


def _crash_mode(config: pytest.Config) -> str | None:
    """``--harness-crash``, else the ini's ``harness_crash``, else ``None`` (as-written).

    A bad name is a usage error listing the good ones; an old spelling still works, with
    a deprecation warning saying what it means.
    """
    import argparse

    from harness._options import crash_setting_note, parse_crash_setting

    word: str | None = config.getoption("harness_crash")
    where = "--harness-crash"
    if word is None:
        word = str(config.getini("harness_crash")).strip() or None
        where = f"ini harness_crash ({config.inipath or 'the ini file'})"
    if word is None:
        return None
    try:
        setting = parse_crash_setting(word)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"{where}: {error}") from None
    note = crash_setting_note(word)
    if note is not None:
        config.issue_config_time_warning(pytest.PytestDeprecationWarning(f"{where}: {note}"),
                                         stacklevel=2)
    return setting


def _collect_outside_the_walk(config: pytest.Config, rootdir: Path) -> None:
    """Walk a ``--harness-scenarios`` folder that pytest would not walk as an argument of its own.

    pytest walks only its arguments (by default the rootdir or ``testpaths``), so a
    folder outside them (outside the rootdir, say) would silently give no item;
    asking for it by name is asking for its scenarios.
    """
    here = config.invocation_params.dir
    walked = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    for given in config.getoption("harness_scenarios") or ():
        path = (rootdir / given).resolve()
        if not any(path.is_relative_to(top) for top in walked):
            config.args.append(str(path))
            walked.append(path)


def _targets(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    import argparse

    from harness._options import parse_target

    try:
        return tuple(parse_target(pair) for pair in pairs)
    except argparse.ArgumentTypeError as error:
        raise pytest.UsageError(f"--harness-target / harness_targets: {error}") from error


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
            scenario, plan = self._plan()
        except HarnessError as error:
            yield ScenarioErrorItem.from_parent(self, name=self.path.name, error=error)
            return
        if plan.skip is not None:
            yield ScenarioSkipItem.from_parent(self, name=scenario.name, reason=plan.skip)
            return
        settings = self.config.stash[_SETTINGS]
        for planned in plan.cases:
            # The replay names the agent the item ran with, however it was chosen.
            case = replace(planned, agent=plan.spec, targets=plan.targets)
            if settings.takes(case.case_id):
                yield ScenarioItem.from_parent(self, name=case.case_id, case=case,
                                               scenario=scenario)
        if settings.fuzz_budget is not None and settings.takes(f"{scenario.name}[fuzz]"):
            # A factory named by --harness-agent has no spec of its own; its replay needs one.
            yield FuzzItem.from_parent(self, name=f"{scenario.name}[fuzz]", scenario=scenario,
                                       agent_spec=plan.spec or settings.agent,
                                       targets=plan.targets)

    def _plan(self) -> tuple[Scenario, _Plan]:
        from harness._options import with_overrides
        from harness.scenario import load_scenario

        settings = self.config.stash[_SETTINGS]
        source = _display_path(self.path)
        scenario = with_overrides(load_scenario(source), crash=settings.crash, seed=settings.seed)
        hooked = self.config.hook.pytest_harness_agent_factory(config=self.config,
                                                               scenario=scenario)
        if hooked is None and settings.agent is None:  # the reference agent: the harness's own
            return scenario, _planned(self.config, scenario, source)
        # The agent's code (its import, its recorded run) runs sealed, as in `harness run`.
        from harness._options import DEFAULT_CASE_MEMORY_MIB
        from harness.runner import contained, tool_env_names

        data = contained(lambda step: _planned(self.config, scenario, source, step).as_data(),
                         timeout=settings.case_timeout, longer=_LONGER,
                         tool_names=tool_env_names([scenario]), agent=settings.agent,
                         memory_mib=DEFAULT_CASE_MEMORY_MIB)
        return scenario, _Plan.from_data(data, scenario, source)


_LONGER = "raise --harness-case-timeout if it is honest work"


@dataclass(frozen=True)
class _Plan:
    """A scenario file's cases for the agent under test, or why the agent sits it out."""

    skip: str | None
    cases: tuple[Case, ...] = ()
    spec: str | None = None
    targets: tuple[tuple[str, str], ...] = ()

    def as_data(self) -> dict[str, Any]:
        """This plan as JSON data, sent back from the sealed process that made it."""
        return {"skip": self.skip, "spec": self.spec, "targets": [list(t) for t in self.targets],
                "crashes": [None if c.crash is None else [
                    c.crash.point_id, c.crash.when, c.crash.crash_class,
                    c.crash.during_recovery] for c in self.cases]}

    @classmethod
    def from_data(cls, data: dict[str, Any], scenario: Scenario, source: Path) -> _Plan:
        """The plan :meth:`as_data` sent, its cases built here from their crash points."""
        from harness.runner import Case, CrashSpec

        cases = tuple(Case(scenario.name, source, scenario.seed,
                           None if crash is None else CrashSpec(*crash))
                      for crash in data["crashes"])
        return cls(data["skip"], cases, data["spec"],
                   tuple((tool, spec) for tool, spec in data["targets"]))


def _planned(config: pytest.Config, scenario: Scenario, source: Path,
             step: StepTo | None = None) -> _Plan:
    """Plan ``scenario`` for the agent under test (run here, or in a sealed process that
    ``step`` tells when the agent's import ends and its planning run begins)."""
    from harness import runner
    from harness._options import chosen_cases
    from harness.intercept import PlainEntry

    settings = config.stash[_SETTINGS]
    agent = _agent_factory(config, scenario)
    if step is not None:
        step(runner.PLANNING)
    # The points to crash at are those the agent under test reaches, as with
    # `harness run --agent`. xdist compares the collection of every worker:
    # plan_cases must be a pure function of the scenario and the agent
    # (recording runs included), and it is kept in its order.
    cases = chosen_cases(runner.plan_cases(scenario, source, agent), settings.crash)
    skip = runner.dialect_skip(scenario, agent, settings.dialects)
    if isinstance(agent, PlainEntry):
        return _Plan(skip, tuple(cases), agent.spec, agent.tool_map)
    return _Plan(skip, tuple(cases))


def _agent_factory(config: pytest.Config, scenario: Scenario) -> AgentUnderTest | None:
    """The hook's agent, else ``harness_agent``; ``None`` for the reference agent."""
    from harness.intercept import PlainEntry
    from harness.runner import agent_under_test, load_agent_factory

    settings = config.stash[_SETTINGS]
    hooked = config.hook.pytest_harness_agent_factory(config=config, scenario=scenario)
    agent: AgentUnderTest | None
    if hooked is not None:
        agent = agent_under_test(hooked)
    else:
        agent = (load_agent_factory(settings.agent, settings.agent_source)
                 if settings.agent else None)
    if isinstance(agent, PlainEntry):
        return agent.with_tool_map(settings.targets, settings.targets_source)
    return agent


class ScenarioSkipItem(pytest.Item):
    """A scenario the agent under test cannot take part in (another dialect)."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.skip(self.reason)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.name}"


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

        settings = self.config.stash[_SETTINGS]
        result = _sealed_cases(self.config).run(self.case, self.scenario)
        if settings.strict:
            result = runner.strictly(result)
        self.config.stash[_SETTINGS].results.append(result)
        self.user_properties += [(v.invariant, v.status) for v in result.verdicts]
        if result.status == "fail":
            raise CaseFailed(result)
        if result.status == "unknown":
            if settings.strict:  # as harness run --strict: a case that proved nothing fails
                pytest.fail(f"--harness-strict: unknown: {result.unknown_reason}",
                            pytrace=False)
            pytest.skip(f"unknown: {result.unknown_reason}")
        if settings.strict and result.no_crash_case is not None:
            # Its own checks passed, but the crash cases its scenario asked for do not exist.
            pytest.fail(f"--harness-strict: unknown: {result.no_crash_case}", pytrace=False)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailed):
            from harness._report_text import render_failure

            return render_failure(excinfo.value.result, self.scenario, node_id=self.nodeid)
        from harness._errors import ScenarioError, WorkerError

        # Bad input found mid-run (here, or in the case's worker): no traceback.
        if isinstance(excinfo.value, ScenarioError | WorkerError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"scenario {self.case.case_id}"


_SEALED = pytest.StashKey["SealedCases"]()


def _sealed_cases(config: pytest.Config) -> SealedCases:
    """This process's sealed case worker, kept from item to item (started at the first).

    Each case runs in the worker ``harness run`` uses (:class:`harness.runner.SealedCases`),
    judged here from the trace it hands back: the agent never runs in pytest's process.
    The worker, forked from this process, picks each scenario's agent itself, as
    :func:`_agent_factory` does here.
    """
    cases = config.stash.get(_SEALED, None)
    if cases is None:
        from harness.runner import AgentChoice, SealedCases

        settings = config.stash[_SETTINGS]
        choice = AgentChoice(twice=settings.twice, replay=settings.replay,
                             chosen=lambda scenario: _agent_factory(config, scenario))
        cases = config.stash[_SEALED] = SealedCases(choice, timeout=settings.case_timeout,
                                                    longer=_LONGER)
        config.add_cleanup(cases.close)
    return cases


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


class FuzzFound(Exception):
    """The fuzzer found a schedule that violates an invariant; its repro is written."""


class FuzzItem(pytest.Item):
    """``harness fuzz`` over one scenario: passes when the budget finds nothing.

    The search's seed is ``--harness-seed`` (default 0), so CI finds the same repro every
    time; its folder (repro and example database) is ``fuzz/SCENARIO`` under
    ``--harness-results``, else under ``.harness-fuzz`` in the rootdir.
    """

    def __init__(self, *, scenario: Scenario, agent_spec: str | None,
                 targets: tuple[tuple[str, str], ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.agent_spec = agent_spec
        self.targets = targets

    def runtest(self) -> None:
        from harness._options import DEFAULT_CASE_MEMORY_MIB
        from harness.fuzz import write_handed_back
        from harness.runner import contained, tool_env_names

        settings = self.config.stash[_SETTINGS]
        out = (settings.results_dir or settings.rootdir / ".harness-fuzz") / "fuzz" / \
            self.scenario.name
        # The search runs the agent sealed, as `harness fuzz` does: what it would write (its
        # example database, the repro) it hands back, and this process writes it.
        found = contained(lambda step: self._search(out, step), timeout=settings.case_timeout,
                          longer=_LONGER, tool_names=tool_env_names([self.scenario]),
                          agent=self.agent_spec, memory_mib=DEFAULT_CASE_MEMORY_MIB)
        write_handed_back(out, found)
        if found.get("failed") is not None:
            raise FuzzFound(str(found["failed"]))

    def _search(self, out: Path, step: StepTo) -> dict[str, object]:
        """In the sealed process: the search, and what it would have written, as data."""
        from harness._options import with_overrides
        from harness.fuzz import HandedBackDatabase, fuzz_scenario, made_repro, repro_command
        from harness.runner import FUZZING
        from harness.scenario import load_scenario

        settings = self.config.stash[_SETTINGS]
        # The file's own crash block bounds the search, whatever --harness-crash says.
        scenario = with_overrides(load_scenario(self.path), crash=None, seed=settings.seed)
        assert settings.fuzz_budget is not None
        seed = settings.seed or 0
        databases: list[HandedBackDatabase] = []

        def database_at(path: Path) -> HandedBackDatabase:
            databases.append(HandedBackDatabase(path))
            return databases[-1]

        outcome = fuzz_scenario(scenario, _display_path(self.path),
                                budget=settings.fuzz_budget, seed=seed, out=out,
                                agent=_agent_factory(self.config, self.scenario),
                                agent_spec=self.agent_spec, targets=self.targets,
                                tick=lambda: step(FUZZING), database_at=database_at)
        sent: dict[str, object] = {"failed": None, "repros": [],
                                   "databases": [db.sendable() for db in databases]}
        if outcome.found is None:
            return sent
        found_by = repro_command(_display_path(self.path), agent_spec=self.agent_spec,
                                 budget=settings.fuzz_budget, seed=seed, out=out)
        repro = made_repro(outcome.found, out, found_by=found_by, agent_spec=self.agent_spec,
                           targets=self.targets)
        violated = "; ".join(f"{v.invariant}: {v.message}" for v in outcome.found.violated)
        sent["repros"] = [{"name": repro.path.name, "text": repro.text}]
        sent["failed"] = (f"schedule {outcome.runs_to_find} of {scenario.name} violated "
                          f"{violated}\nrepro: {repro.path}\nreplay: {repro.replay}")
        return sent

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None,
    ) -> str | Any:
        from harness._errors import HarnessError

        # What the search found, or why its sealed process stopped: a line, no traceback.
        if isinstance(excinfo.value, FuzzFound | HarnessError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"fuzz {self.scenario.name}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    settings = session.config.stash.get(_SETTINGS, None)
    if settings is None or settings.results_dir is None or not settings.results:
        return
    from harness._output import write_results

    # Shards of a CI matrix copied into one folder keep their files apart too.
    shard = "" if settings.shard is None else \
        f"-shard{settings.shard.index}of{settings.shard.count}"
    write_results(settings.results_dir, settings.results,
                  suffix=f"{shard}-{_worker_id(session.config)}")


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


@pytest.fixture
def harness_server() -> Iterator[Callable[..., Any]]:
    """Serve scenarios over real HTTP on a free port of 127.0.0.1, stopped after the test.

    Call it with scenario paths (or loaded scenarios); it returns a
    :class:`harness.serve.RunningServer` with the ``url``, the agent's ``env``, the
    active ``world`` and the control endpoint's ``token`` (``control_headers``). Keep real
    waits short with ``time_scale``::

        def test_my_agent(harness_server):
            served = harness_server("scenarios/crash/unknown-send-is-inspected.yaml",
                                    time_scale=0.01)
            subprocess.run(["node", "agent.mjs"], env={**os.environ, **served.env})
            assert served.world.ledger.duplicates() == {}
    """
    from contextlib import ExitStack

    from harness.serve import serving

    with ExitStack() as stack:

        def start(*scenarios: Any, time_scale: float = 1.0, seed: int | None = None) -> Any:
            return stack.enter_context(serving(scenarios, time_scale=time_scale, seed=seed))

        yield start
