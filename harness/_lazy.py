"""Package attributes imported on first use, so that importing a package is cheap.

A command-line process imports a package for one small piece (``harness serve``'s
argument parser lives in :mod:`harness.serve._command`, yet Python runs
``harness/serve/__init__.py`` first); an eager ``__init__`` would load the web server
and the MCP SDK for every ``harness run``. A package lists its public names here
instead, and keeps the same imports under ``TYPE_CHECKING`` for the type checker::

    if TYPE_CHECKING:
        from harness.serve._app import build_app
    else:
        __getattr__ = lazy_exports(__name__, {"harness.serve._app": ["build_app"]})
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence


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
