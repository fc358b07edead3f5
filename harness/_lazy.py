"""Package attributes imported on first use, so that importing a package is cheap.

A command-line process imports a package for one small piece (``harness serve``'s
argument parser lives in :mod:`harness.serve._command`, yet Python runs
``harness/serve/__init__.py`` first); an eager ``__init__`` would load the web server
and the MCP SDK for every ``harness run``. A package lists its public names here
instead, keeps the same imports under ``TYPE_CHECKING`` for the type checker, and
derives ``__all__`` from the list::

    _EXPORTS = {"harness.serve._app": ["build_app"]}
    if TYPE_CHECKING:
        from harness.serve._app import build_app as build_app
    else:
        __getattr__ = lazy_exports(__name__, _EXPORTS)
    __all__ = list(exported_names(_EXPORTS))

The list is the one a reader keeps: ``__all__`` is made from it, and
tests/test_lazy_exports.py holds the ``TYPE_CHECKING`` imports to it. Those imports
say ``name as name``, the form that re-exports a name to the type checker without a
literal ``__all__`` (mypy's ``--no-implicit-reexport``).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from itertools import groupby


def lazy_exports(package: str, modules: Mapping[str, Sequence[str]], *,
                 rename: bool = False) -> Callable[[str], object]:
    """A module ``__getattr__`` (PEP 562) for ``package``: each name of ``modules[module]``
    is imported from that module on first use and then kept on the package.

    With ``rename``, a class or function handed out this way says it belongs to
    ``package`` (its ``__module__``), as httpx's do, so ``repr``, help and error
    messages show the name a user imports rather than a private module's."""
    home = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        if rename and isinstance(value, type | types.FunctionType):
            value.__module__ = package
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def exported_names(modules: Mapping[str, Sequence[str]], *loaded: str) -> tuple[str, ...]:
    """A package's ``__all__``: the names of ``modules`` and the ones it ``loaded`` at once,
    sorted as ruff sorts a literal ``__all__`` (constants, then classes, then the rest).

    >>> exported_names({"m": ["run", "Case", "MAX_SEED"]}, "check_i10", "check_i9")
    ('MAX_SEED', 'Case', 'check_i9', 'check_i10', 'run')
    """
    names = [*(name for names in modules.values() for name in names), *loaded]
    return tuple(sorted(names, key=_ruff_order))


def _ruff_order(name: str) -> tuple[bool, bool, list[int | str]]:
    # RUF022's order: a number inside a name compares as a number (check_i9 before check_i10).
    runs = ("".join(run) for _, run in groupby(name, str.isdigit))
    natural = [int(run) if run.isdigit() else run for run in runs]
    return (not name.isupper(), not name[:1].isupper(), natural)
