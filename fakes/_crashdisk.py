"""An in-memory disk that knows which bytes are durable, and crashes on request.

Persistence model (DESIGN §3, after ALICE and CrashMonkey; seed 002 §19.6: "crash
before and after every write to durable records"):

* every file has *data* (what the process reads) and *durable* bytes (what an
  ``fsync`` made durable); every folder has *names* and *durable names* (what a
  folder ``fsync`` made durable). A new file whose folder was never fsynced is
  not durable, however often its data was;
* every mutating operation (``mkdir``, ``create``, ``write``, ``fsync``,
  ``fsync_dir``, ``truncate``, ``rename``, ``unlink``, ``rmdir``) is a
  :class:`PersistencePoint` with a
  stable id ``<role>:<op>#<n>``: ``journal:fsync#3`` is the third fsync of the
  file whose role is ``journal``. Reads are not points. ``n`` counts over the
  whole world, across incarnations, so the same program reaches the same ids;
* a :class:`CrashPlan` stops the process at one point, ``before`` or ``after``
  the operation, with one crash class:

  ====================  ====================================================
  ``unsynced_lost``      every file keeps only its fsynced bytes
  ``torn_append_short``  the last unsynced append survives, cut short
  ``torn_append_zeros``  … its full length survives, the end zero-filled
  ``torn_append_garbage`` … its full length survives, the end seeded garbage
  ``missing_dir_fsync``  as ``unsynced_lost``, and names never made durable by
                         a folder fsync disappear (with what is inside them);
                         a removal never made durable by one is undone
  ``process_killed``     SIGKILL, not power loss: everything handed to the OS
                         survives, data and names; only what sat in the
                         process's own buffers (never written) is lost
  ``eio_on_write``       no crash: the ``write`` (or database ``commit``) raises ``EIO``
  ``eio_on_fsync``       no crash: the ``fsync``/``fsync_dir`` (or ``commit``) raises
                         ``EIO``
  ``enospc_on_write``    no crash: the ``write`` (or ``commit``) raises ``ENOSPC``
  ====================  ====================================================

  A database's commit (:meth:`_CrashDiskView.commit_file`, the ``commit`` op) replaces
  a file's whole content in one step, as SQLite's atomic commit does: it is never
  torn, and it is durable at once or only once synced, as the database's settings say.

  A crash raises :class:`SimulatedCrash`, a ``BaseException`` that an
  ``except Exception`` in agent code cannot swallow, and freezes the world: every
  later operation of the dead incarnation (a late ``finally:``) is refused with
  :class:`DeadIncarnationError`. ``before`` an error class means the operation
  did nothing; ``after`` means it took effect and still reported the error.

Example::

    disk = CrashDisk(plan=CrashPlan("journal:fsync#1", "before", "unsynced_lost"))
    view = disk.view()
    view.mkdir("/state")
    with view.open_append("/state/journal.jsonl") as f:
        f.write(b"intent\\n")
        f.fsync()                      # raises SimulatedCrash
    new = disk.restart()               # the next incarnation
    new.read("/state/journal.jsonl")   # b"" : the write was never durable
"""

from __future__ import annotations

import copy
import errno
import os
import posixpath
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, final, get_args

from fakes._threads import settle_case_threads
from harness._errors import ConfigError, one_of
from harness.ports import AppendFile, AppendFileHandle, call_os, dirname, normpath, rng_stream

T = TypeVar("T")

CrashClass = Literal[
    "unsynced_lost",
    "torn_append_short",
    "torn_append_zeros",
    "torn_append_garbage",
    "missing_dir_fsync",
    "process_killed",
    "eio_on_write",
    "eio_on_fsync",
    "enospc_on_write",
]
CRASH_CLASSES: tuple[CrashClass, ...] = get_args(CrashClass)
#: What each crash class leaves behind, in a sentence (the README's table is made from it).
CRASH_CLASS_MEANINGS: Mapping[CrashClass, str] = {
    "unsynced_lost": "power loss: every file keeps only the bytes an fsync made durable",
    "torn_append_short": "power loss in the middle of an append: the last unsynced append "
                         "survives, cut short",
    "torn_append_zeros": "the same, at its full length with the end zero-filled",
    "torn_append_garbage": "the same, at its full length with the end seeded garbage",
    "missing_dir_fsync": "as unsynced_lost, and names never made durable by a folder fsync "
                         "disappear (with what is inside them); a removal never made durable "
                         "by one is undone",
    "process_killed": "SIGKILL, not power loss: everything handed to the OS survives, data "
                      "and names; only what sat in the process's own buffers is lost (the "
                      "crash of a process restarted by its supervisor, such as a double "
                      "booking after a kill between the side effect and its record)",
    "eio_on_write": "no crash: the write (or database commit) raises EIO; the agent carries on",
    "eio_on_fsync": "no crash: the fsync or folder fsync (or commit) raises EIO; the agent "
                    "carries on",
    "enospc_on_write": "no crash: the write (or commit) raises ENOSPC; the agent carries on",
}
# Classes that raise an OSError at the point instead of stopping the process,
# with the operations they can hit.
_ERROR_CLASSES: dict[str, tuple[int, frozenset[str]]] = {
    "eio_on_write": (errno.EIO, frozenset({"write", "commit"})),
    "eio_on_fsync": (errno.EIO, frozenset({"fsync", "fsync_dir", "commit"})),
    "enospc_on_write": (errno.ENOSPC, frozenset({"write", "commit"})),
}
POINT_OPS = (
    "mkdir",
    "create",
    "write",
    "fsync",
    "fsync_dir",
    "truncate",
    "rename",
    "unlink",
    "rmdir",
    "commit",
)
When = Literal["before", "after"]


@dataclass(frozen=True)
class PersistencePoint:
    """One durable operation reached in a run: ``journal:fsync#3`` on ``path``."""

    id: str
    role: str
    op: str
    path: str
    generation: int


_ROLE_WORD = re.compile(r"[a-z][a-z0-9_]*")
_LEADING_DIGIT_WORD = re.compile(r"[0-9][a-z0-9_]*")


def role_for_path(path: str) -> str:
    """The role a path's persistence points are named by: the first word of its file name.

    Point ids must be writable in a scenario (``<role>:<op>#<n>``), so a hidden
    file or a temporary one gets the word its name starts with, and a name that
    starts with a digit keeps it behind an ``n`` (never a word cut out of it).

    >>> [role_for_path(p) for p in ("/state/journal.jsonl", "/a/.state-k3x9.json", "/", "/a/42")]
    ['journal', 'state', 'root', 'n42']
    >>> role_for_path("/agent/1b1cf602e9.tmp")
    'n1b1cf602e9'
    """
    base = posixpath.basename(path).lower() or "root"
    stem = base.split(".", 1)[0] or base.lstrip(".")
    leading = _LEADING_DIGIT_WORD.match(stem)
    if leading:
        return f"n{leading.group()}"
    word = _ROLE_WORD.search(stem)
    if word:
        return word.group()
    digits = "".join(c for c in stem if c.isalnum() or c == "_")
    return f"n{digits}" if digits else "file"


def crash_class_applies(crash_class: str, point_id: str) -> bool:
    """Whether ``crash_class`` can happen at ``point_id``.

    >>> crash_class_applies("eio_on_fsync", "journal:fsync#2")
    True
    >>> crash_class_applies("eio_on_fsync", "journal:write#2")
    False
    """
    if crash_class not in _ERROR_CLASSES:
        return True
    return _op_of(point_id) in _ERROR_CLASSES[crash_class][1]


def _op_of(point_id: str) -> str:
    return point_id.rpartition(":")[2].partition("#")[0]


@dataclass(frozen=True)
class CrashPlan:
    """Stop the process at ``point_id`` (``before`` or ``after`` it) with ``crash_class``.

    >>> CrashPlan("journal:fsync#3", "after", "torn_append_zeros").point_id
    'journal:fsync#3'
    """

    point_id: str
    when: When = "before"
    crash_class: CrashClass = "unsynced_lost"

    def __post_init__(self) -> None:
        if _op_of(self.point_id) not in POINT_OPS or "#" not in self.point_id:
            raise ConfigError(
                "point_id", self.point_id, "'<role>:<op>#<n>' with op " + one_of(POINT_OPS)
            )
        if self.when not in ("before", "after"):
            raise ConfigError("when", self.when, one_of(("before", "after")))
        if self.crash_class not in CRASH_CLASSES:
            raise ConfigError("crash_class", self.crash_class, one_of(CRASH_CLASSES))
        if not crash_class_applies(self.crash_class, self.point_id):
            ops = sorted(_ERROR_CLASSES[self.crash_class][1])
            raise ConfigError(
                "crash_class",
                self.crash_class,
                f"a point whose op is {one_of(ops)}",
                hint=f"{self.point_id} is a {_op_of(self.point_id)!r} point",
            )


class SimulatedCrash(BaseException):
    """The process died at a persistence point.

    A ``BaseException`` so that ``except Exception`` in the agent cannot swallow it.

    Its text names the point, not the crash class: a dying process cannot tell a power
    loss from a kill, the class only decides what its files hold after. The class is
    kept for the harness (``crash_class``); where the crash kept what it found for other
    classes too (:class:`CrashSource`), reading it (or pickling the crash) is noted
    there: a crash whose class no code read unwinds alike in every class.
    """

    _source: CrashSource | None = None

    def __init__(self, point_id: str, crash_class: str, generation: int,
                 source: CrashSource | None = None) -> None:
        self.point_id = point_id
        self._class = crash_class
        self.generation = generation
        super().__init__(f"simulated crash at {point_id}, incarnation {generation}")
        self._source = source

    def _class_read(self) -> None:
        if self._source is not None:
            self._source.class_read = True

    @property
    def crash_class(self) -> str:
        self._class_read()
        return self._class

    @crash_class.setter
    def crash_class(self, value: str) -> None:
        self._class = value

    def __reduce__(self) -> str | tuple[object, ...]:
        self._class_read()
        return BaseException.__reduce__(self)

    def __reduce_ex__(self, protocol: Any) -> str | tuple[object, ...]:
        self._class_read()
        return BaseException.__reduce_ex__(self, protocol)


class ProcessGone(SimulatedCrash):
    """A crashed incarnation's loop needed time to go on; a dead process has none.

    Raised by the clock's event loop, outside the agent's code, when all that the
    crashed incarnation still runs waits for time: a framework's step the crash ended
    sends no event, and the workflow waiting for it would hold the clock until the
    harness's guard. The incarnation ends at the instant it crashed.
    """

    def __init__(self) -> None:
        super().__init__("", "process_gone", 0)


#: The most bytes one case may write to the crash disk (appends, whoever writes them): far
#: above any honest run, low enough that a runaway writer is stopped long before RAM is gone.
MAX_DISK_BYTES = 64 * 1024 * 1024


class HarnessLimitExceeded(BaseException):
    """A case went past a harness limit (crash-disk bytes): the case stops and fails with it.

    A ``BaseException`` for the reason :class:`SimulatedCrash` is one: an agent's
    ``except Exception`` must not swallow the stop.
    """

    def __init__(self, limit: str, detail: str) -> None:
        self.limit = limit
        super().__init__(f"harness_limit: {detail}")


class DeadIncarnationError(SimulatedCrash):
    """The world refused an operation from an incarnation that already crashed."""

    def __init__(self, what: str, generation: int, current: int) -> None:
        self.what = what
        self.current = current
        BaseException.__init__(
            self,
            f"refused {what}: incarnation {generation} is dead (the world is at {current})",
        )
        self.point_id = ""
        self.crash_class = "dead_incarnation"
        self.generation = generation


@final
class Incarnations:
    """The world's record of which agent process is alive.

    Shared by the disk and the tool ledger: after a crash both refuse the dead
    incarnation, and :meth:`restart` starts the next one.

    >>> lives = Incarnations()
    >>> lives.restart()
    2
    """

    def __init__(self) -> None:
        self.current = 1
        self.crashed = False
        self.refused: list[str] = []

    def check(self, generation: int, what: str) -> None:
        """Raise :class:`DeadIncarnationError` unless ``generation`` is alive."""
        if generation != self.current or self.crashed:
            self.refused.append(what)
            raise DeadIncarnationError(what, generation, self.current)

    def crash(self) -> None:
        self.crashed = True

    def dead(self) -> bool:
        """Whether the running incarnation has crashed (its process is gone)."""
        return self.crashed

    def restart(self) -> int:
        self.current += 1
        self.crashed = False
        return self.current


@dataclass
class _Inode:
    is_dir: bool
    # Copy on write: a copy of the disk (one at every point of a recorded run) freezes
    # the bytes into an immutable value that it and the original share; the next append
    # to either makes its own mutable buffer again, and appends to it are amortised.
    data: bytes | bytearray = b""
    # The durable bytes are _synced[:_synced_length] (see synced()); read them as durable.
    _synced: bytes | bytearray = b""
    # (offset, length, tick) of the last append, for torn-append crash states.
    last_write: tuple[int, int, int] | None = None
    _synced_length: int | None = None

    def append(self, chunk: bytes) -> None:
        if isinstance(self.data, bytes):
            self.data = bytearray(self.data)
        self.data += chunk

    def synced(self) -> None:
        """Make the current bytes durable (what an fsync does).

        Copying the file at every fsync made a log's fsyncs cost the square of its
        length. A buffer is only ever extended in place (a truncate or a rewrite
        puts a new one in ``data``), so its first bytes stay what they were: the
        durable bytes are kept as the buffer and a length, copied when read.
        """
        if isinstance(self.data, bytes):
            self._synced, self._synced_length = self.data, None
        else:
            self._synced, self._synced_length = self.data, len(self.data)

    @property
    def durable(self) -> bytes:
        if self._synced_length is not None:
            self._synced, self._synced_length = bytes(self._synced[:self._synced_length]), None
        assert isinstance(self._synced, bytes)
        return self._synced

    @durable.setter
    def durable(self, value: bytes) -> None:
        self._synced, self._synced_length = value, None

    def __deepcopy__(self, memo: dict[int, object]) -> _Inode:
        if not isinstance(self.data, bytes):
            self.data = bytes(self.data)
        twin = memo[id(self)] = _Inode(self.is_dir, self.data, self.durable, self.last_write)
        return twin


@final
class CrashDisk:
    """An in-memory :class:`harness.ports.Disk` world; see the module docstring.

    ``roles`` maps paths to the role used in point ids (default: the file name
    without its extension, ``/state/journal.jsonl`` → ``journal``). ``seed``
    drives torn lengths and garbage bytes.
    """

    def __init__(
        self,
        *,
        plan: CrashPlan | None = None,
        roles: Mapping[str, str] | None = None,
        seed: int = 0,
        incarnations: Incarnations | None = None,
        max_bytes: int = MAX_DISK_BYTES,
    ) -> None:
        self.plan = plan
        self.max_bytes = max_bytes
        self.bytes_written = 0
        self.incarnations = incarnations or Incarnations()
        self.points: list[PersistencePoint] = []
        self.fired: PersistencePoint | None = None
        self._roles = dict(roles or {})
        self._seed = seed
        self._counts: dict[tuple[str, str], int] = {}
        self._inodes: dict[int, _Inode] = {0: _Inode(is_dir=True)}
        self._names: dict[str, int] = {"/": 0}
        self._durable_names: dict[str, int] = {"/": 0}
        self._next_inode = 1
        self._tick = 0
        self._after_crash: _Snapshot | None = None
        # Files that existed before the case, taken over from the real disk (never
        # forgotten: a crash cannot undo what was there before the case began).
        self.adopted: set[str] = set()
        # Told of every persistence point, before and after its operation (a recording
        # run keeps the world's state there, to build crash states without re-running).
        self.observer: Callable[[PersistencePoint, When], None] | None = None
        # Called before a crash state is taken: the agent's other threads finish the
        # work under way (a checkpoint a framework saves on a thread of its own), so
        # what survives does not depend on how busy the machine is.
        self.before_crash: Callable[[], object] | None = settle_case_threads
        # Set to keep, at the next crash, what it found before its class was applied:
        # the crash state of any other class at the same instant (crashed_as).
        self.keep_crash_source = False
        self.crash_source: CrashSource | None = None

    # -- incarnations -------------------------------------------------------
    def view(self) -> _CrashDiskView:
        """The disk as the living incarnation sees it."""
        return _CrashDiskView(self, self.incarnations.current)

    def for_incarnation(self, generation: int) -> _CrashDiskView:
        """The disk as incarnation ``generation`` sees it (refused once it is dead)."""
        return _CrashDiskView(self, generation)

    def restart(self) -> _CrashDiskView:
        """Start the next incarnation on what survived, and return its view.

        After a crash, the crash state computed at the crash instant; after a
        clean stop (no crash), everything, since the OS kept its page cache.
        """
        if self._after_crash is not None:
            self._install(self._after_crash)
            self._after_crash = None
        self.incarnations.restart()
        return self.view()

    def durable_view(self, crash_class: CrashClass = "unsynced_lost") -> dict[str, bytes]:
        """The files a new incarnation would see after a crash of ``crash_class`` now.

        After a crash has happened, the state that crash left (whatever the argument).
        """
        state = self._after_crash or self._crash_state(crash_class, "durable_view")
        return state.files()

    def files(self) -> dict[str, bytes]:
        """Every file's current (volatile) content, by path."""
        return {
            p: bytes(self._inodes[i].data)
            for p, i in sorted(self._names.items())
            if not self._inodes[i].is_dir
        }

    def folders(self) -> list[str]:
        """Every folder's path (the root included), sorted: parents before children."""
        return sorted(p for p, i in self._names.items() if self._inodes[i].is_dir)

    def make_durable_folders(self, path: str) -> None:
        """Create ``path`` and its missing parents, durable at once and without points.

        The world's own setup (an agent's working folder that exists before it
        starts), not an operation of the agent: no persistence point, no crash.

        >>> disk = CrashDisk()
        >>> disk.make_durable_folders("/home/agent")
        >>> disk.folders(), disk.points
        (['/', '/home', '/home/agent'], [])
        """
        path = normpath(path)
        if path == "/" or path in self._names:
            return
        self.make_durable_folders(dirname(path))
        number = self._next_inode
        self._next_inode += 1
        self._inodes[number] = _Inode(is_dir=True)
        self._names[path] = self._durable_names[path] = number

    def adopt_durable_file(self, path: str, data: bytes) -> None:
        """Hold ``data`` at ``path``, durable at once and without points, and remember it.

        A file that existed before the case (a real file of the folder the run
        starts in, taken over when the agent first changes it). Its folder must
        exist. :attr:`adopted` keeps the path, so a world can tell a removed
        adopted file from one it never had.

        >>> disk = CrashDisk()
        >>> disk.adopt_durable_file("/prompt.txt", b"hi")
        >>> disk.files(), disk.points, disk.adopted
        ({'/prompt.txt': b'hi'}, [], {'/prompt.txt'})
        """
        path = normpath(path)
        number = self._next_inode
        self._next_inode += 1
        self._inodes[number] = _Inode(False, data, data)
        self._names[path] = self._durable_names[path] = number
        self.adopted.add(path)

    # -- persistence points -------------------------------------------------
    def assign_role(self, path: str, role: str) -> None:
        """Name ``path``'s persistence points by ``role`` (``sqlite:commit#2``), not its name."""
        self._roles[normpath(path)] = role

    def role_of(self, path: str) -> str:
        role = self._roles.get(path)
        if role is None:
            # Remembered: every persistence point asks, for the same few paths.
            role = self._roles[path] = role_for_path(path)
        return role

    def _op(self, generation: int, op: str, path: str, apply: Callable[[], T]) -> T:
        self.incarnations.check(generation, f"{op} {path}")
        role = self.role_of(path)
        n = self._counts.get((role, op), 0) + 1
        self._counts[(role, op)] = n
        point = PersistencePoint(f"{role}:{op}#{n}", role, op, path, generation)
        self.points.append(point)
        plan = self.plan if self.plan is not None and self.plan.point_id == point.id else None
        if self.observer is not None:
            self.observer(point, "before")
        if plan is not None and plan.when == "before":
            self._fire(plan, point)
        result = apply()
        if self.observer is not None:
            self.observer(point, "after")
        if plan is not None:
            self._fire(plan, point)
        return result

    def _fire(self, plan: CrashPlan, point: PersistencePoint) -> None:
        self.fired = point
        if plan.crash_class in _ERROR_CLASSES:
            code = _ERROR_CLASSES[plan.crash_class][0]
            raise OSError(code, errno.errorcode[code], point.path)
        raise self.crash_here(point, plan.crash_class)

    def crash_here(self, point: PersistencePoint, crash_class: CrashClass) -> SimulatedCrash:
        """Kill the living incarnation at ``point``, as a plan firing there would.

        The disk is left in the crash state of ``crash_class``; the crash to raise is
        returned (a disk built from a recorded run's state crashes without raising).
        """
        self.fired = point
        if self.before_crash is not None:
            self.before_crash()
        self._after_crash = self._crash_state(crash_class, point.id)
        self.incarnations.crash()
        return SimulatedCrash(point.id, crash_class, point.generation, self._kept(point.id))

    def crash_at_event(self, event: str, crash_class: CrashClass) -> SimulatedCrash:
        """Kill the living incarnation at a world event that is not a disk operation.

        The disk is left in the crash state of ``crash_class`` (an error class,
        which needs an operation to fail, is refused), and the crash to raise is
        returned so that the caller raises it where the event happened.
        """
        if crash_class in _ERROR_CLASSES:
            raise ConfigError("crash_class", crash_class,
                              "a crash class that kills the process, not an I/O error",
                              hint=f"{event} is a world event, not a disk operation")
        generation = self.incarnations.current
        if self.before_crash is not None:
            self.before_crash()
        self._after_crash = self._crash_state(crash_class, event)
        self.incarnations.crash()
        return SimulatedCrash(event, crash_class, generation, self._kept(event))

    # -- crash states -------------------------------------------------------
    def _crash_state(self, crash_class: str, salt: str) -> _Snapshot:
        return CrashSource(self._names, self._durable_names, self._inodes, self._seed,
                           salt).state(crash_class)

    def _kept(self, salt: str) -> CrashSource | None:
        """What the crash found, kept where :attr:`keep_crash_source` asks (else None)."""
        if not self.keep_crash_source:
            return None
        self.crash_source = CrashSource(dict(self._names), dict(self._durable_names),
                                        copy.deepcopy(self._inodes), self._seed, salt)
        return self.crash_source

    def crashed_as(self, crash_class: CrashClass) -> None:
        """Leave the crashed disk in the state a crash of ``crash_class`` would have left at
        the same instant (the crash kept what it found: :attr:`keep_crash_source`).

        Where the dying process never read its crash's class, its unwinding is the same in
        every class, and so is the rest of the world: only the files the restart finds
        differ, and this sets them.
        """
        source = self.crash_source
        if source is None or self._after_crash is None:
            raise ValueError("the disk kept no crash source, or has not crashed")
        self._after_crash = source.state(crash_class)

    def state_key(self) -> bytes:
        """What the disk's future depends on, with the history that led there left out.

        Two disks with one key answer every later operation alike and leave alike
        crash states: the same names and durable names, the same bytes (volatile and
        durable) and the same order of unsynced appends (which one a torn crash tears).
        Inode numbers, point counters and tick values are left out: they only number.
        """
        ids = _renamed(self._names, self._durable_names)
        parts: list[object] = [
            sorted((path, ids[n]) for path, n in self._names.items()),
            sorted((path, ids[n]) for path, n in self._durable_names.items()),
            [(ids[n], i.is_dir, bytes(i.data), i.durable, i.last_write and i.last_write[:2])
             for n, i in sorted(self._inodes.items(), key=lambda item: ids.get(item[0], -1))
             if n in ids],
            [ids.get(n, ("orphan", bytes(i.data), i.durable, i.last_write[:2]))
             for n, i in sorted(self._inodes.items(), key=_tick_of) if i.last_write],
        ]
        if self.adopted:  # a removed adopted file stays hidden: part of the future
            parts.append(sorted(self.adopted))
        return repr(parts).encode()

    def crash_state_key(self) -> bytes:
        """What a restart after the crash that happened will find, and nothing else.

        The names and bytes the crash left (inode numbers renamed in name order, so
        that two crashes leaving the same files have one key); what was written before
        the crash and lost is not part of it. A disk that has not crashed has no such
        state: :class:`ValueError`.
        """
        state = self._after_crash
        if state is None:
            raise ValueError("the disk has not crashed")
        ids = _renamed(state.names)
        parts = [sorted((path, ids[n]) for path, n in state.names.items()),
                 [(ids[n], i.is_dir, bytes(i.data)) for n, i in
                  sorted(state.inodes.items(), key=lambda item: ids.get(item[0], -1))
                  if n in ids]]
        return repr(parts).encode()

    def _install(self, state: _Snapshot) -> None:
        self._inodes = state.inodes
        self._names = dict(state.names)
        self._durable_names = dict(state.names)
        self._next_inode = max(state.inodes, default=0) + 1


@dataclass
class CrashSource:
    """What a crash found on the disk, before its class decided what survives.

    ``class_read``: code read the class of the crash raised (:class:`SimulatedCrash`), so
    what the dying process did may depend on it.
    """

    names: dict[str, int]
    durable_names: dict[str, int]
    inodes: dict[int, _Inode]
    seed: int
    salt: str
    class_read: bool = False

    def state(self, crash_class: str) -> _Snapshot:
        """The files a crash of ``crash_class`` leaves."""
        names = self.durable_names if crash_class == "missing_dir_fsync" else self.names
        names = {p: i for p, i in names.items() if _parent_survives(p, names)}
        torn = self._torn_inode() if crash_class.startswith("torn_append") else None
        rng = rng_stream(self.seed, f"crash:{self.salt}:{crash_class}")
        # A killed process leaves the OS running: its page cache still holds
        # every byte the process wrote, fsynced or not.
        keeps_page_cache = crash_class == "process_killed"
        survivors: dict[int, _Inode] = {}
        for i in sorted(set(names.values())):
            inode = self.inodes[i]
            volatile = inode.is_dir or keeps_page_cache
            content = bytes(inode.data) if volatile else inode.durable
            if i == torn:
                content = _torn(inode, crash_class, rng)
            survivors[i] = _Inode(inode.is_dir, content, content)
        return _Snapshot(names, survivors)

    def _torn_inode(self) -> int | None:
        """The file with the most recent append that is not durable yet."""
        latest: tuple[int, int] | None = None
        for i, inode in self.inodes.items():
            w = inode.last_write
            if w is None or inode.is_dir or not inode.data.startswith(inode.durable):
                continue
            if w[0] >= len(inode.durable) and (latest is None or w[2] > latest[0]):
                latest = (w[2], i)
        return None if latest is None else latest[1]


@dataclass
class _Snapshot:
    names: dict[str, int]
    inodes: dict[int, _Inode]

    def files(self) -> dict[str, bytes]:
        return {
            p: bytes(self.inodes[i].data)
            for p, i in sorted(self.names.items())
            if not self.inodes[i].is_dir
        }


def _renamed(*names: Mapping[str, int]) -> dict[int, int]:
    """Inode numbers renumbered in order of the paths that name them: two disks with the
    same files, reached by different histories, get the same numbers."""
    ids: dict[int, int] = {}
    for mapping in names:
        for _, number in sorted(mapping.items()):
            ids.setdefault(number, len(ids))
    return ids


def _tick_of(item: tuple[int, _Inode]) -> int:
    return item[1].last_write[2] if item[1].last_write else -1


def _torn(inode: _Inode, crash_class: str, rng: random.Random) -> bytes:
    assert inode.last_write is not None
    start, length, _ = inode.last_write
    keep = start + (rng.randint(1, length - 1) if length >= 2 else 0)
    data = bytes(inode.data[: start + length])
    if crash_class == "torn_append_short":
        return data[:keep]
    if crash_class == "torn_append_zeros":
        return data[:keep] + bytes(start + length - keep)
    return data[:keep] + bytes(rng.randrange(256) for _ in range(start + length - keep))


def _parent_survives(path: str, names: Mapping[str, int]) -> bool:
    while path != "/":
        path = dirname(path)
        if path not in names:
            return False
    return True


def _missing(path: str) -> OSError:
    return FileNotFoundError(errno.ENOENT, "No such file or directory", path)


@final
class _CrashDiskView:
    """One incarnation's handle on a :class:`CrashDisk`; satisfies ``Disk``."""

    def __init__(self, disk: CrashDisk, generation: int) -> None:
        self._disk = disk
        self.generation = generation

    def _inode(self, path: str, op: str) -> _Inode:
        self._disk.incarnations.check(self.generation, f"{op} {path}")
        number = self._disk._names.get(normpath(path))
        if number is None:
            raise _missing(path)
        return self._disk._inodes[number]

    def _file(self, op: str, path: str) -> _Inode:
        return call_os(op, path, lambda: self._inode(path, op))

    def _op(self, op: str, path: str, apply: Callable[[], T]) -> T:
        return call_os(op, path, lambda: self._disk._op(self.generation, op, path, apply))

    def exists(self, path: str) -> bool:
        self._disk.incarnations.check(self.generation, f"exists {path}")
        return normpath(path) in self._disk._names

    def size(self, path: str) -> int:
        return len(self._file("size", path).data)

    def read(self, path: str) -> bytes:
        return bytes(self._file("read", path).data)

    def mkdir(self, path: str) -> bool:
        path = normpath(path)
        self._file("mkdir", dirname(path))
        if self.exists(path):
            return False
        self._op("mkdir", path, lambda: self._link(path, _Inode(is_dir=True)))
        return True

    def open_append(self, path: str) -> AppendFile:
        path = normpath(path)
        self._file("open", dirname(path))
        if self.exists(path):
            return _CrashAppendFile(self, path, self._disk._names[path], created=False)
        number = self._op("create", path, lambda: self._link(path, _Inode(is_dir=False)))
        return _CrashAppendFile(self, path, number, created=True)

    def _link(self, path: str, inode: _Inode) -> int:
        number = self._disk._next_inode
        self._disk._next_inode += 1
        self._disk._inodes[number] = inode
        self._disk._names[path] = number
        return number

    def commit_file(self, path: str, data: bytes, *, durable: bool) -> None:
        """Replace the whole content of ``path`` with ``data`` in one atomic step.

        A database's commit: never torn. ``durable`` says whether the commit reached
        the disk's surface (SQLite's ``synchronous`` and ``journal_mode`` decide); one
        that did not survives only a crash that keeps the page cache, until a later
        :meth:`_CrashAppendFile.fsync` of the file. A durable commit makes the file's
        name durable too: SQLite syncs the folder when it creates its journal.
        """
        path = normpath(path)
        self._file("commit", dirname(path))
        self._op("commit", path, lambda: self._replace_content(path, bytes(data), durable))

    def _replace_content(self, path: str, data: bytes, durable: bool) -> None:
        disk = self._disk
        number = disk._names.get(path)
        if number is None:
            number = self._link(path, _Inode(is_dir=False))
        inode = disk._inodes[number]
        disk.bytes_written += max(0, len(data) - len(inode.data))
        if disk.bytes_written > disk.max_bytes:
            raise HarnessLimitExceeded(
                "disk_bytes", f"the agent's databases grew the crash disk to "
                f"{disk.bytes_written:,} bytes, more than the {disk.max_bytes:,} a case may write")
        inode.data, inode.last_write = data, None
        if durable:
            inode.durable = data
            disk._durable_names[path] = number

    def truncate(self, path: str, length: int) -> None:
        inode = self._file("truncate", path)
        self._op("truncate", path, lambda: setattr(inode, "data", inode.data[:length]))

    def fsync_dir(self, path: str) -> None:
        path = normpath(path)
        self._file("fsync_dir", path)
        self._op("fsync_dir", path, lambda: self._sync_names(path))

    def _sync_names(self, folder: str) -> None:
        names, durable = self._disk._names, self._disk._durable_names
        for p in [p for p in durable if p != "/" and dirname(p) == folder]:
            del durable[p]
        for p, number in names.items():
            if p != "/" and dirname(p) == folder:
                durable[p] = number

    def replace(self, source: str, target: str) -> None:
        source, target = normpath(source), normpath(target)
        self._file("rename", source)
        names = self._disk._names
        self._op("rename", target, lambda: names.__setitem__(target, names.pop(source)))

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` names a folder (False if it names a file or nothing)."""
        self._disk.incarnations.check(self.generation, f"is_dir {path}")
        number = self._disk._names.get(normpath(path))
        return number is not None and self._disk._inodes[number].is_dir

    def unlink(self, path: str) -> None:
        """Remove the file ``path``; like a rename, durable only after a folder fsync."""
        path = normpath(path)
        call_os("unlink", path, lambda: self._expect_kind("unlink", path, folder=False))
        self._op("unlink", path, lambda: self._disk._names.pop(path))

    def rmdir(self, path: str) -> None:
        """Remove the empty folder ``path``; durable only after its parent's fsync."""
        path = normpath(path)
        call_os("rmdir", path, lambda: self._expect_empty_folder(path))
        self._op("rmdir", path, lambda: self._disk._names.pop(path))

    def _expect_kind(self, op: str, path: str, *, folder: bool) -> None:
        if self._inode(path, op).is_dir != folder:
            code = errno.ENOTDIR if folder else errno.EISDIR
            raise OSError(code, os.strerror(code), path)

    def _expect_empty_folder(self, path: str) -> None:
        self._expect_kind("rmdir", path, folder=True)
        if any(p != "/" and dirname(p) == path for p in self._disk._names):
            raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), path)


@final
class _CrashAppendFile(AppendFileHandle):
    def __init__(self, view: _CrashDiskView, path: str, number: int, created: bool) -> None:
        super().__init__(path, created)
        self._view = view
        self._number = number

    def _inode(self) -> _Inode:
        return self._view._disk._inodes[self._number]

    def write(self, data: bytes) -> None:
        self._view._op("write", self._path, lambda: self._append(bytes(data)))

    def _append(self, data: bytes) -> None:
        inode, disk = self._inode(), self._view._disk
        disk.bytes_written += len(data)
        if disk.bytes_written > disk.max_bytes:
            raise HarnessLimitExceeded(
                "disk_bytes", f"the agent wrote {disk.bytes_written:,} bytes to the crash disk, "
                f"more than the {disk.max_bytes:,} a case may write")
        disk._tick += 1
        inode.last_write = (len(inode.data), len(data), disk._tick)
        inode.append(data)

    def fsync(self) -> None:
        self._view._op("fsync", self._path, self._inode().synced)

    def close(self) -> None:
        self._view._disk.incarnations.check(self._view.generation, f"close {self._path}")

    def closes_after(self, exc: BaseException | None) -> bool:
        # A simulated crash leaves the file as the crash found it: closing would be an
        # operation of a process that is gone.
        return not isinstance(exc, SimulatedCrash)
