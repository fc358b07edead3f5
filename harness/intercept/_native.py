"""Clients that reach the network from native code, where no interception can follow them.

The harness intercepts the HTTP clients and the ``socket`` module (see
:mod:`harness.intercept._sockets`); a library that opens its connections in C
(libpq, libmysqlclient, libcurl) goes past all of it, to the real network, in
the middle of a case. An agent that imports one is refused before any case runs,
with the library named and what to hand the agent instead.

A client whose every connection passes through one Python function is guarded there
instead (:data:`GUARDED_CLIENTS`): psycopg 3 opens each connection, sync, async,
pooled or through SQLAlchemy, with ``psycopg.generators.connect``. Importing it is
harmless (DBOS imports it for its Postgres support and runs on SQLite); while an
incarnation runs, a connection is refused there and recorded with the library that
asked, as a socket's is (:mod:`harness.intercept._sockets`), which fails the case's
``network`` check.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, Final
from urllib.parse import urlsplit

from harness.intercept._network import Patched, Route, patch_attribute, restore
from harness.intercept._telemetry import calling_library

_DATABASE_ADVICE: Final = (
    "give the agent a store the harness can see instead, through a setting its code "
    "reads: a SQLite database (sqlite3, aiosqlite, SQLAlchemy's sqlite:// URL) lives on "
    "the case's crash disk and is crashed with it")
#: Top-level package → (what it is, what to do instead).
NATIVE_CLIENTS: Final[dict[str, tuple[str, str]]] = {
    "psycopg2": ("PostgreSQL through libpq, which connects from C", _DATABASE_ADVICE),
    "MySQLdb": ("MySQL through libmysqlclient, which connects from C", _DATABASE_ADVICE),
    "pycurl": ("libcurl, which connects from C",
               "use httpx, requests or aiohttp, which reach the fake providers"),
}


def native_clients(modules: Iterable[str]) -> list[str]:
    """One sentence for each native network client among ``modules`` (names imported).

    >>> native_clients(["json", "psycopg2.extensions", "psycopg2"])
    ["psycopg2: PostgreSQL through libpq, which connects from C, below the harness's \
interception; give the agent a store the harness can see instead, through a setting its \
code reads: a SQLite database (sqlite3, aiosqlite, SQLAlchemy's sqlite:// URL) lives on \
the case's crash disk and is crashed with it"]
    """
    found = sorted({name.partition(".")[0] for name in modules} & set(NATIVE_CLIENTS))
    return [f"{name}: {NATIVE_CLIENTS[name][0]}, below the harness's interception; "
            f"{NATIVE_CLIENTS[name][1]}" for name in found]


@contextmanager
def native_clients_guarded(route: Route) -> Iterator[None]:
    """Refuse the guarded clients' connections for the duration, each recorded with
    ``route``: in a module already imported, and in one imported meanwhile (an agent that
    imports its driver only where it first connects). Nothing is imported here."""
    saved: Patched = []

    def guard(module: ModuleType) -> None:
        function, refusal = GUARDED_CLIENTS[module.__name__]
        if callable(getattr(module, function, None)):
            saved.extend(patch_attribute(module, function, refusal(route)))

    for name in GUARDED_CLIENTS:
        if name in sys.modules:
            guard(sys.modules[name])
    finder = _GuardOnImport(frozenset(n for n in GUARDED_CLIENTS if n not in sys.modules),
                            guard)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        restore(saved)


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Guards a module of :data:`GUARDED_CLIENTS` as soon as it is imported."""

    def __init__(self, names: frozenset[str], guard: Callable[[ModuleType], None]) -> None:
        self._names, self._guard = names, guard

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in self._names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module, guard = loader.exec_module, self._guard

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            guard(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader
        return spec


def _refused_postgres(route: Route) -> Any:
    def connect(conninfo: str = "", *args: Any, **kwargs: Any) -> Any:
        del args, kwargs
        where = _postgres_address(conninfo)
        route.refuse(f"connect postgresql {where}", calling_library())
        # psycopg is loaded (this replaces one of its functions), and raised as its own.
        refused: type[Exception] = sys.modules["psycopg"].OperationalError
        raise refused(f"no network inside a harness case: connection to PostgreSQL "
                               f"at {where} refused ({_DATABASE_ADVICE})")

    return connect


#: Native clients guarded where every connection passes: the module → the function every
#: connection goes through, and what stands in for it while a case runs.
GUARDED_CLIENTS: Final[dict[str, tuple[str, Callable[[Route], Any]]]] = {
    "psycopg.generators": ("connect", _refused_postgres),
}


def _postgres_address(conninfo: str | bytes) -> str:
    """``host:port`` of a libpq connection string, as far as it says (libpq's defaults
    otherwise: the local socket, 5432).

    >>> _postgres_address("host=10.0.0.5 port=6432 dbname=app")
    '10.0.0.5:6432'
    >>> _postgres_address("dbname=app")
    'the local socket:5432'
    >>> _postgres_address("postgresql://app@db.internal/orders")
    'db.internal:5432'
    """
    text = conninfo.decode(errors="replace") if isinstance(conninfo, bytes) else str(conninfo)
    if text.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(text)
        return f"{parts.hostname or 'the local socket'}:{parts.port or 5432}"
    fields = dict(part.split("=", 1) for part in text.split() if "=" in part)
    host = fields.get("hostaddr") or fields.get("host") or "the local socket"
    return f"{host}:{fields.get('port') or 5432}"
