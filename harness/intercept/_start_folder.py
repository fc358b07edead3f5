"""The folder a run starts in, as the case's world shows it: read through, never written.

An agent reads ``system_prompt.txt`` or opens ``state/app.sqlite`` relative to the
folder it was started in. The world's working folder (``/agent``) shows that real
folder's files and folders, read lazily; the first change the agent makes to one
of them (a write, a truncation, an ``fsync``, a rename, a removal, a database
commit) first adopts the real content onto the crash disk, as a file that was
durable before the case began, and the change then goes to the world like any
other. The real folder is never written, and every case starts from its real
contents again.

The run's own results folder (``--out``, often inside the start folder) is not shown:
it fills while the cases run, and an agent that lists its folder would see a different
tree in every case (``harness run`` names it in :data:`HIDDEN_VARIABLE`).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from fakes import CrashDisk


@dataclass(frozen=True)
class StartFolder:
    """The real folder ``real`` shown as the world's folder ``world``.

    >>> folder = StartFolder(world="/agent", real="/home/me/project")
    >>> folder.real_path("/agent/state/app.db"), folder.real_path("/tmp/x")
    ('/home/me/project/state/app.db', None)
    """

    world: str
    real: str
    hidden: tuple[str, ...] = ()
    """Real folders inside ``real`` the world does not show (the run's results)."""

    def real_path(self, path: str) -> str | None:
        """The real path ``path`` of the world stands for (None outside the working folder,
        or in a hidden folder)."""
        path = posixpath.normpath(path)
        if path == self.world:
            return self.real
        if not path.startswith(self.world.rstrip("/") + "/"):
            return None
        real = os.path.join(self.real, path[len(self.world):].lstrip("/"))
        return real if self.shows(real) else None

    def shows(self, real: str) -> bool:
        """Whether the real path ``real`` is shown (it is in no hidden folder)."""
        return not any(real == folder or real.startswith(folder + os.sep)
                       for folder in self.hidden)

    def adopt(self, disk: CrashDisk, path: str) -> bool:
        """Put ``path``'s real file or folder on ``disk`` unless the disk already has it.

        True when the disk now holds ``path``. Reads the real disk only (never under
        the fake file system: this module keeps the real ``os``).
        """
        path = posixpath.normpath(path)
        if disk.view().exists(path):
            return True
        if path in disk.adopted:
            return False  # taken over once, then removed by the world: gone for good
        real = self.real_path(path)
        if real is None or not os.path.lexists(real) or os.path.islink(real):
            return False
        if os.path.isdir(real):
            disk.make_durable_folders(path)
            disk.adopted.add(path)
        else:
            disk.make_durable_folders(posixpath.dirname(path))
            disk.adopt_durable_file(path, read_real(real))
        return True

    def is_real_folder(self, path: str) -> bool:
        real = self.real_path(path)
        return real is not None and os.path.isdir(real) and not os.path.islink(real)

    def real_bytes(self, path: str) -> bytes | None:
        """The real file's bytes behind the world's ``path`` (None if there is none)."""
        real = self.real_path(path)
        if real is None or not os.path.isfile(real) or os.path.islink(real):
            return None
        return read_real(real)




#: Where ``harness run`` names the folders cases must not see (:func:`harness._environment.
#: hiding`); in the environment, so that its workers inherit it however they are started.
HIDDEN_VARIABLE = "HARNESS_HIDDEN_FOLDERS"
# What a sealed worker read of it before its environment became the agent's, which never
# names it (:func:`keep_hidden_folders`).
_KEPT: list[str] = []


def keep_hidden_folders() -> None:
    """Remember the hidden folders in this process: its ``os.environ`` is about to become
    the agent's (:func:`harness._environment.become_guest`)."""
    _KEPT[:] = [os.environ.get(HIDDEN_VARIABLE, "")]


def hidden_folders() -> tuple[str, ...]:
    """The folders :data:`HIDDEN_VARIABLE` names, absolute: as a sealed worker kept them,
    else from ``os.environ``."""
    listed = _KEPT[0] if _KEPT else os.environ.get(HIDDEN_VARIABLE, "")
    return tuple(os.path.abspath(p) for p in listed.split(os.pathsep) if p)


def read_real(path: str) -> bytes:
    """The bytes of the real file ``path``, through the real ``os``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
