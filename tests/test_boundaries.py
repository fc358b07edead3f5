"""The import boundaries of DESIGN §2 and §4, read from the source, not from a run.

The fakes implement the ports of :mod:`harness.ports`; they must never reach into
the reference agent (:mod:`harness.agent`), whose internals may move at any time.
Inside a package, modules import one another without a circle, so each can be
read, and imported, on its own.
"""

from __future__ import annotations

import ast
from collections import Counter
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
    # The ports may raise the harness's own errors, and list their names lazily with the
    # helper every lazy package uses (it imports nothing of the harness); nothing else of
    # either side.
    allowed = ("harness.ports", "harness._errors", "harness._lazy")
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


# Every package of the library: a circle means two modules that cannot be read, or
# changed, one without the other (imports inside functions and under TYPE_CHECKING count).
PACKAGES = sorted({module_name(p.parent) for p in ROOT.glob("harness/*/__init__.py")}
                  | {"fakes", "reports"})


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_import_one_another_without_a_circle(package: str) -> None:
    graph = _graph(package)
    cycles = [c for c in (_cycle_from(graph, name) for name in sorted(graph)) if c]
    assert cycles == []


# A package's private modules (a name part starting with "_") are its own: another
# package imports its public names. The exceptions are the helpers every package shares
# (the errors, the redaction of secrets, lazy exports), and the imports held below,
# counted per (importing package, owning package) as they stood when the rule came:
# a count may only fall (lower it when you remove one); a pair not listed has none.
# The runner, for one, reaches the checkers only through their public face.
SHARED_HELPERS = ("harness._errors", "harness._redact", "harness._lazy")
HELD: dict[tuple[str, str], int] = {
    ("fakes", "harness"): 1,
    ("harness.fuzz", "harness"): 1,
    ("harness.intercept", "harness"): 1,
    ("harness.runner", "harness"): 4,
    ("harness.scenario", "harness"): 1,
    ("harness.serve", "harness"): 1,
}
LIBRARY = ("harness", "fakes", "reports")


def _statement_targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def _private_home(target: str) -> tuple[str, str] | None:
    """(owning package, private module) of a target naming a private part, or None."""
    parts = target.split(".")
    for index, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:index]), ".".join(parts[: index + 1])
    return None


def _foreign_private_owners(importer: str, node: ast.AST) -> set[str]:
    """The packages whose private modules one import statement of ``importer`` reaches."""
    owners = set()
    for target in _statement_targets(node):
        home = _private_home(target)
        if (home is not None and target.split(".")[0] in LIBRARY and home[0] != importer
                and home[1] not in SHARED_HELPERS):
            owners.add(home[0])
    return owners


def foreign_private_imports() -> Counter[tuple[str, str]]:
    """Per (importing package, owning package): the statements importing the owner's privates."""
    found: Counter[tuple[str, str]] = Counter()
    for top in LIBRARY:
        for path in sorted((ROOT / top).rglob("*.py")):
            importer = ".".join(path.relative_to(ROOT).parent.parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                found.update((importer, owner) for owner in _foreign_private_owners(importer, node))
    return found


def test_a_package_imports_another_package_s_private_modules_only_as_held() -> None:
    found = foreign_private_imports()
    grown = {pair: f"{count} > {HELD.get(pair, 0)}" for pair, count in sorted(found.items())
             if count > HELD.get(pair, 0)}
    assert grown == {}, "import the owner's public name instead (its __init__ exports it)"
    # However the pairs fall, the whole library holds at most ten such statements.
    assert sum(found.values()) <= 10
    # The runner writes the trace and owns its types; the checkers' private modules are
    # theirs alone (held at none).
    assert found[("harness.runner", "harness.checks")] == 0


def test_the_import_rule_sees_a_private_import_of_another_package() -> None:
    # The rule's own reading, on statements whose answer is known.
    def owners(importer: str, source: str) -> set[str]:
        return _foreign_private_owners(importer, ast.parse(source).body[0])

    assert owners("harness.runner", "from harness.checks._timing import check_s1") == {
        "harness.checks"}
    assert owners("harness.runner", "from harness.runner._world import World") == set()
    assert owners("harness.runner", "from harness._errors import ConfigError") == set()
    assert owners("fakes", "from harness import _vocabulary") == {"harness"}
    assert owners("reports", "import harness.trace._records") == {"harness.trace"}


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
