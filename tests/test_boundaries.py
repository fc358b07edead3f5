"""The import boundaries of DESIGN §2 and §4, read from the source, not from a run.

The fakes implement the ports of :mod:`harness.ports`; they must never reach into
the reference agent (:mod:`harness.agent`), whose internals may move at any time.
Inside a package, modules import one another without a circle, so each can be
read, and imported, on its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, anywhere in the file (also inside functions)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules(package: str) -> dict[str, Path]:
    folder = ROOT.joinpath(*package.split("."))
    return {module_name(p): p for p in sorted(folder.rglob("*.py"))}


def is_within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_fakes_never_import_the_reference_agent() -> None:
    found = [
        f"{name} imports {target}"
        for name, path in package_modules("fakes").items()
        for target in imported_modules(path)
        if is_within(target, "harness.agent")
    ]
    assert found == []


def _outside_the_ports(target: str) -> bool:
    # The ports may raise the harness's own errors, and nothing else of either side.
    allowed = ("harness.ports", "harness._errors")
    if is_within(target, "fakes"):
        return True
    return is_within(target, "harness") and target != "harness" and not any(
        is_within(target, package) for package in allowed
    )


def test_the_ports_import_neither_side() -> None:
    found = [
        f"{name} imports {target}"
        for name, path in package_modules("harness.ports").items()
        for target in imported_modules(path)
        if _outside_the_ports(target)
    ]
    assert found == []


def _graph(package: str) -> dict[str, set[str]]:
    modules = package_modules(package)
    return {
        name: {t for t in imported_modules(path) if t in modules and t not in (name, package)}
        for name, path in modules.items()
    }


def _cycle_from(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path from ``start`` back to itself, or None (depth first, deterministic)."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for target in sorted(graph[node]):
            if target == start:
                return [*path, start]
            if target not in seen:
                seen.add(target)
                stack.append((target, [*path, target]))
    return None


@pytest.mark.parametrize("package", ["fakes", "harness.ports"])
def test_modules_import_one_another_without_a_circle(package: str) -> None:
    graph = _graph(package)
    cycles = [c for c in (_cycle_from(graph, name) for name in sorted(graph)) if c]
    assert cycles == []


def test_the_runner_reaches_the_checkers_only_through_their_public_face() -> None:
    # The runner writes the trace and owns its types (harness.trace); the checkers'
    # private modules are theirs alone.
    found = [
        f"{name} imports {target}"
        for name, path in package_modules("harness.runner").items()
        for target in imported_modules(path)
        if target.startswith("harness.checks._")
    ]
    assert found == []


def test_the_pytest_plugin_does_not_import_the_command_line() -> None:
    # Both front ends call the runner; neither borrows the other's helpers.
    plugin = ROOT / "harness" / "pytest_plugin.py"
    assert [t for t in imported_modules(plugin) if is_within(t, "harness._cli")] == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def test_the_reports_read_the_harness_and_the_fakes_through_their_public_names() -> None:
    found = [
        f"{name} imports {target}"
        for name, path in package_modules("reports").items()
        for target in imported_modules(path)
        if (is_within(target, "harness") or is_within(target, "fakes"))
        and any(_private(part) for part in target.split("."))
    ]
    assert found == []
