"""SQLite databases the agent opens live in the case's world, on the crash disk (DESIGN §4).

``sqlite3`` opens its files from C, below the reach of pyfakefs: left alone, a
framework's ``conversations.db`` or ``checkpoints.sqlite`` lands in the real
working folder, survives the case and the run, and the next case resumes the
first one's conversation. While an incarnation runs, :meth:`WorldDatabases.active`
replaces ``sqlite3.connect`` (and ``sqlite3.dbapi2.connect``, which SQLAlchemy's
pysqlite dialect calls; ``aiosqlite``, LangGraph's savers and the OpenAI Agents
SDK's ``SQLiteSession`` call the first). A database named by a path opens in
memory instead, through SQLite's own ``memdb`` VFS, shared by name among the
incarnation's connections, and loaded from the bytes the crash disk holds for
that path. ``:memory:`` databases are left as they are.

**What SQLite promises, and what is modelled.** Every commit that changed the
database (``commit()``, ``with conn:``, an autocommitted statement, a script, a
``COMMIT`` in SQL) is a persistence point ``sqlite:commit#K`` that stores the
whole database image on the crash disk in one atomic step (SQLite's atomic
commit: never torn, never half applied). A crash ``before`` it loses that
transaction; ``after`` it keeps it, in every crash class that keeps the page
cache (``process_killed``). Under the power-loss classes the outcome follows the
connection's settings as SQLite documents them (https://sqlite.org/pragma.html
#pragma_synchronous):

=============================================  ==========================================
``synchronous`` (``journal_mode``)             a committed transaction after power loss
=============================================  ==========================================
``FULL``/``EXTRA`` (any); ``NORMAL`` (not WAL)  survives
``NORMAL`` with ``journal_mode=WAL``            may roll back: survives only once the WAL
                                               is checkpointed (here: when the connection
                                               closes, an ``fsync`` point of the file)
``OFF`` (any)                                   may be lost (SQLite says it may also corrupt
                                               the file; here it is lost, never corrupt)
=============================================  ==========================================

The settings are read from the ``PRAGMA synchronous``/``journal_mode`` statements
the agent runs (``journal_mode=WAL`` sticks to the database across connections and
restarts, as in a real file). ``EIO``/``ENOSPC`` at a commit reach the agent as the
``sqlite3.OperationalError`` SQLite raises (``disk I/O error``, ``database or disk is
full``) with the transaction rolled back when it struck before the commit.

**Not modelled**: the ``-journal``/``-wal`` side files (the database is one file on
the crash disk; ``PRAGMA journal_mode`` answers ``memory``), a crash in the middle of
one statement, torn or corrupted database files, locking between processes (one
incarnation is one process; between its own connections the ``memdb`` VFS locks as
SQLite does), and a database file the agent edits with ``open()`` while a
connection is open.

A database file in the folder the run starts in (the world's working folder reads it
through, :class:`~harness.intercept._start_folder.StartFolder`) starts every case from
its real contents; its commits go to the crash disk, never to the real file.

A path whose folder does not exist in the world cannot be opened, exactly as
SQLite refuses it (``unable to open database file``); the refusal is recorded
(:attr:`WorldDatabases.refused`) so the report can name the path.
"""

from __future__ import annotations

import copy
import errno
import itertools
import posixpath
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from fakes import CrashDisk
from harness._errors import DiskError
from harness.intercept._sqlite_clock import sqlite_reads_time_module
from harness.intercept._start_folder import StartFolder

#: The role of every database's persistence points: ``sqlite:commit#3``.
SQLITE_ROLE: Final = "sqlite"

_PRAGMA = re.compile(
    r"\bPRAGMA\s+(?:\w+\.)?(journal_mode|synchronous)\s*=\s*['\"]?(\w+)", re.IGNORECASE)
_ROLLBACK = re.compile(r"^\s*ROLLBACK\b", re.IGNORECASE)
_SYNCHRONOUS: Final = {"off": 0, "normal": 1, "full": 2, "extra": 3,
                       "0": 0, "1": 1, "2": 2, "3": 3}
_DEFAULT_SYNCHRONOUS: Final = 2  # SQLite's compiled default: FULL
_REAL_CONNECT: Final = sqlite3.connect  # the harness's own connections never go to the world
_NAMES = itertools.count(1)  # memdb names, unique in the process (never in a trace)
# sqlite3.connect's parameters after the database, in order (some callers pass them so).
_CONNECT_PARAMETERS: Final = ("timeout", "detect_types", "isolation_level", "check_same_thread",
                              "factory", "cached_statements", "uri")


@dataclass
class _Store:
    """One database path's in-memory image for one incarnation, and what it knows of it."""

    path: str
    uri: str
    keeper: sqlite3.Connection  # keeps the memdb alive between the agent's connections
    generation: int
    lock: threading.RLock = field(default_factory=threading.RLock)
    schema_seen: int = 0
    unsynced: bool = False  # a commit that is not durable yet (WAL + NORMAL, OFF)

    def image(self) -> bytes:
        with self.lock:
            return self.keeper.serialize()

    def load(self, data: bytes) -> None:
        """Make the database hold exactly ``data`` (empty bytes: an empty database)."""
        source = _REAL_CONNECT(":memory:")
        try:
            if data:
                source.deserialize(data)
            with self.lock:
                source.backup(self.keeper)
        finally:
            source.close()


class WorldDatabases:
    """The case's SQLite databases, kept on its crash disk; see the module docstring.

    One per world: the journal modes the agent chose outlive an incarnation, as
    they would in the database file.
    """

    def __init__(self, disk: CrashDisk, workdir: str = "/agent", *,
                 start: StartFolder | None = None) -> None:
        self._disk = disk
        self._workdir = workdir
        # The folder the run started in, read through: a database there starts each
        # case from its real contents; commits go to the crash disk only.
        self._start = start
        self._journal_modes: dict[str, str] = {}
        self.refused: list[str] = []
        self._stores: dict[str, _Store] = {}
        self._generation = 0

    def __deepcopy__(self, memo: dict[int, object]) -> WorldDatabases:
        # Between incarnations nothing is open; a copy keeps what outlives one.
        twin = WorldDatabases.__new__(WorldDatabases)
        memo[id(self)] = twin
        twin.__dict__.update(self.__dict__)
        twin._disk = copy.deepcopy(self._disk, memo)
        twin._journal_modes = dict(self._journal_modes)
        twin.refused = list(self.refused)
        twin._stores = {}
        return twin

    @contextmanager
    def active(self, generation: int) -> Iterator[None]:
        """Route ``sqlite3.connect`` to the world while incarnation ``generation`` runs."""
        sqlite_reads_time_module()  # its 'now' the case's, as time.time() is
        self._generation = generation
        real = _REAL_CONNECT
        modules: tuple[Any, ...] = (sqlite3, sqlite3.dbapi2)
        saved = [(module, module.connect) for module in modules]

        def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            return self._connect(real, database, args, kwargs)

        for module in modules:
            module.connect = connect
        try:
            yield
        finally:
            for module, original in saved:
                module.connect = original
            self._close_all()

    def _close_all(self) -> None:
        for store in self._stores.values():
            store.keeper.close()
        self._stores.clear()

    # -- opening -----------------------------------------------------------
    def _connect(self, real: Callable[..., sqlite3.Connection], database: Any,
                 args: tuple[Any, ...], kwargs: dict[str, Any]) -> sqlite3.Connection:
        kwargs = {**dict(zip(_CONNECT_PARAMETERS, args, strict=False)), **kwargs}
        uri = bool(kwargs.get("uri", False))
        path, read_only = self._world_path(database, uri)
        if path is None:
            return real(database, *args, **kwargs)
        store = self._store(path, read_only=read_only)
        kwargs = {**kwargs, "uri": True, "factory": _world_factory(kwargs.get("factory"))}
        connection = real(store.uri, **kwargs)
        assert isinstance(connection, _WorldConnection)
        connection._harness_bind(self, store)
        return connection

    def _world_path(self, database: Any, uri: bool) -> tuple[str | None, bool]:
        """The absolute world path ``database`` names, or None for an in-memory database."""
        name = database.decode() if isinstance(database, bytes) else str(
            database.__fspath__() if hasattr(database, "__fspath__") else database)
        read_only = False
        if uri and name.startswith("file:"):
            parts = urlsplit(name)
            query = parse_qs(parts.query)
            if query.get("mode", [""])[0] == "memory":
                return None, False
            read_only = query.get("mode", [""])[0] == "ro"
            name = unquote(parts.path)
        if name in ("", ":memory:"):
            return None, False  # "" is a private temporary database: memory is as good
        from harness.intercept._files import AgentFiles

        cwd = AgentFiles.current_dir() or self._workdir
        return posixpath.normpath(posixpath.join(cwd, name)), read_only

    def _store(self, path: str, *, read_only: bool) -> _Store:
        store = self._stores.get(path)
        if store is not None:
            return store
        view = self._disk.for_incarnation(self._generation)
        if self._start is not None:
            self._start.adopt(self._disk, posixpath.dirname(path))
            self._start.adopt(self._disk, path)
        folder_exists = view.is_dir(posixpath.dirname(path))
        if not folder_exists or (read_only and not view.exists(path)):
            self.refused.append(path)
            raise sqlite3.OperationalError("unable to open database file")
        self._disk.assign_role(path, SQLITE_ROLE)
        uri = f"file:/harness-db-{next(_NAMES)}?vfs=memdb"
        keeper = _REAL_CONNECT(uri, uri=True, check_same_thread=False)
        store = _Store(path, uri, keeper, self._generation)
        store.load(view.read(path) if view.exists(path) else b"")
        store.schema_seen = _schema_version(store.keeper)
        self._stores[path] = store
        return store

    def journal_mode(self, path: str) -> str:
        return self._journal_modes.get(path, "delete")

    def set_journal_mode(self, path: str, mode: str) -> None:
        self._journal_modes[path] = mode.lower()

    # -- committing --------------------------------------------------------
    def committed(self, store: _Store, synchronous: int) -> None:
        """A transaction changed the database: a ``sqlite:commit`` persistence point."""
        # A dead incarnation's connection (a late `finally:`) is refused here.
        self._disk.incarnations.check(store.generation, f"commit {store.path}")
        durable = _durable(synchronous, self.journal_mode(store.path))
        data = store.image()
        view = self._disk.for_incarnation(store.generation)
        try:
            view.commit_file(store.path, data, durable=durable)
        except DiskError as error:
            if not (view.exists(store.path) and view.read(store.path) == data):
                # Struck before the commit: the transaction did not happen.
                store.load(view.read(store.path) if view.exists(store.path) else b"")
            raise _sqlite_error(error) from None
        store.unsynced = not durable
        _reflect_in_files(store.path, data)

    def checkpointed(self, store: _Store, synchronous: int) -> None:
        """The last connection closed: a WAL checkpoint makes the commits durable."""
        if not store.unsynced or synchronous == 0:
            return
        view = self._disk.for_incarnation(store.generation)
        with view.open_append(store.path) as handle:
            handle.fsync()
        store.unsynced = False


def _durable(synchronous: int, journal_mode: str) -> bool:
    if synchronous >= 2:
        return True
    return synchronous == 1 and journal_mode != "wal"


def _sqlite_error(error: DiskError) -> sqlite3.OperationalError:
    if error.errno == errno.ENOSPC:
        return sqlite3.OperationalError("database or disk is full")
    return sqlite3.OperationalError("disk I/O error")


def _schema_version(connection: sqlite3.Connection) -> int:
    cursor = sqlite3.Connection.cursor(connection)
    cursor.row_factory = None  # the agent's row factory may not index by number
    try:
        row = cursor.execute("PRAGMA schema_version").fetchone()
    finally:
        cursor.close()  # never left in progress, whoever keeps this frame (see _WorldCursor)
    return int(row[0])


def _reflect_in_files(path: str, data: bytes) -> None:
    """Show the committed database in the agent's fake file system, as a real file would be."""
    from harness.intercept._files import AgentFiles

    AgentFiles.reflect(path, data)


# -- the agent's connections and cursors ---------------------------------------


class _WorldConnection(sqlite3.Connection):
    """A connection to a world database: notices every commit (see the module docstring)."""

    _harness_world: WorldDatabases
    _harness_store: _Store
    _harness_synchronous: int
    _harness_changes: int

    def _harness_bind(self, world: WorldDatabases, store: _Store) -> None:
        self._harness_world, self._harness_store = world, store
        self._harness_synchronous = _DEFAULT_SYNCHRONOUS
        self._harness_changes = self.total_changes

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(_world_cursor(factory))

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> Any:
        return self.cursor().executescript(script)

    def commit(self) -> None:
        super().commit()
        self._harness_after("COMMIT")

    def rollback(self) -> None:
        super().rollback()
        self._harness_changes = self.total_changes

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None, /) -> Literal[False]:
        # The C method commits without calling commit(): say it again here.
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        return False

    def close(self) -> None:
        world = getattr(self, "_harness_world", None)
        if world is not None:
            world.checkpointed(self._harness_store, self._harness_synchronous)
        super().close()

    def _harness_after(self, sql: str) -> None:
        """After a statement: note its settings, and whether it committed a change."""
        if not hasattr(self, "_harness_world"):
            return  # opened by the factory, before it was bound (SQLite's own calls)
        for name, value in _PRAGMA.findall(sql):
            self._harness_setting(name.lower(), value.lower())
        if self.in_transaction:
            return
        store = self._harness_store
        if _ROLLBACK.match(sql):
            self._harness_changes = self.total_changes
            return
        schema = _schema_version(self)
        if self.total_changes == self._harness_changes and schema == store.schema_seen:
            return
        self._harness_changes, store.schema_seen = self.total_changes, schema
        self._harness_world.committed(store, self._harness_synchronous)

    def _harness_setting(self, name: str, value: str) -> None:
        if name == "synchronous" and value in _SYNCHRONOUS:
            self._harness_synchronous = _SYNCHRONOUS[value]
        elif name == "journal_mode":
            self._harness_world.set_journal_mode(self._harness_store.path, value)


class _WorldCursor(sqlite3.Cursor):
    """A cursor of a world connection: each statement is looked at once it has run.

    These methods hold the cursor in their frames, which a plain ``sqlite3`` call has
    none of; a frame kept after it returned (a sampling profiler's
    ``sys._current_frames()``, a debugger) would keep the cursor, and with it a statement
    still in progress (``PRAGMA journal_mode=WAL``'s unread row), alive past the moment
    the agent dropped it: its next ``commit()`` would fail (``SQL statements in
    progress``) as it never does without the harness, at the whim of the machine's load.
    So each drops its references to the cursor before it returns (:func:`_watched`).
    """

    # Each method hands the cursor over in a list it empties, so that its own frame no
    # longer refers to it either.
    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        held = [self]
        del self
        return _watched(held, "execute", sql, (sql, parameters))

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        held = [self]
        del self
        return _watched(held, "executemany", sql, (sql, parameters))

    def executescript(self, script: str, /) -> Any:
        held = [self]
        del self
        return _watched(held, "executescript", script, (script,))


def _watched(held: list[_WorldCursor], method: str, sql: str,
             arguments: tuple[Any, ...]) -> Any:
    """The cursor in ``held`` runs ``method(*arguments)`` (the agent's factory's own, if it
    has one), then its connection looks at ``sql``. When this returns, neither this frame
    nor its caller's refers to the cursor (see :class:`_WorldCursor`)."""
    cursor = held.pop()
    run = getattr(super(_WorldCursor, cursor), method)
    connection = cursor.connection
    del cursor
    result = run(*arguments)
    del run
    if isinstance(connection, _WorldConnection):
        connection._harness_after(sql)
    try:
        return result
    finally:
        del result


_FACTORIES: dict[type, type] = {}
_CURSORS: dict[type, type] = {}


def _world_factory(factory: Any) -> type:
    """The connection class: the agent's own factory, if it gave one, made a world one."""
    if factory is None or factory is sqlite3.Connection or not isinstance(factory, type):
        return _WorldConnection
    if factory not in _FACTORIES:
        _FACTORIES[factory] = type(f"World{factory.__name__}", (_WorldConnection, factory), {})
    return _FACTORIES[factory]


def _world_cursor(factory: Any) -> Any:
    if not isinstance(factory, type):
        return factory or _WorldCursor  # a plain callable: its statements go unwatched
    if factory is sqlite3.Cursor:
        return _WorldCursor
    if factory not in _CURSORS:
        _CURSORS[factory] = type(f"World{factory.__name__}", (_WorldCursor, factory), {})
    return _CURSORS[factory]
