"""SQLite's ``'now'`` read from :func:`time.time`, so a case's databases see virtual time.

``CURRENT_TIMESTAMP``, ``datetime('now')``, ``strftime('%s', 'now')`` and the rest
ask SQLite's VFS for the time (``xCurrentTimeInt64``), which asks the operating
system: below the reach of the :mod:`time` module the case's threads read. An
agent's table with ``created_at DEFAULT CURRENT_TIMESTAMP`` (the OpenAI Agents SDK's
``SQLiteSession``) then held the real date in the world's database image, which
the crash states that may share a restart are keyed by, and an agent reading its
rows back would have judged by the machine's clock.

:func:`sqlite_reads_time_module` points the time method of every ``unix`` VFS of
the SQLite library the :mod:`sqlite3` module runs on at :func:`time.time`, looked up
at each call: inside a case (whose threads :func:`~harness.intercept.virtual_time`
puts on the virtual clock) SQLite's ``'now'`` is the case's wall time, and outside
one the real time, as before, to the millisecond as SQLite reads it. The ``memdb``
VFS the world's databases live in asks the default VFS for the time, so it follows.
Where the library cannot be reached so (a build whose SQLite is linked in without
its symbols), nothing changes and :func:`sqlite_reads_time_module` says so.
"""

from __future__ import annotations

import ctypes
import sqlite3
import threading
import time
from typing import Final

# Unix time 0 in SQLite's unit: milliseconds since noon of 4714 BC (Julian day 0).
_UNIX_EPOCH_JULIAN_MS: Final = 210_866_760_000_000

_CURRENT_TIME_INT64 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                       ctypes.POINTER(ctypes.c_int64))
_CURRENT_TIME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_double))


class _Vfs(ctypes.Structure):
    """The head of ``struct sqlite3_vfs`` up to ``xCurrentTimeInt64`` (iVersion 2)."""

    _fields_ = (
        ("iVersion", ctypes.c_int), ("szOsFile", ctypes.c_int), ("mxPathname", ctypes.c_int),
        ("pNext", ctypes.c_void_p), ("zName", ctypes.c_char_p), ("pAppData", ctypes.c_void_p),
        *((name, ctypes.c_void_p) for name in (
            "xOpen", "xDelete", "xAccess", "xFullPathname", "xDlOpen", "xDlError", "xDlSym",
            "xDlClose", "xRandomness", "xSleep", "xCurrentTime", "xGetLastError",
            "xCurrentTimeInt64")),
    )


# A time the check below puts in the place of time.time() on its own thread, to see
# that SQLite asks here.
_probe = threading.local()


def _unix_seconds() -> float:
    at: float | None = getattr(_probe, "at", None)
    return time.time() if at is None else at


def _milliseconds(_vfs: int | None, out: ctypes._Pointer[ctypes.c_int64]) -> int:
    out[0] = _UNIX_EPOCH_JULIAN_MS + int(_unix_seconds() * 1000)
    return 0


def _days(_vfs: int | None, out: ctypes._Pointer[ctypes.c_double]) -> int:
    out[0] = (_UNIX_EPOCH_JULIAN_MS + _unix_seconds() * 1000) / 86_400_000
    return 0


# Kept for the process's life: SQLite holds their addresses.
_now_ms = _CURRENT_TIME_INT64(_milliseconds)
_now_days = _CURRENT_TIME(_days)


_LOCK = threading.Lock()
_state: list[str] = []  # empty until tried; then "" (done) or why it could not be


def sqlite_reads_time_module() -> str:
    """Make SQLite's ``'now'`` :func:`time.time`'s, once per process; ``""``, or why not."""
    with _LOCK:
        if not _state:
            _state.append(_install())
        return _state[0]


def _install() -> str:
    try:
        import _sqlite3

        library = ctypes.CDLL(_sqlite3.__file__)
        find = library.sqlite3_vfs_find
    except (OSError, AttributeError) as error:
        return f"SQLite's VFS is out of reach ({error})"
    find.restype = ctypes.POINTER(_Vfs)
    find.argtypes = [ctypes.c_char_p]
    first = find(None)
    if not first:
        return "SQLite has no default VFS"
    vfs = first.contents
    while True:
        if (vfs.zName or b"").startswith(b"unix") and vfs.iVersion >= 2:
            vfs.xCurrentTime = ctypes.cast(_now_days, ctypes.c_void_p).value
            vfs.xCurrentTimeInt64 = ctypes.cast(_now_ms, ctypes.c_void_p).value
        if not vfs.pNext:
            break
        vfs = _Vfs.from_address(vfs.pNext)
    return _checked()


def _checked() -> str:
    """``""`` when a new connection's ``'now'`` is asked here, else why not."""
    connection = sqlite3.connect(":memory:")
    _probe.at = 86_400.0
    try:
        (day,) = connection.execute("SELECT date('now')").fetchone()
    finally:
        _probe.at = None
        connection.close()
    if day != "1970-01-02":
        return "SQLite's 'now' did not follow the time module (another SQLite library)"
    return ""
