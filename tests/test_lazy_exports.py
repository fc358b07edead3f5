"""A lazy package lists its names once: ``_EXPORTS``, which the lazy import reads and
``__all__`` is made from. The imports under ``TYPE_CHECKING`` repeat it for the type
checker, and these tests hold the two alike, read from the source."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAZY = ["harness", "fakes", "reports", "harness.ports", "harness.record", "harness.serve"]


def _checked_imports(source: str) -> list[tuple[str, str, str | None]]:
    """(module, name, alias) of each import under the package's ``if TYPE_CHECKING``."""
    blocks = [node for node in ast.parse(source).body
              if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)]
    assert len(blocks) == 1
    return [(node.module or "", alias.name, alias.asname)
            for node in blocks[0].body if isinstance(node, ast.ImportFrom)
            for alias in node.names]


def _init(package: str) -> str:
    return ROOT.joinpath(*package.split("."), "__init__.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("package", LAZY)
def test_the_type_checker_s_imports_are_the_lazy_list(package: str) -> None:
    listed = importlib.import_module(package)._EXPORTS
    imported = _checked_imports(_init(package))
    assert sorted((module, name) for module, name, _ in imported) == sorted(
        (module, name) for module, names in listed.items() for name in names)
    # ``name as name``: the type checker takes it as exported without a literal __all__.
    assert [name for _, name, alias in imported if alias != name] == []


@pytest.mark.parametrize("package", LAZY)
def test_all_is_made_from_the_lazy_list(package: str) -> None:
    module = importlib.import_module(package)
    lazy = {name for names in module._EXPORTS.values() for name in names}
    assert lazy <= set(module.__all__)
    for name in sorted(lazy):
        getattr(module, name)  # each resolves from the module the list names
