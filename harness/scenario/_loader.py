"""Load scenario files: YAML in, validated :class:`Scenario` out, or located errors.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "hello.yaml"
    >>> _ = path.write_text("{name: hello, dialect: openai, model: [{turn: 1, text: Hi.}], "
    ...                     "expect: {stop_state: complete}}")
    >>> load_scenario(path).model[0].text
    'Hi.'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness._errors import FaultError, ScenarioError
from harness.scenario._diagnostics import located_details, scenario_errors
from harness.scenario._faults import FAULT_KINDS
from harness.scenario._model import (
    Scenario,
    attach_source,
    fault_turn_problems,
    source_of,
    undeclared_tool_problems,
)
from harness.scenario._problems import Problem, closest, did_you_mean, quoted, show, show_typed
from harness.scenario._source import SourceMap, located_error
from harness.scenario._tools import BEHAVIOUR_KINDS
from harness.scenario._yaml import parse_yaml, read_yaml

StrPath = str | PathLike[str]

# The keys a new scenario needs, named when the file has no mapping to check.
_REQUIRED_KEYS = "a mapping with at least 'name', 'dialect', 'model' and 'expect'"


def load_scenario(path: StrPath) -> Scenario:
    """Read and validate one scenario file; raise :class:`ScenarioError` listing every problem."""
    return _validated(*read_yaml(Path(path)))


def parse_scenario(raw: bytes, path: str) -> Scenario:
    """:func:`load_scenario` of a file's bytes already in memory; ``path`` names them in errors.

    >>> parse_scenario(b"{name: hi, dialect: openai, model: [{turn: 1, text: Hi.}], "
    ...                b"expect: {stop_state: complete}}", "hi.yaml").name
    'hi'
    """
    return _validated(*parse_yaml(raw, path))


def _validated(data: object, source: SourceMap) -> Scenario:
    path = source.path
    if data is None:
        raise ScenarioError(str(path), 1, 1, "the scenario file is empty",
                            expected=_REQUIRED_KEYS)
    if not isinstance(data, dict):
        line, column = source.position(())
        raise ScenarioError(str(path), line, column, "the top level is not a mapping",
                            value=data, got=show_typed(data),
                            expected=_REQUIRED_KEYS)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError.combine(_every_error(exc, data, source)) from None
    attach_source(scenario, source)
    return scenario


def _every_error(exc: ValidationError, data: dict[str, Any], source: SourceMap
                 ) -> list[ScenarioError]:
    """The validation errors and, when they kept the cross-field checks from running, the
    undeclared tools too: every mistake of a file in one pass."""
    errors = scenario_errors(exc, data, source)
    if not any(detail["loc"] == () for detail in exc.errors(include_url=False)):
        problems = [*undeclared_tool_problems(data), *fault_turn_problems(data)]
        errors += [source.error(problem) for problem in problems]
        errors += _errors_of_the_meant_kinds(data, source)
    return sorted(errors, key=lambda error: (error.line or 0, error.column or 0))


def _errors_of_the_meant_kinds(data: dict[str, Any], source: SourceMap) -> list[ScenarioError]:
    """A fault whose misspelt kind has a close match, checked as that kind.

    Its unknown kind is reported on its own; without this its missing or wrong fields
    would show only once the kind is fixed, one round later.
    """
    faults = data.get("faults")
    if not isinstance(faults, list):
        return []
    meant = {i: _close_kind(fault.get("kind")) for i, fault in enumerate(faults)
             if isinstance(fault, dict)}
    meant = {i: kind for i, kind in meant.items() if kind is not None}
    if not meant:
        return []
    fixed = [{**fault, "kind": meant[i]} if i in meant else fault
             for i, fault in enumerate(faults)]
    try:
        Scenario.model_validate({**data, "faults": fixed})
    except ValidationError as exc:
        details = [d for d in exc.errors(include_url=False)
                   if len(d["loc"]) > 2 and d["loc"][:2] in {("faults", i) for i in meant}]
        return located_details(details, {**data, "faults": fixed}, source)
    return []


def _close_kind(kind: object) -> str | None:
    if not isinstance(kind, str) or kind in FAULT_KINDS:
        return None
    return closest(kind, FAULT_KINDS)


def scenario_files(paths: Iterable[StrPath]) -> list[Path]:
    """The files ``paths`` name: files as given, folders searched for ``**/*.yaml`` and ``.yml``.

    A folder without any scenario is an error: a suite that finds nothing to run
    must not pass.
    """
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            files.append(path)
            continue
        found = sorted({*path.glob("**/*.yaml"), *path.glob("**/*.yml")})
        if not found:
            raise ScenarioError(str(path), None, None, "no scenario files in this folder",
                                expected="files ending in .yaml")
        files += found
    return files


def validate_paths(paths: Iterable[StrPath]) -> list[ScenarioError]:
    """Every error of every scenario file under ``paths``, one per mistake; ``[]`` if all load.

    Unlike :func:`load_scenario` it does not stop at the first bad file.
    """
    return _load_all(paths)[1]


def load_scenarios(paths: Iterable[StrPath]) -> list[Scenario]:
    """Load every scenario under ``paths`` in path order; one error lists all problems."""
    scenarios, errors = _load_all(paths)
    if errors:
        raise ScenarioError.combine(errors)
    return scenarios


def _load_all(paths: Iterable[StrPath]) -> tuple[list[Scenario], list[ScenarioError]]:
    _, loaded, errors = load_each(paths)
    return [scenario for scenario, _ in loaded], errors


def load_each(paths: Iterable[StrPath]
              ) -> tuple[list[Path], list[tuple[Scenario, Path]], list[ScenarioError]]:
    """The files under ``paths``, each scenario that loads with its file, and every error of
    every file (a folder with no scenario, a file that does not load, a name used twice)."""
    try:
        files = scenario_files(paths)
    except ScenarioError as exc:
        return [], [], exc.errors
    loaded: list[tuple[Scenario, Path]] = []
    errors: list[ScenarioError] = []
    for file in files:
        try:
            loaded.append((load_scenario(file), file))
        except ScenarioError as exc:
            errors += exc.errors
    return files, loaded, errors + duplicate_name_errors(s for s, _ in loaded)


def duplicate_name_errors(scenarios: Iterable[Scenario]) -> list[ScenarioError]:
    """An error for each scenario whose name an earlier one already uses (names are test ids)."""
    first_by_name: dict[str, Scenario] = {}
    errors = []
    for scenario in scenarios:
        first = first_by_name.setdefault(scenario.name, scenario)
        if first is not scenario:
            where = _where(first, ("name",))
            errors.append(_located(scenario, Problem(
                ("name",), "scenario name is already used", scenario.name, show(scenario.name),
                f"a name unique in the suite ({where} has it)")))
    return errors


def check_crash_points(scenario: Scenario, recorded: Iterable[str]) -> None:
    """Raise :class:`ScenarioError` if ``crash.points`` names a point the recorded run lacks.

    ``recorded`` are the persistence point ids a recording run produced. The
    error is placed on the offending list item when the scenario came from a
    file, in the same format as a loading error.
    """
    points = scenario.crash.points
    if isinstance(points, str):
        return
    known = list(recorded)
    problems = [
        Problem(("crash", "points", index), "crash point was never reached in the recorded run",
                point, show(point), _known_points(known), did_you_mean(point, known))
        for index, point in enumerate(points)
        if point not in known
    ]
    if problems:
        raise ScenarioError.combine([_located(scenario, problem) for problem in problems])


def check_targets(scenario: Scenario, missing: Callable[[str], str | None]) -> None:
    """Raise :class:`ScenarioError` for each tool ``target`` that ``missing`` says is unusable.

    ``missing(spec)`` returns why the function cannot be had, or None; the
    error is placed on the target's line, so a typo is found before a case runs.
    """
    problems = []
    for name, tool in scenario.tools.items():
        why = missing(tool.target) if tool.target else None
        if why is not None:
            problems.append(Problem(("tools", name, "target"), "the target cannot be used",
                                    tool.target, show(tool.target),
                                    "'module:function' naming a function of the agent's code",
                                    why))
    if problems:
        raise ScenarioError.combine([_located(scenario, problem) for problem in problems])


def check_call_arguments(scenario: Scenario, targets: Mapping[str, str],
                         refused: Callable[[str, Mapping[str, Any]], str | None]) -> None:
    """Raise :class:`ScenarioError` for each scripted call whose arguments its tool's target
    cannot take by name.

    ``targets`` maps a tool to its ``module:function``; ``refused(spec, args)`` says why
    the function cannot be called with ``args``, or None. A wrong argument name would
    otherwise surface mid-case as a ``TypeError``; here it is on the call's line.
    """
    problems = [
        Problem(("model", turn, "calls", index, "args"),
                f"the arguments do not fit {targets[call.tool]}, the target of tool "
                f"{call.tool!r}", call.args, show(call.args),
                "the function's parameter names", why)
        for turn, reply in enumerate(scenario.model)
        for index, call in enumerate(reply.calls)
        if call.tool in targets
        and (why := refused(targets[call.tool], call.args)) is not None
    ]
    if problems:
        raise ScenarioError.combine([_located(scenario, problem) for problem in problems])


def check_blocking_behaviours(scenario: Scenario, blocking: Collection[str],
                              loop_bound: Collection[str]) -> None:
    """Raise :class:`ScenarioError` for a ``blocking`` tool whose behaviour is ``loop_bound``.

    ``blocking`` are the tools the agent reaches through a plain (not async) function:
    called with no event loop, they cannot wait on one. The error is on the behaviour's
    line, before any case runs.
    """
    problems = []
    for name in sorted(blocking):
        tool = scenario.tools.get(name)
        kind = tool.behaviour.kind if tool is not None and tool.behaviour is not None else None
        if kind in loop_bound:
            allowed = [k for k in BEHAVIOUR_KINDS if k not in loop_bound]
            problems.append(Problem(
                ("tools", name, "behaviour", "kind"), "the behaviour waits on the event loop, "
                "but the tool's target is a plain function called from blocking code", kind,
                show(kind), quoted(allowed), "Make the target async, or give the tool another "
                "behaviour"))
    if problems:
        raise ScenarioError.combine([_located(scenario, problem) for problem in problems])


_SHOWN_POINTS = 10


def fault_error(scenario: Scenario, error: FaultError) -> ScenarioError:
    """The scenario's line for a fault the fake provider refused mid-run (a split past the end …).

    ``error`` says the turn, attempt and position among that key's faults; this
    finds the declaration and puts the provider's reason on its line.
    """
    keyed = [i for i, f in enumerate(scenario.faults)
             if (f.at.turn, f.at.attempt) == (error.turn, error.attempt)]
    index = keyed[error.index] if error.index < len(keyed) else 0
    field = error.field.rpartition(".")[2]
    fault = scenario.faults[index] if scenario.faults else None
    loc: tuple[str | int, ...] = ("faults", index)
    if fault is not None and field in type(fault).model_fields:
        loc = (*loc, field)
    problem = Problem(loc, f"the {error.kind!r} fault does not fit the stream it met at turn "
                      f"{error.turn}, attempt {error.attempt}", error.value, show(error.value),
                      error.allowed)
    return _located(scenario, problem)


def _known_points(known: list[str]) -> str:
    if len(known) <= _SHOWN_POINTS:
        return quoted(known, "none (the recorded run reached no persistence point)")
    return f"{quoted(known[:_SHOWN_POINTS])} (and {len(known) - _SHOWN_POINTS} more)"


def scenario_error(scenario: Scenario, loc: tuple[str | int, ...], problem: str, *,
                   hint: str = "") -> ScenarioError:
    """``problem`` as an error at ``loc`` of ``scenario``'s file (``file:line:col: field: …``),
    for a check made outside the loader (``harness validate``, from a run of the agent)."""
    return _located(scenario, Problem(loc, problem, hint=hint))


def _located(scenario: Scenario, problem: Problem) -> ScenarioError:
    source = source_of(scenario)
    if source is not None:
        return source.error(problem)
    return located_error(f"<scenario {scenario.name}>", lambda *_, **__: None, problem)


def _where(scenario: Scenario, loc: tuple[str, ...]) -> str:
    source = source_of(scenario)
    if source is None:
        return f"<scenario {scenario.name}>"
    line, column = source.position(loc)
    return f"{source.path}:{line}:{column}"
