"""The disk port: every durable byte an agent writes goes through :class:`Disk`.

The port is deliberately small and path-based so that a crash-simulating fake
(:class:`fakes.CrashDisk`) can name each durable operation as a persistence
point, and the real one (:class:`harness.agent._disk.RealDisk`) runs on the operating
system. Both turn an ``OSError`` into the same :class:`harness.DiskError` through
:func:`call_os`, and share the remembered path helpers.
"""

from __future__ import annotations

import errno as errno_module
import functools
import posixpath
from collections.abc import Callable
from types import TracebackType
from typing import Protocol, Self, TypeVar

from harness._errors import DiskError

T = TypeVar("T")


class AppendFile(Protocol):
    """A file opened for append; ``created`` says whether opening made it."""

    @property
    def created(self) -> bool: ...

    def write(self, data: bytes) -> None:
        """Append all of ``data`` (a short write is an error, never silent)."""
        ...

    def fsync(self) -> None:
        """Make the file's data durable."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> AppendFile: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class ClosesOnExit:
    """Leaving a ``with`` block calls ``close``: an open file's context manager, and a runner's.

    A subclass writes ``close``; one that must not close on some exception (a simulated
    crash leaves the file as the crash found it) says so in ``closes_after``.
    """

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.closes_after(exc):
            self.close()

    def closes_after(self, exc: BaseException | None) -> bool:  # noqa: ARG002 - a subclass reads it
        """Whether leaving the block with ``exc`` (None: without one) closes: always, here."""
        return True


class AppendFileHandle(ClosesOnExit):
    """What every disk's :class:`AppendFile` keeps alike: the path it was opened at and
    whether opening created the file. A subclass writes ``write``, ``fsync`` and ``close``.
    """

    def __init__(self, path: str, created: bool) -> None:
        self._path = path
        self._created = created

    @property
    def created(self) -> bool:
        return self._created


class Disk(Protocol):
    """Where the agent core keeps durable state (journal, transcript).

    A new file's *name* is durable only once its folder was fsynced
    (:meth:`fsync_dir`); its *data* only once the file was fsynced.
    """

    def exists(self, path: str) -> bool: ...

    def size(self, path: str) -> int: ...

    def read(self, path: str) -> bytes: ...

    def mkdir(self, path: str) -> bool:
        """Create one folder (its parent must exist); False if it already existed."""
        ...

    def open_append(self, path: str) -> AppendFile:
        """Open ``path`` for append, creating it with mode ``0600`` if missing."""
        ...

    def truncate(self, path: str, length: int) -> None: ...

    def fsync_dir(self, path: str) -> None:
        """Make the names in folder ``path`` durable (new files, renames)."""
        ...

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target`` atomically."""
        ...


@functools.lru_cache(maxsize=1024)
def normpath(path: str) -> str:
    """``posixpath.normpath``, remembered: the same few paths are normalised on every write."""
    return posixpath.normpath(path)


@functools.lru_cache(maxsize=1024)
def dirname(path: str) -> str:
    """``posixpath.dirname``, remembered (see :func:`normpath`)."""
    return posixpath.dirname(path)


def call_os(operation: str, path: str, action: Callable[[], T]) -> T:
    """Run ``action``; an ``OSError`` becomes a :class:`DiskError` chained to it.

    Fakes use it too, so the agent core sees the same errors from both disks.
    """
    try:
        return action()
    except OSError as exc:
        code = exc.errno
        reason = _REASONS.get(code, exc.strerror or str(exc)) if code is not None else str(exc)
        raise DiskError(operation, path, code, reason) from exc


_REASONS = {
    errno_module.EACCES: "permission denied (check the folder's owner and mode)",
    errno_module.EPERM: "operation not permitted",
    errno_module.ENOENT: "no such file or folder (create the parent folder first)",
    errno_module.EROFS: "read-only file system",
    errno_module.ENOSPC: "no space left on device (free space or move the state folder)",
    errno_module.EIO: "input/output error (the device reported a failure)",
    errno_module.EEXIST: "already exists",
    errno_module.ENOTDIR: "a path component is not a folder",
}
