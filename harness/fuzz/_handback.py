"""The example database of a sealed search: read from the real disk, written by the harness.

``harness fuzz`` runs the agent in a process sealed off by the kernel (the real disk
read-only), so that process cannot keep Hypothesis's example database itself. It reads
the saved examples from the disk, keeps what the search changes in memory and hands the
changes back as data; the harness's own process then makes the same changes to the
same :class:`DirectoryBasedExampleDatabase`, in the same order: the same files and bytes
as a search that wrote them itself.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "db"
    >>> sealed = HandedBackDatabase(folder)
    >>> sealed.save(b"key", b"example")
    >>> list(sealed.fetch(b"key")), folder.exists()
    ([b'example'], False)
    >>> apply_changes(folder.parent, sealed.sendable())
    >>> list(DirectoryBasedExampleDatabase(folder).fetch(b"key"))
    [b'example']
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from harness._errors import WorkerError


class HandedBackDatabase(ExampleDatabase):
    """The database at ``path`` as it is on disk, with this search's changes in memory."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._disk = DirectoryBasedExampleDatabase(path)  # only read: fetch writes nothing
        self._entries: dict[bytes, dict[bytes, None]] = {}
        self.changes: list[tuple[str, bytes, tuple[bytes, ...]]] = []
        """Each change: what was done, the value, and the key (a move: from, to)."""

    def _values(self, key: bytes) -> dict[bytes, None]:
        if key not in self._entries:  # in the disk's order, as the directory gives them
            self._entries[key] = dict.fromkeys(self._disk.fetch(key))
        return self._entries[key]

    def fetch(self, key: bytes) -> Iterable[bytes]:
        yield from list(self._values(key))

    def save(self, key: bytes, value: bytes) -> None:
        self._values(key)[value] = None
        self.changes.append(("save", value, (key,)))

    def delete(self, key: bytes, value: bytes) -> None:
        self._values(key).pop(value, None)
        self.changes.append(("delete", value, (key,)))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        # A move of its own: the directory database's rename keeps other files than a
        # delete and a save would (the entry that lists its keys).
        self._values(src).pop(value, None)
        self._values(dest)[value] = None
        self.changes.append(("move", value, (src, dest)))

    def sendable(self) -> dict[str, object]:
        """The folder's name and the changes, as JSON can carry them."""
        return {"name": self.path.name,
                "changes": [[op, _text(value), *map(_text, keys)]
                            for op, value, keys in self.changes]}


def apply_changes(under: Path, sent: object) -> None:
    """Make :meth:`HandedBackDatabase.sendable`'s changes to the database of that name
    ``under`` the folder given (never elsewhere: the agent may have written ``sent``)."""
    if not isinstance(sent, dict):
        raise WorkerError(["the fuzz search handed back no example database"])
    name, changes = str(sent.get("name")), sent.get("changes")
    if name != Path(name).name or name in {"", ".", ".."} or not isinstance(changes, list):
        raise WorkerError([f"the fuzz search handed back a database named {name!r}"])
    disk = DirectoryBasedExampleDatabase(under / name)
    try:
        for op, value, *keys in changes:
            _change(disk, str(op), _bytes(value), [_bytes(key) for key in keys])
    except (TypeError, ValueError) as error:
        raise WorkerError([f"the fuzz search handed back a change it could not mean: "
                           f"{error}"]) from None


def _change(disk: DirectoryBasedExampleDatabase, op: str, value: bytes, keys: list[bytes]
            ) -> None:
    if op == "move" and len(keys) == 2:
        disk.move(keys[0], keys[1], value)
    elif op in {"save", "delete"} and len(keys) == 1:
        (disk.save if op == "save" else disk.delete)(keys[0], value)
    else:
        raise ValueError(f"{op!r} of {len(keys)} key(s)")


def _bytes(text: object) -> bytes:
    return base64.b64decode(str(text), validate=True)


def _text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_handed_back(out: Path, found: object) -> None:
    """Write what the sealed search handed back, only under ``out`` (the agent may have
    written ``found``): its example database's changes, then its repro (``harness fuzz``
    and the pytest plugin's fuzz items alike)."""
    from harness.fuzz._repro import Repro
    from harness.fuzz._search import DATABASE_DIR

    if not isinstance(found, dict):
        raise WorkerError(["the fuzz search handed back no outcome"])
    for database in _listed(found, "databases"):
        apply_changes(out / DATABASE_DIR, database)
    for repro in _listed(found, "repros"):
        name = str(repro.get("name")) if isinstance(repro, dict) else ""
        if name != Path(name).name or not name.endswith(".yaml"):
            raise WorkerError([f"the fuzz search handed back a repro named {name!r}"])
        Repro(out / name, str(repro.get("text")), replay="").write()


def _listed(found: dict[str, Any], key: str) -> list[Any]:
    listed = found.get(key)
    if not isinstance(listed, list):
        raise WorkerError([f"the fuzz search handed back no list of {key}"])
    return listed
