"""Reading a file the user named: only a regular file, and only so much of it.

A path on a command line may name anything: a named pipe (reading it waits for
a writer that never comes), ``/dev/zero`` (reading it never ends), a folder, a
socket. Every reader of a user's path (scenarios, captures, result folders, the
gate's configuration) goes through :func:`read_input`, which reads a regular
file, or a symlink to one, of at most ``limit`` bytes, and refuses anything else
with an :class:`OSError` whose ``strerror`` says what the path is instead, so
that each caller's own ``except OSError`` turns it into its one-line error.

>>> read_input("/dev/null", 10)
Traceback (most recent call last):
...
OSError: [Errno 22] a character device, not a regular file: '/dev/null'
"""

from __future__ import annotations

import errno
import os
import stat

#: What a path that is not a regular file is, by the file type bits of its mode.
_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}


def read_input(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path`` (symlinks followed), at most ``limit`` of them.

    Raises :class:`OSError`: the open's own (no such file, no permission), or
    ``EINVAL`` for a path that is no regular file, or ``EFBIG`` for one larger
    than ``limit``; neither of the last two reads a byte.
    """
    _check_regular(os.stat(path), path, limit)  # a device is never even opened
    # O_NONBLOCK: should the path become a pipe after the stat, opening it does not wait.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check_regular(os.fstat(fd), path, limit)  # what was opened, not what was named
        with os.fdopen(fd, "rb", closefd=False) as opened:
            data = opened.read(limit + 1)  # the file may have grown since the stat
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _too_large(path, limit, len(data))
    return data


def _check_regular(info: os.stat_result, path: str | os.PathLike[str], limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "a special file")
        raise OSError(errno.EINVAL, f"{kind}, not a regular file", os.fspath(path))
    if info.st_size > limit:
        raise _too_large(path, limit, info.st_size)


def _too_large(path: str | os.PathLike[str], limit: int, size: int) -> OSError:
    return OSError(errno.EFBIG, f"{size:,} bytes or more; at most {limit:,} are read",
                   os.fspath(path))
