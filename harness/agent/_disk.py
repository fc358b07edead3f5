"""The disk port on the operating system, and the folder helper the agent core uses.

:class:`RealDisk` implements :class:`harness.ports.Disk`: files are made with
mode ``0600``, appends use ``O_APPEND``, ``fsync`` is real, and every ``OSError``
becomes a :class:`harness.DiskError` that names the operation, the path and the
``errno``.

Example::

    disk = RealDisk()
    ensure_dir(disk, "/tmp/run/state", root="/tmp/run")
    with disk.open_append("/tmp/run/state/journal.jsonl") as f:
        f.write(b'{"seq":1}\\n')
        f.fsync()
"""

from __future__ import annotations

import os
from typing import final

from harness.ports import AppendFile, AppendFileHandle, Disk, call_os, dirname, normpath

FILE_MODE = 0o600
DIR_MODE = 0o700


def ensure_dir(disk: Disk, path: str, *, root: str) -> list[str]:
    """Create ``path`` and its missing parents below ``root``, fsyncing each parent.

    ``root`` is a folder whose own name is already durable. Returns the folders
    created, outermost first.

    >>> from fakes import CrashDisk
    >>> ensure_dir(CrashDisk().view(), "/a/b", root="/")
    ['/a', '/a/b']
    """
    path, root = normpath(path), normpath(root)
    if path == root or disk.exists(path):
        return []
    created = ensure_dir(disk, dirname(path), root=root)
    if disk.mkdir(path):
        # The new folder's name lives in its parent: without this fsync a crash
        # may forget the folder and every file in it.
        disk.fsync_dir(dirname(path))
        created.append(path)
    return created


@final
class _RealAppendFile(AppendFileHandle):
    def __init__(self, path: str, fd: int, created: bool) -> None:
        super().__init__(path, created)
        self._fd = fd

    def write(self, data: bytes) -> None:
        def write_all() -> None:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

        call_os("write", self._path, write_all)

    def fsync(self) -> None:
        call_os("fsync", self._path, lambda: os.fsync(self._fd))

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            call_os("close", self._path, lambda: os.close(fd))



@final
class RealDisk:
    """The :class:`Disk` port on the operating system's file system.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> disk = RealDisk()
    >>> with disk.open_append(os.path.join(folder, "j.jsonl")) as f:
    ...     f.write(b"x\\n")
    >>> disk.size(os.path.join(folder, "j.jsonl"))
    2
    """

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def size(self, path: str) -> int:
        return call_os("size", path, lambda: os.stat(path).st_size)

    def read(self, path: str) -> bytes:
        def read_all() -> bytes:
            with open(path, "rb") as f:
                return f.read()

        return call_os("read", path, read_all)

    def mkdir(self, path: str) -> bool:
        def make() -> bool:
            try:
                os.mkdir(path, DIR_MODE)
            except FileExistsError:
                return False
            return True

        return call_os("mkdir", path, make)

    def open_append(self, path: str) -> AppendFile:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)

        def open_or_create() -> _RealAppendFile:
            # O_EXCL first, so the caller learns whether the name is new and
            # needs its folder fsynced.
            try:
                return _RealAppendFile(path, os.open(path, flags | os.O_EXCL, FILE_MODE), True)
            except FileExistsError:
                return _RealAppendFile(path, os.open(path, flags, FILE_MODE), False)

        return call_os("open", path, open_or_create)

    def truncate(self, path: str, length: int) -> None:
        call_os("truncate", path, lambda: os.truncate(path, length))

    def fsync_dir(self, path: str) -> None:
        fd = call_os("fsync_dir", path, lambda: os.open(path, os.O_RDONLY))
        try:
            call_os("fsync_dir", path, lambda: os.fsync(fd))
        finally:
            os.close(fd)

    def replace(self, source: str, target: str) -> None:
        call_os("replace", source, lambda: os.replace(source, target))
