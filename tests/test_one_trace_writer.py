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
