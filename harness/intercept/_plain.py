"""A user's unchanged ``main(prompt)`` as an agent the harness can crash and judge (DESIGN §4).

The agent is a plain function that knows nothing of the harness::

    async def main(prompt: str) -> str      # or: def main(prompt: str) -> str

Each incarnation (the first run, and each restart after a simulated crash)
calls it afresh, inside a case where

* the packages of the entry point and of the scenario's tool targets are
  imported afresh, so module-level state does not survive a crash (a crash
  kills the process; a restart imports the code again);
* every ``httpx``/``httpx2`` client with its default transport reaches the fake
  provider, and the variables each dialect's SDK reads (``OPENAI_BASE_URL``,
  ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``,
  ``GOOGLE_GEMINI_BASE_URL``, ``GOOGLE_API_KEY``, and litellm's ``GEMINI_API_BASE``;
  ``harness.ports.SPECS``) name it
  (:mod:`harness.intercept._network`); nothing else of the harness's environment is
  there but an allow-list of paths and settings (:mod:`harness._environment`);
* the agent's own file I/O goes to a fake file system on the crash disk, in a
  working folder that survives restarts; the installed packages, the
  interpreter's files and the agent's own code are read through, read-only
  (:mod:`harness.intercept._files`); the SQLite databases it opens live on the
  crash disk too (:mod:`harness.intercept._sqlite`);
* no process starts from the agent's code (:mod:`harness.intercept._processes`);
* ``time`` follows the virtual clock (:mod:`harness.intercept._time`);
* the functions named by tool targets are counting tools
  (:mod:`harness.intercept._targets`).

What ``main`` returns is the final answer (``complete``): text, or the structured
output a framework hands back (a pydantic model, a dataclass, a dict); returning an
:class:`~harness.ports.AgentOutcome` reports more and takes precedence. An
exception ends the run; :func:`stop_state_for` maps the official SDKs' errors
to stop states (auth → ``blocked``, rate limit or quota → ``usage_limited``,
connection, timeout or 5xx → ``infra_paused``, anything else → ``failed``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import importlib
import importlib.machinery
import inspect
import json
import os
import pathlib
import re
import sys
import traceback
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from operator import methodcaller
from types import CodeType
from typing import Any, Final, Literal, Protocol, TypeVar

from fakes import CrashDisk, IncomingRequest, SimulatedCrash, VirtualClock
from harness._environment import agent_environ
from harness._errors import AgentEntryError, HarnessError
from harness.intercept._aiosqlite import aiosqlite_in_turn
from harness.intercept._frameworks import (
    process_state_dropped,
    schemas_derived_once,
    steps_found_once,
)
from harness.intercept._intercepted import intercepted_network
from harness.intercept._network import Route, Served
from harness.intercept._pools import executor_jobs_in_turn, pools_run_in_turn
from harness.intercept._processes import no_processes
from harness.intercept._sdk_params import sdk_params_walked_cheaply
from harness.intercept._seeded import seeded_randomness
from harness.intercept._targets import (
    NamedByModule,
    Target,
    import_from_cwd,
    replaced_targets,
)
from harness.intercept._telemetry import absorbed, telemetry_answer
from harness.intercept._time import threads_the_clock_sees, virtual_event_loops, virtual_time
from harness.ports import (
    SPECS,
    AgentOutcome,
    CancelAck,
    CancelRequest,
    RecoveryReport,
    StopState,
    Task,
)

#: Environment the agent sees: the SDKs read their base URL and key from here.
FAKE_API_KEY: Final = "sk-harness-fake-key"
PROVIDER_ENVIRONMENT: Final[dict[str, str]] = {
    **{name: value
       for spec in SPECS.values()
       for name, value in zip(spec.environment, (spec.origin + spec.sdk_base, FAKE_API_KEY),
                              strict=True)},
    **{name: spec.origin + path for spec in SPECS.values()
       for name, path in spec.other_environment},
}
#: Packages never imported afresh: the harness itself and the standard library.
_NEVER_RELOADED: Final = frozenset({"harness", "fakes", "reports"}) | sys.stdlib_module_names


class CaseWorld(Protocol):
    """What an unchanged agent's incarnation needs of the case's world."""

    clock: VirtualClock
    disk: CrashDisk
    seed: int

    def route(self, incarnation: int) -> Route: ...

    def call_tool(self, tool: str, arguments: dict[str, Any], incarnation: int
                  ) -> Awaitable[Any]: ...

    def call_tool_blocking(self, tool: str, arguments: dict[str, Any], incarnation: int
                           ) -> Any: ...

    def files(self) -> FileSystem: ...

    def databases(self) -> Databases: ...


class FileSystem(Protocol):
    """The agent's own files (see :mod:`harness.intercept._files`)."""

    def active(self, generation: int, *, sources: Iterable[str] = ()) -> Any: ...


class Databases(Protocol):
    """The agent's SQLite databases (see :mod:`harness.intercept._sqlite`)."""

    def active(self, generation: int) -> Any: ...


@dataclass(frozen=True)
class PlainEntry(NamedByModule):
    """``MODULE:CALLABLE`` naming a plain ``main(prompt) -> str``, sync or async."""

    spec: str
    targets: tuple[Target, ...] = ()
    tool_map: tuple[tuple[str, str], ...] = ()
    """``--target`` pairs (scenario tool, ``module:function``): they win over the scenario's."""
    tool_map_source: str = field(default="--target", repr=False)
    """Where the pairs came from (``--target``, ``ini harness_targets``), for an error."""

    def with_targets(self, targets: tuple[Target, ...]) -> PlainEntry:
        """This entry with a case's tool targets, the ``tool_map`` overriding them."""
        mapped = dict(self.tool_map)
        chosen = {t.tool: Target(t.tool, mapped.get(t.tool, t.spec)) for t in targets}
        return replace(self, targets=tuple(chosen.values()))

    def with_tool_map(self, tool_map: tuple[tuple[str, str], ...],
                      source: str = "--target") -> PlainEntry:
        return replace(self, tool_map=tool_map, tool_map_source=source)

    def load(self) -> Callable[..., Any]:
        """Import the entry's module and return ``main``."""
        import_from_cwd()
        owner: Any = imported_writing_aside(lambda: importlib.import_module(self.module))
        for part in self.attribute.split("."):
            owner = getattr(owner, part, None)
        if not callable(owner):
            raise AgentEntryError(f"--agent {self.spec}: {self.module} has no callable "
                                  f"{self.attribute!r}")
        return owner  # type: ignore[no-any-return]

    def sources(self) -> tuple[str, ...]:
        """Where the imported packages' code lives: the agent reads its own files there."""
        found: list[str] = []
        for name in sorted(self.packages()):
            module = sys.modules.get(name)
            folders, file = getattr(module, "__path__", None), getattr(module, "__file__", None)
            if folders is not None:
                found.extend(str(f) for f in folders)
            elif file:
                found.append(os.path.dirname(str(file)))
        return tuple(found)

    def packages(self) -> frozenset[str]:
        """The top-level packages imported afresh for each incarnation."""
        names = {self.module.split(".")[0]} | {t.module.split(".")[0] for t in self.targets}
        return frozenset(n for n in names if n not in _NEVER_RELOADED)


class PlainAgent:
    """One incarnation of an unchanged agent; see the module docstring.

    The runner calls :meth:`run_with`: the case's interception is entered with no
    event loop running, the agent's modules are imported inside it (module-level
    code included), and an async ``main`` is then driven on the world's clock
    while a blocking one runs as it is (and may start loops of its own, which
    run on the same clock).
    """

    def __init__(self, entry: PlainEntry, world: CaseWorld, incarnation: int) -> None:
        self._entry = entry
        self._world = world
        self._incarnation = incarnation
        # The task running an async main, while it runs; the target that cancelled it.
        self._task: asyncio.Task[Any] | None = None
        self._cancelled: str | None = None

    def cancel(self, request: CancelRequest) -> CancelAck:
        """A turn or session cancel cancels the task running an async ``main``.

        That is what a user's Ctrl-C does to ``asyncio.run(main(...))``, and what a
        server does to a request's task: ``CancelledError`` is raised where ``main``
        awaits, and the run stops ``cancelled`` once it has unwound. A plain agent
        has no handle on one attempt, call or job, and a blocking ``main`` runs no
        task to cancel: those are answered ``unsupported``.
        """
        if request.target not in ("turn", "session"):
            return CancelAck("unsupported", f"a plain main(prompt) is cancelled as a whole "
                             f"(turn or session), not by {request.target}")
        if self._cancelled is not None:
            return CancelAck("already_cancelled", f"its task was cancelled by a "
                             f"{self._cancelled} cancel")
        if self._task is None or self._task.done():
            return CancelAck("unsupported", "no task of an async main(prompt) is running")
        self._cancelled = request.target
        self._task.cancel()
        return CancelAck("cancelled", "the task running main(prompt) was cancelled")

    async def _as_task(self, value: Coroutine[Any, Any, Any]) -> Any:
        """Await ``value`` as a task of its own, so a cancel can reach it (:meth:`cancel`)."""
        self._task = asyncio.ensure_future(value)
        try:
            return await self._task
        except asyncio.CancelledError:
            if self._cancelled is None or not self._task.cancelled():
                raise  # not our cancel, or main caught it and raised again: its own way out
            return AgentOutcome("cancelled", f"main(prompt) was cancelled by a "
                                f"{self._cancelled} cancel", (), None, None, 0)
        finally:
            self._task = None

    async def recover(self) -> RecoveryReport:
        """A plain agent recovers inside ``main``; there is nothing to call separately."""
        return RecoveryReport()

    async def run(self, task: Task) -> AgentOutcome:
        """The :class:`~harness.ports.Agent` form, for an async ``main`` under a running loop."""
        with self._inside() as main:
            try:
                value = main(task.prompt)
                if inspect.isawaitable(value):
                    value = await value
            except SimulatedCrash:
                raise
            except (Exception, SystemExit) as error:
                return outcome_of_error(error, self._incarnation)
        return outcome_of_value(value)

    def run_with(self, task: Task, drive: Callable[[Coroutine[Any, Any, Any]], Any],
                 *, cancellable: bool = False) -> AgentOutcome:
        """Run ``main`` once; ``drive`` runs a coroutine to its end on the world's clock.

        ``cancellable``: an async ``main`` runs as a task of its own, which :meth:`cancel`
        can reach (only then: a crash case starts from a recorded run's copy of the
        world only where the agent runs in one task).
        """
        with self._inside() as main:
            try:
                value = main(task.prompt)
                if inspect.iscoroutine(value):
                    value = drive(self._as_task(value) if cancellable else value)
            except (SimulatedCrash, HarnessError):
                raise  # the crash of the case, or the harness's own guard
            except (Exception, SystemExit) as error:
                return outcome_of_error(error, self._incarnation)
        return outcome_of_value(value)

    @contextmanager
    def _inside(self) -> Iterator[Callable[..., Any]]:
        world, number = self._world, self._incarnation
        with ExitStack() as stack:
            stack.enter_context(agent_environ(PROVIDER_ENVIRONMENT))
            stack.enter_context(pythons_own_warning_filters())
            stack.enter_context(virtual_time(world.clock))
            stack.enter_context(seeded_randomness(world.seed, incarnation=number))
            stack.enter_context(virtual_event_loops(world.clock))
            stack.enter_context(threads_the_clock_sees())
            stack.enter_context(pools_run_in_turn())
            stack.enter_context(executor_jobs_in_turn(world.clock))
            stack.enter_context(aiosqlite_in_turn())
            stack.enter_context(intercepted_network(world.route(number)))
            stack.enter_context(no_processes())
            stack.enter_context(_fresh_packages(self._entry.packages()))
            stack.enter_context(process_state_dropped())
            stack.enter_context(no_bytecode_written())
            stack.enter_context(compiled_once())
            stack.enter_context(replaced_targets(
                self._entry.targets,
                lambda tool, args: world.call_tool(tool, args, number),
                lambda tool, args: world.call_tool_blocking(tool, args, number)))
            stack.enter_context(schemas_derived_once())
            stack.enter_context(steps_found_once())
            stack.enter_context(sdk_params_walked_cheaply())
            # Imported before the agent's files are swapped in: the import system
            # (an editable install's finder among it) reads the real disk.
            main = self._entry.load()
            stack.enter_context(world.files().active(number, sources=self._entry.sources()))
            stack.enter_context(world.databases().active(number))
            yield main


# The warning filters a Python process starts with (no -W, no PYTHONWARNINGS), first
# match first: what the agent meets in production.
_PYTHONS_OWN_WARNING_FILTERS: Final[tuple[tuple[Literal["default", "ignore"],
                                                type[Warning], str], ...]] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


@contextmanager
def pythons_own_warning_filters() -> Iterator[None]:
    """The agent's code meets Python's own warning filters, not those of the process the
    harness runs in: under pytest's ``filterwarnings = error`` (a common setting, and the
    pytest plugin's workers inherit it) a framework's DeprecationWarning, which its users
    see printed once, was raised in the agent and failed the case."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_PYTHONS_OWN_WARNING_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)
        yield


@contextmanager
def guest_factory(world: CaseWorld, incarnation: int, sources: Iterable[str] = ()
                  ) -> Iterator[None]:
    """What the code of a factory-form agent (``--agent module:factory``) meets in a case.

    Such an agent is handed the ports, but nothing stops its code from writing
    files, opening sockets or starting processes beside them: its file I/O goes to
    the crash disk as a plain agent's does (``sources``, its own code's folders,
    read through), so do its SQLite databases, its HTTP clients reach the world, any
    other socket is refused and no process starts. Time, randomness and its modules
    stay as they are: the ports give it the world's clock and seed.
    """
    with ExitStack() as stack:
        stack.enter_context(intercepted_network(world.route(incarnation)))
        stack.enter_context(no_processes())
        stack.enter_context(world.files().active(incarnation, sources=tuple(sources)))
        stack.enter_context(world.databases().active(incarnation))
        yield


@contextmanager
def provider_environment() -> Iterator[None]:
    """The environment and the network an agent sees in a case, for importing its code
    outside one (to check its entry point): a fetch at import time is refused, or
    answered when it is known telemetry, and never reaches the real network."""
    with agent_environ(PROVIDER_ENVIRONMENT), intercepted_network(_NoWorld()), \
            no_bytecode_written():
        yield


_T = TypeVar("_T")


def imported_writing_aside(load: Callable[[], _T]) -> _T:
    """``load()``, an import of the agent's code; tried again with its files on a throwaway
    disk when it failed writing to the read-only real one.

    A library may write a file when first imported: Haystack makes
    ``~/.haystack/config.yaml`` (its telemetry's user id), CrewAI
    ``~/.local/share/<the working folder's name>``. In a sealed worker every real mount
    is read-only, so the import failed with ``EROFS`` and the agent was refused as a bad
    ``--agent``, or its case failed on the agent's import. The second try runs under a
    fake file system (the real files read through, as in a case), whose writes are kept
    nowhere; what it imported stays imported. Libraries are not imported under a fake
    file system first: some (pydantic-ai's) do not import there.

    What the first try imported in full stays imported (:func:`_forget_half_made`): a C
    extension cannot be loaded twice in a process (numpy refused its second load, and
    CrewAI with it). Under the fake, ``from pathlib import Path`` gives pyfakefs's own
    class, of which pydantic builds no model (CrewAI's events have a path field): it
    builds it as of the real class (:func:`_paths_pydantic_builds`), and every module the
    second try imported gets the real classes back when it is done, as a first import on
    a disk that already held the files would have given it.
    """
    before = set(sys.modules)
    try:
        return load()
    except OSError as error:
        if error.errno != errno.EROFS:
            raise
        refused = error
    _forget_half_made(before)
    before = set(sys.modules)
    try:
        with _throwaway_files(), _paths_pydantic_builds():
            loaded = load()
    except Exception:
        # A library that cannot be imported under a fake file system at all failed there
        # for a reason of the fake's: the refused write is what the user can act on.
        _forget_modules_since(before)
        raise refused from None
    _real_paths_back(set(sys.modules) - before)
    return loaded


def _forget_modules_since(before: set[str]) -> None:
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _forget_half_made(before: set[str]) -> None:
    """Forget what a failed import left half made: each module it imported whose package
    it left unimported (Python drops the modules whose code failed, not their submodules
    that ran to the end). Imported again, such a package would not get its submodule as an
    attribute (Haystack's ``haystack.logging``). A package imported in full stays with its
    modules, as after any failed import: a C extension cannot be loaded twice in a process
    (numpy, under CrewAI)."""
    for name in set(sys.modules) - before:
        parts = name.split(".")
        if any(".".join(parts[:end]) not in sys.modules for end in range(1, len(parts))):
            del sys.modules[name]


def _fake_path_classes() -> dict[type, type]:
    """pyfakefs's path classes, each with the real ``pathlib`` class it stands for."""
    from pyfakefs import fake_pathlib

    fakes = fake_pathlib.FakePathlibModule
    real = _REAL_PATH_CLASSES
    found: dict[type, type] = {fake_pathlib.FakePath: real["Path"]}
    for name in _PATH_CLASS_NAMES:
        fake = getattr(fakes, name, None)
        if isinstance(fake, type) and fake.__module__.startswith("pyfakefs"):
            found.setdefault(fake, real[name])
    return found


_PATH_CLASS_NAMES: Final = ("Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath",
                            "PureWindowsPath")
# Taken when the harness is imported, never under a fake file system.
_REAL_PATH_CLASSES: Final[dict[str, type]] = {name: getattr(pathlib, name)
                                               for name in _PATH_CLASS_NAMES}


@contextmanager
def _paths_pydantic_builds() -> Iterator[None]:
    """pydantic builds a model with a field of pyfakefs's path classes as of the real one.

    pydantic knows ``pathlib.Path`` by identity, and refused a class of its own
    (``Unable to generate pydantic-core schema for FakePath``): CrewAI, imported under
    the throwaway disk, failed on its events' ``skill_path: Path``. The schema built is
    the real class's, so what the model holds is a real path, as it would be had the
    library been imported on the real disk.
    """
    classes = _fake_path_classes()

    def schema(cls: type, _source: object, handler: Any) -> Any:
        return handler.generate_schema(classes.get(cls, _REAL_PATH_CLASSES["Path"]))

    hook = "__get_pydantic_core_schema__"
    saved = {cls: cls.__dict__[hook] for cls in classes if hook in cls.__dict__}
    for cls in classes:
        setattr(cls, hook, classmethod(schema))
    try:
        yield
    finally:
        for cls in classes:
            if cls in saved:
                setattr(cls, hook, saved[cls])
            else:
                delattr(cls, hook)


def _real_paths_back(names: Iterable[str]) -> None:
    """Give each module of ``names`` the real ``pathlib`` classes in place of pyfakefs's:
    imported under the throwaway disk, ``from pathlib import Path`` bound pyfakefs's class,
    which outside a case works on that disk, long gone."""
    classes = _fake_path_classes()
    for name in names:
        module = sys.modules.get(name)
        for attr, value in list(vars(module).items() if module is not None else ()):
            real = classes.get(value) if isinstance(value, type) else None
            if real is not None:
                setattr(module, attr, real)


@contextmanager
def _throwaway_files() -> Iterator[None]:
    """The real files read through, as in a case, and whatever is written kept nowhere."""
    from harness.intercept._files import AgentFiles

    if AgentFiles.current_dir() is not None:  # inside a case: the world's files already
        yield
        return
    # The working folder where it really is: a library that names a folder after it at
    # import (CrewAI's ~/.local/share/<its name>) names it as on the real disk.
    here = os.getcwd()
    files = AgentFiles(CrashDisk(), workdir=here, start_folder=here, keep_modules=True)
    # Every folder the import system looks in, read through: the agent's code is there.
    sources = tuple(dict.fromkeys(os.path.abspath(p or ".") for p in sys.path
                                  if os.path.isdir(p or ".")))
    with files.active(1, sources=sources):
        yield


@contextmanager
def no_bytecode_written() -> Iterator[None]:
    """Import without writing ``__pycache__`` beside the agent's code, on the real disk.

    The import system would cache each module it compiles next to its source; the
    agent's own modules are imported afresh for every incarnation, and its folder
    must be as it was after a run. Caches already there are still read.
    """
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


# Compiled code of the agent's own modules, by (file, source): the same source compiles
# to the same code object, which each incarnation runs in a fresh module.
_COMPILED: OrderedDict[tuple[str, bytes, int], CodeType] = OrderedDict()
_COMPILED_KEPT = 512


@contextmanager
def compiled_once() -> Iterator[None]:
    """Compile each source the agent imports once per process, not once per incarnation.

    The agent's own modules are imported afresh for every incarnation and, with no
    bytecode cache written (:func:`no_bytecode_written`), compiled afresh too: for a
    small agent that was a third of a restart. Module-level code still runs every
    time; only ``compile`` is skipped when the file's bytes are the ones compiled.
    """
    loader = importlib.machinery.SourceFileLoader
    compile_source = loader.source_to_code
    own = loader.__dict__.get("source_to_code")  # None: inherited from SourceLoader

    def source_to_code(self: Any, data: Any, path: Any, *, _optimize: int = -1) -> CodeType:
        if not isinstance(data, bytes) or not isinstance(path, str):
            return compile_source(self, data, path, _optimize=_optimize)
        key = (path, data, _optimize)
        code = _COMPILED.get(key)
        if code is None:
            code = _COMPILED[key] = compile_source(self, data, path, _optimize=_optimize)
            while len(_COMPILED) > _COMPILED_KEPT:
                _COMPILED.popitem(last=False)
        return code

    loader.source_to_code = source_to_code  # type: ignore[method-assign]
    try:
        yield
    finally:
        if own is None:
            del loader.source_to_code
        else:
            loader.source_to_code = own  # type: ignore[method-assign]


class _NoWorld:
    """The network outside any case: no fake provider, telemetry answered, the rest refused."""

    def __init__(self) -> None:
        self.clock = VirtualClock()

    def serve(self, request: IncomingRequest) -> Served | None:
        entry = absorbed(request.method, request.url)
        return None if entry is None else telemetry_answer(entry)

    def refuse(self, what: str, library: str) -> None:
        """Nothing to record: no case is running, and the import goes on without it."""


@contextmanager
def _fresh_packages(packages: frozenset[str]) -> Iterator[None]:
    """Forget ``packages`` before and after, so each incarnation imports them anew."""
    _forget(packages)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        _forget(packages)


def _forget(packages: frozenset[str]) -> None:
    prefixes = tuple(f"{package}." for package in packages)
    # sys.modules holds thousands of names: a first cut in C (filter with a bound
    # str.startswith over the bare names), then the exact test on the few left.
    near = filter(methodcaller("startswith", tuple(packages)), list(sys.modules))
    for name in [n for n in near if n in packages or n.startswith(prefixes)]:
        del sys.modules[name]


# ------------------------------------------------------------------ outcomes


def outcome_of_value(value: object) -> AgentOutcome:
    """``main``'s return value as an outcome: a str, or a structured output, is the final answer.

    Frameworks hand back structured output (a pydantic model, a dataclass, a dict)
    as the run's result; returning it is as complete as returning text. ``None``
    is not an answer: a ``main`` that forgot its ``return`` ran to no end.

    >>> outcome_of_value({"city": "Paris"}).final_text
    '{"city": "Paris"}'
    >>> outcome_of_value(None).stop_state
    'failed'
    """
    if isinstance(value, AgentOutcome):
        return value
    if value is None:
        return AgentOutcome("failed", "main returned None, not the final answer (a str, a "
                            "structured output) or an AgentOutcome", (), None, None, 0)
    text = value if isinstance(value, str) else _as_text(value)
    return AgentOutcome("complete", "main returned its final answer", (), None, None, 0,
                        final_text=text)


def _as_text(value: object) -> str:
    """A structured output as the text a report shows: JSON where it has a JSON form."""
    dump_json = getattr(value, "model_dump_json", None)
    if callable(dump_json):
        return str(dump_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def outcome_of_error(error: BaseException, incarnation: int) -> AgentOutcome:
    """An exception that ended ``main``, as a stop state with the agent's own traceback."""
    stop = stop_state_for(error)
    text = agent_traceback(error)
    reason = without_native_noise(f"the agent raised {type(error).__name__}: {error}")
    return AgentOutcome(stop, reason, (), None, None, 0,
                        infra_failure=stop == "infra_paused",
                        agent_traceback=f"incarnation {incarnation} (the agent's code):\n{text}")


# The harness's own code: its frames in an agent's traceback are interception machinery.
_HARNESS_DIRS: Final = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(sys.modules["fakes"].__file__ or "")) + os.sep,
)


def agent_traceback(error: BaseException) -> str:
    """The traceback of ``error`` without the harness's own frames (interception machinery).

    What is left is the agent's code and the libraries it called, so the
    report points at the line of the agent that failed.
    """
    shown = traceback.TracebackException.from_exception(error)
    for part in _chain(shown):
        part.stack = traceback.StackSummary.from_list(
            [frame for frame in part.stack if not frame.filename.startswith(_HARNESS_DIRS)])
    return without_native_noise("".join(shown.format()).rstrip())


_UUID: Final = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_ADDRESS: Final = re.compile(r"\bat 0x[0-9a-f]+\b")


def without_native_noise(text: str) -> str:
    """``text`` with what native code draws from the real clock and the OS renamed.

    Ids a library makes in native code (LangGraph's task ids come from a Rust
    ``uuid7`` reading the real clock and OS randomness) and object addresses
    differ between two runs of one case, though nothing the agent did differs:
    each distinct UUID becomes ``uuid-N`` in order of appearance, each address
    ``at 0x…``, so the trace (and its digest) stays the same run after run.

    >>> without_native_noise("task 'agent' id 'bb89d530-a6f0-7e0e-d95d-06b8fa2dd8be' "
    ...                      "<object at 0x7f2a>")
    "task 'agent' id 'uuid-1' <object at 0x…>"
    """
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        return names.setdefault(match.group(), f"uuid-{len(names) + 1}")

    return _ADDRESS.sub("at 0x…", _UUID.sub(name, text))


def _chain(exception: traceback.TracebackException) -> Iterator[traceback.TracebackException]:
    seen: set[int] = set()
    current: traceback.TracebackException | None = exception
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


_AUTH: Final = frozenset({"AuthenticationError", "PermissionDeniedError"})
_LIMITED: Final = frozenset({"RateLimitError"})
_INFRA: Final = frozenset({
    "APIConnectionError", "APITimeoutError", "InternalServerError", "OverloadedError",
    "ServiceUnavailableError", "TransportError", "TimeoutException", "TimeoutError",
    "ConnectionError",
})


def stop_state_for(error: BaseException) -> StopState:
    """The stop state an exception from the agent (or the SDK under it) stands for.

    The error, then its causes, are tried in turn: the first that is an auth,
    rate-limit or infrastructure error by class name (``openai``, ``anthropic``,
    ``httpx``, ``httpx2`` and pydantic-ai share these names) or by HTTP status
    decides; otherwise ``failed``.

    >>> stop_state_for(TimeoutError())
    'infra_paused'
    >>> stop_state_for(ValueError("bad json"))
    'failed'
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        decided = _stop_state_of_one(current)
        if decided is not None:
            return decided
        current = current.__cause__ or current.__context__
    return "failed"


def _google_error(error: BaseException) -> bool:
    """Whether ``error`` is of a Google client library (``google.genai.errors.APIError``,
    Google ADK's subclasses of it), whose HTTP status is its ``code``."""
    return any(cls.__module__.startswith("google.") for cls in type(error).__mro__)


def _stop_state_of_one(error: BaseException) -> StopState | None:
    names = {cls.__name__ for cls in type(error).__mro__}
    status = getattr(error, "status_code", None)
    if status is None and _google_error(error):
        status = getattr(error, "code", None)  # google-genai's APIError: the HTTP status
    status = status if isinstance(status, int) else None
    if names & _AUTH or status in (401, 403):
        return "blocked"
    if names & _LIMITED or status == 429:
        return "usage_limited"
    if names & _INFRA or (status is not None and status >= 500):
        return "infra_paused"
    return None
