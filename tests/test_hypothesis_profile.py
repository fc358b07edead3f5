"""No test depends on the machine's load: one shared Hypothesis profile sets no deadline
and drops the health checks that time a test, and no test undoes it or times itself."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
WALL_CLOCKS = {"perf_counter", "monotonic", "time", "perf_counter_ns", "monotonic_ns"}


def _calls(name: str) -> Iterator[tuple[Path, ast.Call]]:
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == name:
                yield path, node


def test_the_shared_profile_has_no_deadline_and_no_timing_health_check() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_no_test_sets_a_deadline_or_suppresses_checks_without_the_shared_ones() -> None:
    undoing = []
    for path, call in _calls("settings"):
        for keyword in call.keywords:
            value = ast.unparse(keyword.value)
            if keyword.arg == "deadline" and value != "None":
                undoing.append(f"{path.relative_to(TESTS)}:{call.lineno}: deadline={value}")
            if keyword.arg == "suppress_health_check" \
                    and "LOAD_DEPENDENT_HEALTH_CHECKS" not in value:
                undoing.append(f"{path.relative_to(TESTS)}:{call.lineno}: "
                               f"suppress_health_check={value} replaces the shared list; "
                               "write [*LOAD_DEPENDENT_HEALTH_CHECKS, ...]")
    assert undoing == []


def _elapsed(node: ast.AST) -> bool:
    """``time.perf_counter() - started`` and the like: a measure of wall time."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
               and isinstance(n.left, ast.Call) and isinstance(n.left.func, ast.Attribute)
               and n.left.func.attr in WALL_CLOCKS
               for n in ast.walk(node))


def test_no_assertion_measures_wall_time() -> None:
    timed = [f"{path.relative_to(TESTS)}:{node.lineno}"
             for path in sorted(TESTS.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Assert) and _elapsed(node.test)]
    assert timed == []
