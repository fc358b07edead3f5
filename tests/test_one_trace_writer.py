"""A case's trace is written in one module, for cases run in process and served alike.

Two writers drift: the served trace once lacked a field the in-process one had, and
the checks then judged the two differently. So the library builds a ``Trace`` in
:mod:`harness.runner._trace_writer` alone; everywhere else a trace is only read, or
renumbered from one that module wrote (``dataclasses.replace``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("harness", "fakes", "reports")
WRITER = Path("harness/runner/_trace_writer.py")


def _modules_calling(name: str) -> set[Path]:
    """The library modules with a call of ``name(...)`` or ``something.name(...)``."""
    found: set[Path] = set()
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and _called(node.func) == name:
                    found.add(path.relative_to(ROOT))
    return found


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def test_only_the_trace_writer_builds_a_trace() -> None:
    assert _modules_calling("Trace") == {WRITER}


def test_the_runner_and_the_server_both_call_the_writer() -> None:
    assert _modules_calling("write_trace") == {Path("harness/runner/_run.py"),
                                               Path("harness/serve/_trace.py")}


def _keywords(path: Path, name: str) -> set[str]:
    """The keyword arguments of every call of ``name(...)`` in the module at ``path``."""
    return {k.arg for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and _called(node.func) == name
            for k in node.keywords if k.arg is not None}


def test_what_the_world_recorded_is_added_to_the_extra_by_the_writer_alone() -> None:
    # The served trace once lacked the stop sequences the in-process one had (I8 then
    # failed an --exec agent that put one back): a field of ``extra`` the world recorded
    # is set in world_extra, never beside it by one of the writer's callers.
    tree = ast.parse((ROOT / WRITER).read_text(encoding="utf-8"))
    [world_extra] = [node for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef) and node.name == "world_extra"]
    written = {k.arg for node in ast.walk(world_extra) if isinstance(node, ast.Call)
               for k in node.keywords if k.arg is not None}
    assert {"world_events", "stop_sequences", "child_environments"} <= written
    for caller in _modules_calling("TraceExtra"):
        assert not _keywords(caller, "TraceExtra") & written, caller
