"""Clients that reach the network from native code, where no interception can follow them.

The harness intercepts the HTTP clients and the ``socket`` module (see
:mod:`harness.intercept._sockets`); a library that opens its connections in C
(libpq, libmysqlclient, libcurl) goes past all of it, to the real network, in
the middle of a case. An agent that imports one is refused before any case runs,
with the library named and what to hand the agent instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

_DATABASE_ADVICE: Final = (
    "give the agent a store the harness can see instead, through a setting its code "
    "reads: a SQLite database (sqlite3, aiosqlite, SQLAlchemy's sqlite:// URL) lives on "
    "the case's crash disk and is crashed with it")
#: Top-level package → (what it is, what to do instead).
NATIVE_CLIENTS: Final[dict[str, tuple[str, str]]] = {
    "psycopg2": ("PostgreSQL through libpq, which connects from C", _DATABASE_ADVICE),
    "psycopg": ("PostgreSQL through libpq, which connects from C", _DATABASE_ADVICE),
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
