"""The agent's own file I/O, through pyfakefs, onto a :class:`fakes.CrashDisk`.

An unchanged agent calls ``open``, ``os.write``, ``os.fsync``, ``os.replace``,
``pathlib`` and ``tempfile`` as it would on a real machine. While
:meth:`AgentFiles.active` runs, pyfakefs answers those calls from a fake file
system, and every operation that changes it is mirrored onto the crash disk,
which stays the only judge of durability:

===========================================  =====================================
what the agent does                          what the crash disk sees
===========================================  =====================================
creates a file (``open(p, "w")``, ``x``, …)  ``create``
hands bytes to the OS (flush, close,         ``write`` of what extends the file;
``os.write``)                                ``truncate`` first if it changed
                                             bytes already there
``open(p, "w")`` on a non-empty file,        ``truncate``
``os.truncate``, ``f.truncate()``
``os.fsync``/``os.fdatasync`` (file, folder)  ``fsync`` / ``fsync_dir``
``os.replace``/``os.rename``/``Path.rename``  ``rename``
``os.mkdir``/``os.makedirs``/``Path.mkdir``   ``mkdir`` (one per folder made)
``os.unlink``/``os.remove``/``os.rmdir``      ``unlink`` / ``rmdir``
===========================================  =====================================

Bytes still in the process's own buffers (a ``BufferedWriter`` or text wrapper
that was not flushed) never reach the crash disk: a crash loses them in every
class, ``process_killed`` included. ``EIO``/``ENOSPC`` reach the agent as the
``OSError`` the real call raises. A :class:`fakes.SimulatedCrash` propagates out
of the agent's call.

Real files the agent only reads are read through, read-only and lazily (a
folder is listed when first looked into): the interpreter's installation and
every ``site-packages`` (a library's packaged prompts, a tokenizer's encoding
files), the certificate bundles, the tokenizer and model caches that exist,
and the agent's own code (:func:`read_through_roots`). What the agent writes
goes to the fake file system and the crash disk, never the real disk: a new
file beside package data is the world's like any other; a real file written
over or removed (as root) is so for that incarnation only. The working folder
is the world's (``/agent``); given the folder the run starts in, it shows that
folder's files read through (:class:`StartFolder`): the agent's first change to
one adopts its real content onto the crash disk, durable as if it had been there
before the case, and the change is the world's from then on, crash states
included. Nothing relative reaches the real folder.

Code of the packages in :data:`REAL_FS_PACKAGES` (the harness, the HTTP stack,
the SDKs, the test tools, ``importlib``) keeps the real file system, and so does
the import system.

Example (the torn-state-file bug a naive save has)::

    def save(state):                       # the agent's code, unchanged
        with open("state.json", "w") as f:
            json.dump(state, f)

    disk = CrashDisk(plan=CrashPlan("state:truncate#1", "after", "process_killed"))
    files = AgentFiles(disk)
    with files.active(generation=1):       # raises SimulatedCrash in the second save
        save({"step": 1})
        save({"step": 2})
    disk.restart()
    with files.active(generation=2):
        open("state.json").read()          # '' : json.load fails on restart
"""

from __future__ import annotations

import contextlib
import copy
import errno
import functools
import inspect
import itertools
import os
import pathlib
import posixpath
import random
import site
import ssl
import stat
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import Any, ClassVar, Final, cast, final

from pyfakefs import (
    fake_filesystem,
    fake_io,
    fake_open,
    fake_os,
    fake_path,
    fake_pathlib,
    helpers,
)
from pyfakefs.fake_file import (
    FakeBinaryFileWrapper,
    FakeDirectory,
    FakeDirectoryFromRealDirectory,
    FakeDirWrapper,
    FakeFile,
    FakeFileFromRealFile,
    FakeFileWrapper,
    FakeTextFileWrapper,
    StandardStreamWrapper,
)
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.fake_filesystem_unittest import PATH_MODULE, Patcher
from pyfakefs.fake_os import FakeOsModule, handle_original_call
from pyfakefs.helpers import is_root

from fakes import CrashDisk, DeadIncarnationError, SimulatedCrash
from harness._errors import DiskError, HarnessError
from harness.intercept._start_folder import StartFolder, hidden_folders
from harness.ports import rng_stream

REAL_FS_PACKAGES: tuple[str, ...] = (
    "harness",
    "fakes",
    "reports",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "openai",
    "anthropic",
    "google",
    "pydantic",
    "pydantic_core",
    "pydantic_ai",
    "certifi",
    "ssl",
    "anyio",
    "sniffio",
    "h11",
    "h2",
    "jiter",
    "distro",
    "importlib",
    "pytest",
    "_pytest",
    "pluggy",
    "xdist",
    "execnet",
    "hypothesis",
    "respx",
    "ruamel",
    "polars",
    "jinja2",
    "numpy",
    "coverage",
)
"""Packages whose code keeps the real file system while an agent runs.

Extend it for a library of yours: ``AgentFiles(disk, real_fs_packages=REAL_FS_PACKAGES
+ ("mylib",))``. A package covers its submodules (``httpx`` covers ``httpx._client``).
"""

# pyfakefs asks this of each call it intercepts; its own answer walks a formatted
# stack and matches file names, which misses submodules of a skipped package.
_SKIP_CHECK = "is_called_from_skipped_module"
_SKIP_CHECK_USERS: tuple[ModuleType, ...] = (fake_os, fake_open, fake_io, fake_path, fake_pathlib)
_STDLIB = frozenset(sys.stdlib_module_names)
# setuptools' finders of an editable install (``__editable___NAME_finder``): part of the
# import system, which reads the real file system.
_EDITABLE_FINDERS = "__editable__"
_THIS_PACKAGE = __name__.rpartition(".")[0]
# Library modules that run a callable for their caller (anyio's worker threads,
# anyio.Path, anyio.open_file): what they run is the caller's I/O, not theirs.
_ON_BEHALF_OF_CALLER = ("anyio._backends.", "anyio._core._fileio", "anyio.to_thread")


@final
class _LibraryCallers:
    """pyfakefs's skip check, by module name: is the nearest caller library code?

    Frames of the standard library, of pyfakefs and of this package are looked
    through, unless they belong to a listed package (``importlib``): the answer
    is the nearest frame that is either listed (real file system) or neither
    (the agent's). Off while the patcher itself sets up or tears down, since
    pyfakefs's own attribute lookups then ask it too.
    """

    def __init__(self, packages: tuple[str, ...]) -> None:
        self._names = frozenset(packages)
        self._prefixes = tuple(p + "." for p in packages)
        self.enabled = False
        # Each module's answer, by name: asked for every frame of every file call.
        self._answers: dict[str, bool | None] = {}

    def __call__(self, *_args: object, **_kwargs: object) -> bool:
        frame: FrameType | None = sys._getframe(1)
        answers = self._answers
        while self.enabled and frame is not None:
            module = frame.f_globals.get("__name__", "")
            frame = frame.f_back
            if module in answers:
                answer = answers[module]
            else:
                answer = answers[module] = self._answer(module)
            if answer is not None:
                return answer
        return False

    def _answer(self, module: str) -> bool | None:
        """True: listed (real file system); False: the agent's; None: look further out."""
        if module.startswith(_THIS_PACKAGE) or module.startswith(_ON_BEHALF_OF_CALLER):
            return None
        if module.startswith(_EDITABLE_FINDERS):
            return True  # the import system, as ``importlib`` is
        listed = module in self._names or module.startswith(self._prefixes)
        if listed or not _is_plumbing(module):
            return listed
        return None


def _is_plumbing(module: str) -> bool:
    top = module.partition(".")[0]
    return top in _STDLIB or top == "pyfakefs" or module.startswith(_ON_BEHALF_OF_CALLER)


@contextmanager
def _skip_check(check: Callable[..., bool]) -> Iterator[None]:
    saved = [(m, getattr(m, _SKIP_CHECK)) for m in _SKIP_CHECK_USERS]
    for module, _ in saved:
        setattr(module, _SKIP_CHECK, check)
    try:
        yield
    finally:
        for module, original in saved:
            setattr(module, _SKIP_CHECK, original)


def _os_error(exc: DiskError) -> OSError:
    """The ``OSError`` the real call raises, from the disk's wrapped error."""
    code = exc.errno if exc.errno is not None else errno.EIO
    return OSError(code, os.strerror(code), exc.path)


@final
class _Mirror:
    """One incarnation's operations, replayed onto the crash disk's path API."""

    def __init__(self, disk: CrashDisk, generation: int,
                 start: StartFolder | None = None) -> None:
        self._disk = disk
        self._view = disk.for_incarnation(generation)
        self.generation = generation
        self._start = start

    def _adopt(self, path: str) -> bool:
        """Whether the disk holds ``path``, after taking it over from the folder the run
        started in if it is a real file or folder there the world has not changed yet."""
        if self._start is None:
            return self._view.exists(path)
        return self._start.adopt(self._disk, path)

    def _alive(self, what: str) -> None:
        # The `with` block around a crashed write closes its file while the crash
        # unwinds; the world refuses that flush, and the crash itself travels on.
        in_flight = sys.exc_info()[1]
        try:
            self._disk.incarnations.check(self.generation, what)
        except DeadIncarnationError:
            if isinstance(in_flight, SimulatedCrash):
                raise in_flight from None
            raise

    @contextmanager
    def _os_errors(self) -> Iterator[None]:
        try:
            yield
        except DiskError as exc:
            raise _os_error(exc) from None

    def created(self, path: str) -> None:
        self._made("create", path, self._view.open_append)

    def _made(self, verb: str, path: str, make: Callable[[str], object]) -> None:
        """``path`` was made in the OS (a file, a folder): make it on the crash disk too."""
        self._alive(f"{verb} {path}")
        self._folder_of(path)
        with self._os_errors():
            make(path)

    def content(self, path: str, new: bytes) -> None:
        """The file now holds ``new`` in the OS: write what changed."""
        self._alive(f"write {path}")
        self._adopt(path)
        with self._os_errors():
            old = self._view.read(path)
            if new == old:
                return
            keep = len(old) if new.startswith(old) else _common_prefix(old, new)
            if keep < len(old):
                self._view.truncate(path, keep)
            if len(new) > keep:
                self._view.open_append(path).write(new[keep:])

    def disk_content(self, path: str) -> bytes:
        """What the crash disk holds for ``path`` (what the OS holds, synced or not)."""
        return self._view.read(path)

    def fsync(self, path: str, *, folder: bool) -> None:
        self._alive(f"fsync {path}")
        self._adopt(path)
        with self._os_errors():
            if folder:
                self._view.fsync_dir(path)
            else:
                self._view.open_append(path).fsync()

    def _folder_of(self, path: str) -> None:
        """The folder of ``path`` is the world's too: the agent saw it, so it exists.

        It is missing from the disk only when it is a real folder the agent
        reads through (pyfakefs refuses a path whose folder it lacks): a write
        there goes to the crash disk like any other, into a stand-in for the
        real folder, durable as the world's setup is.
        """
        folder = posixpath.dirname(path)
        if not self._adopt(folder):
            self._disk.make_durable_folders(folder)

    def mkdir(self, path: str) -> None:
        self._made("mkdir", path, self._view.mkdir)

    def rename(self, source: str, target: str) -> None:
        self._alive(f"rename {source}")
        if self._view.is_dir(source) and self._inside(source):
            # The crash disk names files by path; moving a tree would need it
            # to re-key every durable name below the folder.
            raise HarnessError(
                f"renaming the folder {source!r} with anything inside is not modelled by "
                "the crash disk; rename its files one by one, or an empty folder"
            )
        self._adopt(source)
        self._folder_of(target)
        with self._os_errors():
            self._view.replace(source, target)

    def remove(self, path: str) -> None:
        """``path`` is gone, with whatever was inside it (deepest first)."""
        self._alive(f"remove {path}")
        if not self._adopt(path):
            return  # a real file read through: gone for this incarnation only, as it is
            # changed for this incarnation only (the real disk keeps it, and the next
            # incarnation reads it afresh)
        inside = self._inside(path) if self._view.is_dir(path) else []
        with self._os_errors():
            for p in sorted(inside, key=lambda p: (-p.count("/"), p)):
                self._remove_one(p)
            self._remove_one(path)

    def _inside(self, folder: str) -> list[str]:
        """Every file and folder below ``folder`` on the disk."""
        below = folder + "/"
        return [p for p in [*self._disk.files(), *self._disk.folders()] if p.startswith(below)]

    def _remove_one(self, path: str) -> None:
        if self._view.is_dir(path):
            self._view.rmdir(path)
        else:
            self._view.unlink(path)


def _common_prefix(old: bytes, new: bytes) -> int:
    n = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        n += 1
    return n


def _text(path: Any) -> str:
    return os.fsdecode(os.fspath(path))


# pyfakefs properties read for every path and never set once a file system is built:
# _MirroredFilesystem answers them from the instance, as plain attributes.
_FIXED_PROPERTIES: Final = ("is_windows_fs", "is_macos", "path_separator",
                            "alternative_path_separator")


class _MirroredFilesystem(FakeFilesystem):
    """A pyfakefs file system whose changes are mirrored (set on a built one)."""

    mirror: _Mirror
    # Shadow pyfakefs's properties (see _FIXED_PROPERTIES); the values are the
    # instance's own, set when the class is.
    is_windows_fs = False
    is_macos = False
    path_separator = "/"
    alternative_path_separator = None
    _renaming = False
    # True while pyfakefs lists a real folder the agent reads through: what it
    # adds then (files, links) is the real disk's, never the agent's doing.
    _reading_through = False
    # The order ``os.listdir`` gives names in: arbitrary, as pyfakefs makes it so that
    # an agent relying on one is found out, but the incarnation's seed's (pyfakefs
    # shuffles with the process's unseeded ``random``: a case would vary run to run).
    listing_order: random.Random

    def listdir(self, target_directory: Any) -> list[Any]:
        names = super().listdir(target_directory)
        self.listing_order.shuffle(names)
        return names

    def _mirrored(self, file: FakeFile) -> str | None:
        """The path of ``file`` if the agent can still reach it by name.

        Walks the parents instead of resolving the path: pyfakefs's resolution
        costs more than the write it would guard.
        """
        names: list[str] = []
        node = file
        while node is not self.root:
            parent = node.parent_dir() if node.parent_dir is not None else None
            name = _text(node.name)
            if not isinstance(parent, FakeDirectory) or parent.entries.get(name) is not node:
                return None
            names.append(name)
            node = parent
        return "/" + "/".join(reversed(names))

    def absnormpath(self, path: Any) -> Any:
        # A path with nothing to normalize is its own answer, after the current folder
        # for a relative one; pyfakefs's way to it is a dozen calls, paid several
        # times by every file operation.
        plain = self._plain(path)
        return super().absnormpath(path) if plain is None else plain

    def _plain(self, path: Any) -> str | None:
        """``path`` made absolute, where it has no empty, ``.`` or ``..`` part to normalize."""
        if type(path) is not str or not path:
            return None
        if path[0] != "/":
            cwd = self._cwd
            if type(cwd) is not str or not self.is_case_sensitive:
                return None
            path = "/" + path if cwd == "/" else cwd + "/" + path
        return path if _plain_absolute(path) else None

    def resolve_path(self, file_path: Any, allow_fd: bool = False) -> Any:
        """pyfakefs's ``resolve_path``, walked by hand for a plain path (:meth:`_plain`).

        With no link on the way, a plain path resolves to itself made absolute: the walk
        looks into each folder as pyfakefs's would (a real folder read through is
        listed then), and leaves a path with a link on it to pyfakefs.
        """
        plain = self._plain(file_path)
        if plain is None or not self.is_case_sensitive:
            return super().resolve_path(file_path, allow_fd)
        node: Any = self.root
        for name in plain[1:].split("/") if plain != "/" else ():
            if not isinstance(node, FakeDirectory):
                break
            node = node.entries.get(name)
            if node is None:
                break
            if stat.S_ISLNK(node.st_mode):
                return super().resolve_path(file_path, allow_fd)
        return plain

    def exists(self, file_path: Any, check_link: bool = False) -> bool:
        return _exists(self, file_path, check_link)

    def lresolve(self, path: Any) -> Any:
        """pyfakefs's ``lresolve`` (the object itself, a link not followed), walked by hand
        for a plain path as the superuser (:meth:`get_object_from_normpath`).

        ``islink``, ``lstat`` and ``replace`` ask it; pyfakefs splits the path, resolves
        the folder above from the root again and then looks the name up there (a name
        it does not hold is ``ENOENT``: ``islink`` asks so of every file ``mkstemp``
        is about to make). A link on the way to that folder, or a folder missing on
        the way, is pyfakefs's own to follow or raise.
        """
        plain = self._plain(path)
        if plain is not None and plain != "/" and self.is_case_sensitive and is_root():
            node: Any = self.root
            *above, name = plain[1:].split("/")
            for part in above:
                node = node.entries.get(part) if _plain_folder(node) else None
                if node is None:
                    break
            if node is not None and _plain_folder(node):
                found = node.entries.get(name)
                if found is None:  # no such name in a folder that is there, as pyfakefs says
                    self.raise_os_error(errno.ENOENT, path)
                return found
        return super().lresolve(path)

    def get_object_from_normpath(self, file_path: Any, check_read_perm: bool = True,
                                 check_exe_perm: bool = True, check_owner: bool = False
                                 ) -> Any:
        """pyfakefs's lookup of a resolved path, walked by hand where nothing can differ.

        Every ``open``, ``stat``, ``replace`` and ``fsync`` of the agent resolves its
        path through here, a dozen calls deep (the path's parts matched against the
        root's name, ``os.devnull``, a case-folded copy of itself). For a plain
        absolute path, on a case-sensitive file system, as the superuser (no
        permission to check on the way), the walk is pyfakefs's own: each folder
        looked into (a real one read through is listed then), the object found at
        the end. A link on the way, a missing name, a file where a folder should
        be, or any other path, are left to pyfakefs, which follows or raises.
        """
        if (type(file_path) is str and file_path not in ("/", self.devnull)
                and _plain_absolute(file_path) and self.is_case_sensitive and is_root()):
            node: Any = self.root
            for name in file_path[1:].split("/"):
                node = node.entries.get(name) if _plain_folder(node) else None
                if node is None:
                    break
            else:
                return node
        return super().get_object_from_normpath(file_path, check_read_perm, check_exe_perm,
                                                check_owner)

    def contents_changed(self, file: FakeFile) -> None:
        """pyfakefs's side effect: the OS now holds new bytes for ``file``."""
        path = self._mirrored(file)
        if path is None:
            return
        try:
            self.mirror.content(path, file.byte_contents or b"")
        except OSError:
            # A failed write leaves what the disk holds; the agent sees the same.
            file.set_initial_contents(self.mirror.disk_content(path))
            raise

    def create_file_internally(self, *args: Any, **kwargs: Any) -> FakeFile:
        # A real file or link read through (lazily, as its folder is listed).
        if kwargs.get("read_from_real_fs") or self._reading_through:
            return super().create_file_internally(*args, **kwargs)
        kwargs["side_effect"] = self.contents_changed
        file = super().create_file_internally(*args, **kwargs)
        self.mirror.created(_text(file.path))
        return file

    def add_real_symlink(self, source_path: Any, target_path: Any = None) -> FakeFile:
        self._reading_through = True
        try:
            return super().add_real_symlink(source_path, target_path)
        finally:
            self._reading_through = False

    def makedir(self, dir_path: Any, mode: int = 0o777) -> None:
        super().makedir(dir_path, mode)
        self.mirror.mkdir(self.absnormpath(_text(dir_path).rstrip("/")))

    def create_dir(self, directory_path: Any, *args: Any, **kwargs: Any) -> Any:
        path = self.absnormpath(_text(directory_path))
        missing = self._missing_folders(path)
        created = super().create_dir(directory_path, *args, **kwargs)
        for folder in missing:
            self.mirror.mkdir(folder)
        return created

    def _missing_folders(self, path: str) -> list[str]:
        missing: list[str] = []
        while path != "/" and not self.exists(path):
            missing.insert(0, path)
            path = posixpath.dirname(path)
        return missing

    def rename(self, old_file_path: Any, new_file_path: Any, force_replace: bool = False) -> None:
        source = self.absnormpath(_text(old_file_path))
        target = self.absnormpath(_text(new_file_path))
        # Replacing an existing target removes it inside pyfakefs; on a real
        # disk that is one atomic rename, never an unlink first.
        self._renaming = True
        try:
            super().rename(old_file_path, new_file_path, force_replace)
        finally:
            self._renaming = False
        if source != target:  # pyfakefs renames a name onto itself as a no-op
            self.mirror.rename(source, target)

    def create_symlink(self, file_path: Any, *target: Any, **options: Any) -> Any:
        if self._reading_through:  # a link of a real folder, shown as it is
            return super().create_symlink(file_path, *target, **options)
        raise _not_modelled(f"the symbolic link {_text(file_path)!r}")

    def link(self, *paths: Any, **_options: Any) -> Any:
        raise _not_modelled(f"the hard link {_text(paths[1])!r}")

    def remove_object(self, file_path: Any) -> None:
        path = self.absnormpath(_text(file_path))
        super().remove_object(file_path)
        if not self._renaming:
            self.mirror.remove(path)


def _plain_absolute(path: str) -> bool:
    """Whether ``path`` is absolute and normal as it is: no empty, ``.`` or ``..`` part,
    no trailing ``/`` (``/`` itself is)."""
    return path[:1] == "/" and (path == "/" or (
        "//" not in path and "/./" not in path and "/../" not in path
        and not path.endswith(("/", "/.", "/.."))))


def _exists(fs: FakeFilesystem, file_path: Any, check_link: bool = False) -> bool:
    """pyfakefs's ``exists``, walked by hand for a plain path (:meth:`_MirroredFilesystem._plain`).

    pyfakefs's own resolves the path, then walks it again, a dozen calls deep: every
    ``open``, ``mkstemp`` and ``replace`` asks it several times. The walk looks into each
    folder as pyfakefs's does (a real folder read through is listed then); a path
    with a link on the way and ``os.devnull`` are pyfakefs's own. A link at the end
    exists when ``check_link`` asks for the link itself (``replace`` asks so); else it
    is pyfakefs's own, to follow.
    Also for a file system being filled (:meth:`AgentFiles._load`), before it is mirrored.
    """
    plain = None if not fs.is_case_sensitive else \
        _MirroredFilesystem._plain(cast(_MirroredFilesystem, fs), file_path)
    if plain is None or plain == fs.devnull:
        return FakeFilesystem.exists(fs, file_path, check_link)
    node: Any = fs.root
    names = plain[1:].split("/") if plain != "/" else []
    for index, name in enumerate(names):
        if not isinstance(node, FakeDirectory):
            return False
        node = node.entries.get(name)
        if node is None:
            return False
        if stat.S_ISLNK(node.st_mode):
            if check_link and index == len(names) - 1:
                return True
            return FakeFilesystem.exists(fs, file_path, check_link)
    return True


def _plain_folder(node: Any) -> bool:
    """Whether ``node`` is a folder that is not a link (looked into as it is)."""
    return isinstance(node, FakeDirectory) and not stat.S_ISLNK(node.st_mode)


def _not_modelled(what: str) -> HarnessError:
    return HarnessError(
        f"{what}: links are not modelled by the crash disk (it names files by path); "
        "copy the file, or keep links out of the agent's state"
    )


def _mirrored_fs(os_module: FakeOsModule) -> _MirroredFilesystem:
    fs = os_module.filesystem
    assert isinstance(fs, _MirroredFilesystem)
    return fs


def _standard_stream(fs: FakeFilesystem, fd: int) -> bool:
    """Whether ``fd`` is stdin, stdout or stderr as pyfakefs keeps them."""
    entry = fs.open_files[fd] if 0 <= fd < min(3, len(fs.open_files)) else None
    return bool(entry) and isinstance(entry[0], StandardStreamWrapper)  # type: ignore[index]


class _MirroredOs(FakeOsModule):
    """pyfakefs's ``os`` whose fsyncs and truncations reach the crash disk."""

    @handle_original_call
    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self._sync(fd)

    @handle_original_call
    def fdatasync(self, fd: int) -> None:
        super().fdatasync(fd)
        self._sync(fd)

    def _sync(self, fd: int) -> None:
        fs = _mirrored_fs(self)
        handle = fs.get_open_file(fd)
        if isinstance(handle, FakeDirWrapper | FakeFileWrapper):
            target = handle.get_object()
            path = fs._mirrored(target)
            if path is not None:
                fs.mirror.fsync(path, folder=isinstance(handle, FakeDirWrapper))

    @handle_original_call
    def write(self, fd: int, contents: bytes) -> int:
        # pyfakefs's own write fails on a standard stream (its wrapper has no _sync_io):
        # what the agent writes to fds 0-2 goes to the real descriptor, the pipe the
        # harness keeps per case.
        if _standard_stream(_mirrored_fs(self), fd):
            return int(self.os_module.write(fd, contents))
        return int(super().write(fd, contents))

    @handle_original_call
    def truncate(self, path: Any, length: int) -> None:
        super().truncate(path, length)
        fs = _mirrored_fs(self)
        fs.contents_changed(fs.resolve(path, allow_fd=True))

    @handle_original_call
    def ftruncate(self, fd: int, length: int) -> None:
        super().ftruncate(fd, length)
        fs = _mirrored_fs(self)
        handle = fs.get_open_file(fd)
        if isinstance(handle, FakeFileWrapper):
            fs.contents_changed(handle.get_object())


class _SeededNames:
    """``tempfile``'s name sequence from a seeded stream: the same names every run.

    The names become file names and so roles in point ids; ``tempfile``'s own
    sequence is seeded from the OS.
    """

    characters = "abcdefghijklmnopqrstuvwxyz0123456789_"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __iter__(self) -> _SeededNames:
        return self

    def __next__(self) -> str:
        return "".join(self.rng.choice(self.characters) for _ in range(8))


@contextmanager
def _seeded_tempfile_names(rng: random.Random) -> Iterator[None]:
    saved = getattr(tempfile, "_name_sequence", None)
    tempfile._name_sequence = _SeededNames(rng)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        tempfile._name_sequence = saved  # type: ignore[attr-defined]


def read_through_roots(world: Iterable[str], sources: Iterable[str] = (),
                       temp: str | None = None) -> tuple[str, ...]:
    """The real files and folders the agent reads through its fake file system, read-only.

    The interpreter's installation (``sys.prefix``, ``sys.base_prefix``: the
    standard library, ``site-packages``), any other ``site-packages`` on
    ``sys.path``, the certificate bundles ``ssl`` and the HTTP libraries read,
    the tokenizer and model caches that exist, and ``sources`` (the agent's own
    code). A library outside :data:`REAL_FS_PACKAGES` then finds its packaged
    prompts and encoding files where ``__file__`` says they are.

    ``temp`` is the real temporary folder (``tempfile.gettempdir()`` by
    default: pass it when calling under the patch, which fakes ``tempfile``).
    Never a folder holding one of ``world``'s folders (the working folder, the
    temporary folder; ``/`` above all): the world's own files would be hidden
    under real ones. Nested roots collapse into the outermost.
    """
    chosen: list[str] = []
    world_folders = [os.path.abspath(f) for f in world]
    temp = temp if temp is not None else tempfile.gettempdir()
    candidates = {os.path.abspath(p) for p in (*_installed(), *_certificates(), *_caches(temp),
                                                 *sources) if p}
    for path in sorted(candidates, key=lambda p: (p.count(os.sep), p)):
        if not os.path.exists(path) or any(_within(path, kept) for kept in chosen):
            continue
        if any(_within(folder, path) for folder in world_folders):
            continue
        chosen.append(path)
    return tuple(sorted(chosen))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _installed() -> list[str]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    sites = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    return [*prefixes, *sites, site.getusersitepackages()]


def _certificates() -> list[str]:
    """The certificate bundles, as files.

    Not the hashed certificate folders (``capath``, ``SSL_CERT_DIR``): OpenSSL reads
    those from C, below the fake file system, and one holds a link per certificate
    (1,400 on Debian) that pyfakefs would build, at 0.4 s, whenever a path inside it
    is looked at (litellm checks its bundle's path on every client it makes).
    """
    paths = ssl.get_default_verify_paths()
    named = [os.environ.get(v) for v in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
                                         "CURL_CA_BUNDLE")]
    return [p for p in (paths.cafile, paths.openssl_cafile, *named)
            if p and not os.path.isdir(p)]


def _caches(temp: str) -> list[str]:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    named = [os.environ.get(v) for v in ("HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_CACHE",
                                         "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR",
                                         "TORCH_HOME", "SENTENCE_TRANSFORMERS_HOME")]
    defaults = [os.path.join(cache, name) for name in ("huggingface", "torch", "tiktoken")]
    # tiktoken's own default cache lives in the temporary folder.
    return [*(p for p in named if p), *defaults, os.path.join(temp, "data-gym-cache")]


# -- pyfakefs's file objects, at the cost of the writes they carry -----------------------

# Names pyfakefs's wrappers answer from the object itself; every other name goes
# through its ``__getattr__`` (which checks the file is open and wraps the call).
_WRAPPER_OWN_NAMES: Final = frozenset(n for c in FakeFileWrapper.__mro__ for n in vars(c))
_object_attribute = object.__getattribute__
_CACHED_WRITE: Final = "_harness_write"


def _wrapper_attribute(wrapper: FakeFileWrapper, name: str) -> Any:
    """pyfakefs's ``__getattribute__`` of its text and binary wrappers, made cheap.

    pyfakefs answers every attribute through ``hasattr(FakeFileWrapper, name)``
    and a second ``__getattribute__`` for ``__dict__``, and builds a new
    ``write`` wrapper for every call: ``json.dump`` into an open file (hundreds
    of small writes) cost 15 ms. The answers are the same; the write of a
    writable file is built once and kept (:func:`_buffered_write`).
    """
    if name == "write":
        cached = _object_attribute(wrapper, "__dict__").get(_CACHED_WRITE)
        return _write_of(wrapper) if cached is None else cached
    if name in _WRAPPER_OWN_NAMES or name in _object_attribute(wrapper, "__dict__"):
        return _object_attribute(wrapper, name)
    return _object_attribute(wrapper, "__getattr__")(name)


def _write_of(wrapper: FakeFileWrapper) -> Any:
    """``wrapper.write`` the first time: pyfakefs's own, which raises or answers."""
    write = _object_attribute(wrapper, "__getattr__")("write")
    if getattr(write, "__name__", "") == "write_wrapper":  # not its write_error
        attributes = _object_attribute(wrapper, "__dict__")
        write = attributes[_CACHED_WRITE] = _buffered_write(wrapper, attributes, write)
    return write


def _still_open(wrapper: FakeFileWrapper, attributes: dict[str, Any]) -> bool:
    """pyfakefs's ``_is_open``, read from the wrapper's own attributes: it is listed
    among its file system's open files under its descriptor."""
    descriptor, filesystem = attributes.get("filedes"), attributes["_filesystem"]()
    if descriptor is None or filesystem is None:
        return False
    open_files = filesystem.open_files
    return descriptor < len(open_files) and wrapper in (open_files[descriptor] or ())


# The most bytes a character of a UTF-8 text file becomes, newline translation included
# ("\n" as "\r\n" is two bytes for one character).
_UTF8_BYTES_PER_CHAR: Final = 4
_UTF8_NAMES: Final = frozenset({"utf-8", "utf8", "u8", "utf_8", "cp65001"})
_BOUNDED_ERRORS: Final = frozenset({"strict", "surrogateescape", "surrogatepass"})


def _buffered_write(wrapper: FakeFileWrapper, attributes: dict[str, Any],
                    write: Callable[..., Any]) -> Callable[..., Any]:
    """The write of an open file, with pyfakefs's checks at each call and its bookkeeping
    only where the write may reach the file.

    pyfakefs checks the file is open (and not a large file) when ``write`` is looked
    up; here at each call, as a real file does. Its write reads the position before
    and after, and flushes to the file (a write the OS sees: a point of the crash
    disk) once the buffer holds more than its size. A write that cannot reach that
    size, counted at the most bytes its data can encode to, cannot flush: it goes
    to the buffer directly (``json.dump`` writes a file in hundreds of such
    pieces). Any other write, a line-buffered one among them, is pyfakefs's own, so
    files reach the disk at the same writes as before.
    """
    stream = attributes["_io"]
    stream_write, tell = stream.write, stream.tell
    append = bool(attributes["open_modes"].append)
    file_object = attributes["file_object"]
    per_unit = 1 if attributes["_binary"] else _text_bytes_per_char(stream)
    if attributes["_use_line_buffer"]:
        per_unit = None

    def buffered_write(*args: Any, **kwargs: Any) -> Any:
        if file_object.is_large_file() or not (
                attributes["is_stream"] or _still_open(wrapper, attributes)):
            # pyfakefs's own lookup raises as it does for a closed or a large file.
            return _object_attribute(wrapper, "__getattr__")("write")(*args, **kwargs)
        if kwargs or len(args) != 1 or per_unit is None:
            return write(*args, **kwargs)
        data = args[0]
        kind = type(data)
        if kind is str and per_unit > 1:
            size = len(data) * per_unit
        elif (kind is bytes or kind is bytearray) and per_unit == 1:
            size = len(data)
        else:
            return write(data)
        if tell() + size - attributes["_flush_pos"] > attributes["_buffer_size"]:
            return write(data)
        written = stream_write(data)
        if append:
            attributes["_read_seek"] = tell()
            attributes["_read_whence"] = 0
        return written

    return buffered_write


def _text_bytes_per_char(stream: Any) -> int | None:
    """The most bytes a character written to ``stream`` becomes; None where unbounded here."""
    encoding = str(getattr(stream, "encoding", "")).lower()
    if encoding in _UTF8_NAMES and getattr(stream, "errors", None) in _BOUNDED_ERRORS:
        return _UTF8_BYTES_PER_CHAR
    return None


class _TextFile(FakeTextFileWrapper):
    __getattribute__ = _wrapper_attribute


class _BinaryFile(FakeBinaryFileWrapper):
    __getattribute__ = _wrapper_attribute


_pyfakefs_string_path = helpers.make_string_path


def _string_path(path: Any) -> Any:
    """pyfakefs's ``make_string_path``, without its import statement per call for a str.

    A ``str`` is what it returns for one (a str is never its ``FakePath``); it is
    called for every path of every operation.
    """
    return path if type(path) is str else _pyfakefs_string_path(path)


@contextmanager
def _cheaper_pyfakefs() -> Iterator[None]:
    """pyfakefs's ``open`` hands out :class:`_TextFile` and :class:`_BinaryFile`, and its
    modules make string paths with :func:`_string_path`, while an incarnation runs."""
    swaps: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (vars(fake_open), {"FakeTextFileWrapper": _TextFile,
                           "FakeBinaryFileWrapper": _BinaryFile})]
    swaps += [(vars(module), {"make_string_path": _string_path})
              for module in (fake_filesystem, fake_os, fake_path)]
    saved = [(names, {name: names[name] for name in new}) for names, new in swaps]
    for names, new in swaps:
        names.update(new)
    # The world makes the temporary folder itself (AgentFiles._load); pyfakefs's own,
    # made at every set-up through its slow path resolution, was 7 % of a plain
    # agent's incarnation.
    make_temp_folder = FakeFilesystem._create_temp_dir
    FakeFilesystem._create_temp_dir = _no_temp_folder  # type: ignore[method-assign]
    try:
        yield
    finally:
        FakeFilesystem._create_temp_dir = make_temp_folder  # type: ignore[method-assign]
        for names, old in saved:
            names.update(old)


def _no_temp_folder(fs: FakeFilesystem) -> None:
    del fs


class _WalkedAsCopy(set[str]):
    """A set whose walk is over a copy taken at once, so it may grow meanwhile."""

    def __iter__(self) -> Iterator[str]:
        return iter(list(set.__iter__(self)))


class _AgentPatcher(Patcher):
    """pyfakefs's patcher with its own singleton and module cache.

    Our ``os`` replaces pyfakefs's, and library modules loaded while the agent
    runs stay loaded (pyfakefs would drop them from ``sys.modules``).
    """

    PATCHER: ClassVar[Patcher | None] = None  # type: ignore[misc]
    # pyfakefs replaces its module cache with an empty one whenever a patcher's options
    # differ from the last one's (another agent's listed packages, a user's own
    # pyfakefs test): each mark below holds the cache it was taken on, never its id (a
    # new cache may be given a dead one's), so a replaced cache is never taken for it.
    # (the cache, how many modules were loaded) when last passed over
    _passed_over: ClassVar[tuple[set[Any] | None, int]] = (None, 0)
    # (the cache, how many modules it held) when forget_dropped_modules last ran
    _cached_after_forget: ClassVar[tuple[set[Any] | None, int]] = (None, 0)

    def tearDown(self, doctester: Any = None) -> None:
        dynamic = self._dyn_patcher
        if dynamic is not None:
            # A thread the agent left running may import a module while pyfakefs walks
            # the set of those loaded under the patch: it walks a copy.
            dynamic._loaded_module_names = _WalkedAsCopy(dynamic._loaded_module_names)
        super().tearDown(doctester)

    def _find_modules(self) -> None:
        """pyfakefs's scan of the loaded modules, over those it has not scanned yet.

        pyfakefs walks every module in ``sys.modules`` at each ``setUp`` and skips, one
        at a time in Python, those in its cache: two thousand a framework agent's
        incarnation, a millisecond, nearly all of them scanned long before. Here the
        cached ones are taken off in one pass in C, in ``sys.modules``'s order, and each
        module left is scanned as pyfakefs's own loop scans it (:meth:`_scan_module`):
        the same tables, filled in the same order. A value that does not hash leaves
        the whole scan to pyfakefs, as does a patcher without the cache.
        """
        if not self.use_cache:
            super()._find_modules()
            return
        try:
            fresh = list(itertools.filterfalse(self.CACHED_MODULES.__contains__,
                                               list(sys.modules.values())))
        except Exception:  # a value that does not hash: pyfakefs's own way handles it
            super()._find_modules()
            return
        module_names = [*self._fake_module_classes, PATH_MODULE]
        for module in fresh:
            self._scan_module(module, module_names)

    def _scan_module(self, module: Any, module_names: list[str]) -> None:
        """The body of pyfakefs's ``Patcher._find_modules`` loop (pyfakefs 6.3), for one
        module not in the cache."""
        cls = type(self)
        try:
            if not inspect.ismodule(module):
                return
        except Exception:  # an object whose attributes raise (pyfakefs's own workaround)
            with contextlib.suppress(TypeError):
                cls.CACHED_MODULES.add(module)
            return
        try:
            skipped = module in self.SKIPMODULES or any(
                sn.startswith(module.__name__) for sn in self.skip_names)
        except TypeError:
            skipped = False
        module_items = module.__dict__.copy().items()
        modules = {name: mod for name, mod in module_items
                   if self._is_fs_module(mod, name, module_names)}
        if skipped:
            for name, mod in modules.items():
                cls.SKIPPED_FS_MODULES.setdefault(name, set()).add((module, mod.__name__))
        else:
            for name, mod in modules.items():
                cls.FS_MODULES.setdefault(name, set()).add((module, mod.__name__))
            functions = {name: fct for name, fct in module_items if self._is_fs_function(fct)}
            for name, fct in functions.items():
                cls.FS_FUNCTIONS.setdefault((name, fct.__name__, fct.__module__),
                                            set()).add(module)
            if self.patch_default_args:
                self._find_def_values(module_items)
        cls.CACHED_MODULES.add(module)

    def pass_over_libraries(self, packages: tuple[str, ...]) -> None:
        """Let pyfakefs's scan skip every loaded module of ``packages``.

        Their code keeps the real file system anyway, so their globals need no
        patch; marking them as already scanned saves most of the first scan
        (the SDKs alone bring thousands of modules).
        """
        cached, loaded = _AgentPatcher._passed_over
        if cached is self.CACHED_MODULES and loaded == len(sys.modules):
            return
        _AgentPatcher._passed_over = (self.CACHED_MODULES, len(sys.modules))
        prefixes = tuple(p + "." for p in packages)
        for name, module in list(sys.modules.items()):
            if (name in packages or name.startswith(prefixes)) and (
                module not in self.CACHED_MODULES
            ):
                self._keep_real_pathlib(module)
                self.CACHED_MODULES.add(module)

    def forget_dropped_modules(self) -> None:
        """Drop from pyfakefs's module caches every module no longer in ``sys.modules``.

        pyfakefs patches the modules ``sys.modules`` holds at ``setUp``, and caches
        what it found in class-level tables it never empties. The agent's own modules
        are imported afresh for each incarnation and dropped after it, so every
        incarnation left its modules in the tables: each ``setUp`` and ``tearDown``
        then patched and restored every dead copy again (after 700 incarnations a
        set-up cost three times the first's), and the tables kept them alive.
        A module no longer in ``sys.modules`` is one pyfakefs would not find on a
        fresh scan either, so forgetting it patches exactly what a fresh patcher
        would.
        """
        cls = type(self)
        cached = cls.CACHED_MODULES
        last, held = _AgentPatcher._cached_after_forget
        if cached is last and len(cached) <= held:
            return  # nothing scanned since the last time: nothing new can be dead
        dead = _not_loaded(cached)
        if dead:
            gone = {id(m) for m in dead}
            dead_globals = {id(vars(m)) for m in dead}
            cached.difference_update(dead)  # in place: the marks above hold this cache
            for table in (cls.FS_MODULES, cls.SKIPPED_FS_MODULES):
                for name, pairs in list(table.items()):
                    pairs.difference_update([p for p in pairs if id(p[0]) in gone])
                    if not pairs:
                        del table[name]
            for key, modules in list(cls.FS_FUNCTIONS.items()):
                modules.difference_update([m for m in modules if id(m) in gone])
                if not modules:
                    del cls.FS_FUNCTIONS[key]
            cls.FS_DEFARGS[:] = [entry for entry in cls.FS_DEFARGS
                                 if id(getattr(entry[0], "__globals__", None)) not in dead_globals]
        _AgentPatcher._cached_after_forget = (cls.CACHED_MODULES, len(cls.CACHED_MODULES))

    def _keep_real_pathlib(self, module: ModuleType) -> None:
        """What pyfakefs does for a module it skips: its ``pathlib``/``Path`` stay real.

        pyfakefs patches ``pathlib``'s own globals, so a bare reference to the
        real class would break; it hands skipped modules a real-behaving
        stand-in, and so must a module marked as scanned.
        """
        for attr, value in list(vars(module).items()):
            if value is pathlib or value is pathlib.Path:
                key = "pathlib" if value is pathlib else "Path"
                self.SKIPPED_FS_MODULES.setdefault(attr, set()).add((module, key))


def _not_loaded(cached: set[Any]) -> list[Any]:
    """The modules of pyfakefs's cache that ``sys.modules`` no longer holds.

    One set difference in C over the module objects themselves (hashed by identity):
    by id, through a dict of the cache, it was a twentieth of a plain agent's restart.
    An unhashable value in ``sys.modules`` (some libraries put objects there) takes
    the way by id.
    """
    loaded = list(sys.modules.values())
    try:
        return list(cached.difference(loaded))
    except TypeError:
        by_id = dict(zip(map(id, cached), cached, strict=True))
        return [by_id[i] for i in by_id.keys() - set(map(id, loaded))]


@final
class AgentFiles:
    """The agent's own file I/O, through pyfakefs, onto a :class:`fakes.CrashDisk`.

    ``workdir`` is the agent's current folder, created empty (and durable) on the
    disk; it survives restarts. ``real_fs_packages`` lists the packages whose
    code keeps the real file system (see :data:`REAL_FS_PACKAGES`).
    ``read_only_folders`` are real folders the agent's own code may read (its
    package's prompts and data), shown read-only like the other real roots it
    reads through (:func:`read_through_roots`). ``seed`` drives ``tempfile``'s
    names.

    Example (not a doctest: code of this package keeps the real file system)::

        disk = CrashDisk()
        files = AgentFiles(disk)
        with files.active(generation=1):
            pathlib.Path("notes.txt").write_text("hello")   # the agent's code
        disk.files()["/agent/notes.txt"]                    # b'hello'
    """

    _active: ClassVar[AgentFiles | None] = None

    def __init__(
        self,
        disk: CrashDisk,
        workdir: str = "/agent",
        *,
        real_fs_packages: Iterable[str] = REAL_FS_PACKAGES,
        read_only_folders: Iterable[str] = (),
        seed: int = 0,
        start_folder: str | None = None,
        keep_modules: bool = False,
    ) -> None:
        self.disk = disk
        self.workdir = posixpath.normpath(workdir)
        # Keep every module imported while active, the agent's own too (an import made to
        # check the agent's entry point, whose module the harness goes on reading).
        self._keep_modules = keep_modules
        # The real folder the run started in, shown as the working folder.
        self.start = None if start_folder is None else StartFolder(
            self.workdir, os.path.abspath(start_folder), hidden_folders())
        self._packages = tuple(real_fs_packages)
        self._read_only = tuple(os.path.abspath(f) for f in read_only_folders)
        self._seed = seed
        self._temp = tempfile.gettempdir()
        self._roots_by_sources: dict[tuple[str, ...], tuple[str, ...]] = {}
        disk.make_durable_folders(self.workdir)
        disk.make_durable_folders(self._temp)
        self._library_callers = _LibraryCallers(self._packages)
        self._patcher = self._new_patcher()

    def __deepcopy__(self, memo: dict[int, object]) -> AgentFiles:
        # A copy of a world (crash exploration) holds the files of the copied disk;
        # the patcher and the read-through roots are the same for every world of the
        # case, and only one incarnation's files are ever active at a time, so the
        # twin shares them rather than paying for a patcher of its own.
        twin = AgentFiles.__new__(AgentFiles)
        memo[id(self)] = twin
        twin.__dict__.update(self.__dict__)
        twin.disk = copy.deepcopy(self.disk, memo)
        return twin

    def _new_patcher(self) -> _AgentPatcher:
        # Only the package names: a longer list (every loaded submodule) makes
        # pyfakefs's scan quadratic and invalidates its cache whenever a module
        # is imported. Submodules are told apart at call time by _LibraryCallers.
        patcher = _AgentPatcher(
            additional_skip_names=list(self._packages),
            # pyfakefs takes fake module classes here (its stubs say modules).
            modules_to_patch={"os": _MirroredOs},  # type: ignore[dict-item]
            use_cache=True,
        )
        patcher.cleanup_handlers = _KeepLibraryModules(
            patcher.cleanup_handlers, self._packages, patcher.fake_modules,
            keep_all=self._keep_modules,
        )
        return patcher

    @contextmanager
    def active(self, generation: int, *, sources: Iterable[str] = ()) -> Iterator[None]:
        """Patch ``open``/``os``/``io``/``pathlib``/``shutil``/``tempfile`` while incarnation
        ``generation`` runs.

        The fake file system holds the disk's files and folders as that
        incarnation sees them (after a crash and ``disk.restart()``: the crash
        state) over the real roots read through; the current folder is
        ``workdir``. ``sources`` are the folders of the agent's own code, read
        through too.
        """
        self.disk.incarnations.check(generation, f"start incarnation {generation}")
        if AgentFiles._active is not None:
            raise HarnessError(
                "AgentFiles.active() entered twice: one incarnation's files at a time "
                "(leave the running incarnation's block before starting the next)"
            )
        AgentFiles._active = self
        rng = rng_stream(self._seed, f"tempfile:{generation}")
        try:
            with _skip_check(self._library_callers), _seeded_tempfile_names(rng), \
                    _cheaper_pyfakefs():
                self._patcher.forget_dropped_modules()
                self._patcher.pass_over_libraries(self._packages)
                self._patcher.setUp()
                # pyfakefs forgets the temporary folder, and ``tempfile`` would find it
                # again by writing a probe file named from an unseeded sequence of its
                # own: three persistence points named differently in every run.
                tempfile.tempdir = self._temp
                try:
                    self._load(self._fake_fs(), generation, sources)
                    self._library_callers.enabled = True
                    try:
                        yield
                    finally:
                        # A point reached by this last flush may still crash.
                        self._close_leftovers(self._fake_fs(), generation)
                finally:
                    self._library_callers.enabled = False
                    self._patcher.tearDown()
        finally:
            AgentFiles._active = None

    def _roots(self, sources: tuple[str, ...]) -> tuple[str, ...]:
        """The real roots read through, worked out once per case and agent."""
        roots = self._roots_by_sources.get(sources)
        if roots is None:
            world = (self.workdir, self._temp)
            roots = read_through_roots(world, (*self._read_only, *sources), self._temp)
            self._roots_by_sources[sources] = roots
        return roots

    def _fake_fs(self) -> FakeFilesystem:
        fs = self._patcher.fs
        assert fs is not None
        return fs

    @classmethod
    def current_dir(cls) -> str | None:
        """The running incarnation's current folder (None when no incarnation runs)."""
        files = cls._active
        return None if files is None else str(files._fake_fs().cwd)

    @classmethod
    def reflect(cls, path: str, data: bytes) -> None:
        """Show ``data`` as ``path``'s content to the running incarnation, without mirroring.

        For a file the world itself wrote to the crash disk (a database's commit,
        :mod:`harness.intercept._sqlite`): the agent's ``os.path.exists`` and
        ``open`` see it as they would see the real file.
        """
        files = cls._active
        if files is None:
            return
        fs = files._fake_fs()
        if fs.exists(path):
            fs.get_object(path).set_initial_contents(data)
            return
        changed = functools.partial(
            _MirroredFilesystem.contents_changed, cast(_MirroredFilesystem, fs))
        FakeFilesystem.create_file_internally(fs, path, contents=data, side_effect=changed)

    def _close_leftovers(self, fs: FakeFilesystem, generation: int) -> None:
        """Close what the incarnation left open, as its process's end would.

        A clean end flushes Python's buffers (errors ignored, as at exit); a
        crashed process never does, and its files must not flush later from a
        finalizer, into a world that has moved on.
        """
        lives = self.disk.incarnations
        for fd, handles in enumerate(fs.open_files):
            if fd < 3 or not handles:
                continue
            for handle in list(handles):
                if lives.current == generation and not lives.crashed:
                    with contextlib.suppress(OSError):
                        handle.close()
                handle.filedes = None
            fs.open_files[fd] = None

    def _load(self, fs: FakeFilesystem, generation: int, sources: Iterable[str]) -> None:
        """Fill the fresh fake file system, then start mirroring.

        The real roots the agent reads through come first, lazily (a folder is
        listed when first looked into); the disk's folders and files go on top,
        so a file the agent wrote over a real one is the world's.
        """
        # Bound by hand: the class becomes _MirroredFilesystem only once loaded.
        changed = functools.partial(
            _MirroredFilesystem.contents_changed, cast(_MirroredFilesystem, fs)
        )
        for root in self._roots(tuple(sources)):
            if os.path.isdir(root):
                _mount_lazily(fs, root)
            else:
                _add_real_file(fs, root)
        if self.start is not None and os.path.isdir(self.start.real):
            _mount_start_folder(fs, self.start, changed)
        for folder in self.disk.folders():
            if not _exists(fs, folder) and not _made_in_place(fs, folder, None, changed):
                fs.create_dir(folder)
        if self._temp != "/tmp" and not _exists(fs, "/tmp"):
            fs.create_symlink("/tmp", self._temp)  # as pyfakefs links it, for a set TMPDIR
        files = self.disk.files()
        for path, data in files.items():
            if _exists(fs, path):
                fs.remove_object(path)  # a real file the agent wrote over
            if not _made_in_place(fs, path, data, changed):
                fs.create_file(path, contents=data, side_effect=changed)
        _hide_removed(fs, self.disk, files)
        fs.cwd = self.workdir
        fixed = {name: getattr(fs, name) for name in _FIXED_PROPERTIES}
        fs.__class__ = _MirroredFilesystem
        vars(fs).update(fixed)
        assert isinstance(fs, _MirroredFilesystem)
        fs.mirror = _Mirror(self.disk, generation, self.start)
        fs.shuffle_listdir_results = False
        fs.listing_order = rng_stream(self._seed, f"listdir:{generation}")


def _made_in_place(fs: FakeFilesystem, path: str, data: bytes | None,
                   changed: Callable[[FakeFile], None]) -> bool:
    """``fs.create_dir(path)`` (``data`` None) or ``fs.create_file(path, contents=data,
    side_effect=changed)``, made as pyfakefs makes them, where the folder above is there.

    pyfakefs resolves the path and its folder again and again on the way (a dozen
    calls for each part, three lookups for a file): filling an incarnation's file
    system with the disk's folders and files was half its set-up. Here the folder
    above is walked to once and the new entry linked in with pyfakefs's own mode
    (its default bits less the umask), inode and contents, in pyfakefs's order.
    False, with nothing made, where the path is not plain, a folder on the way is
    missing or a link, or the name is taken: pyfakefs's own way then makes it or raises.
    """
    if not _plain_absolute(path) or path == "/" or not fs.is_case_sensitive:
        return False
    *above, name = path[1:].split("/")
    folder: Any = fs.root
    for part in above:
        folder = folder.entries.get(part) if _plain_folder(folder) else None
        if folder is None:
            return False
    if not _plain_folder(folder) or name in folder.entries:
        return False
    if data is None:
        made: FakeFile = FakeDirectory(name, filesystem=fs)
        folder.add_entry(made)
        made.st_mode = stat.S_IFDIR | (helpers.PERM_DEF & ~fs.umask)
    else:
        made = FakeFile(name, (stat.S_IFREG | helpers.PERM_DEF_FILE) & ~fs.umask,
                        filesystem=fs, side_effect=changed)
        folder.add_entry(made)
        made.set_initial_contents(data)
    return True


def _mount_lazily(fs: FakeFilesystem, root: str) -> None:
    """``fs.add_real_directory(root, lazy_read=True)``, read-only, for a fresh file system.

    Built by hand: pyfakefs's own resolves every path it touches, which cost
    more than the rest of an incarnation's setup. The roots are never nested
    (see :func:`read_through_roots`), so the folders above one are plain ones.
    """
    folder, name = _folder_above(fs, root)
    if name not in folder.entries:
        folder.add_entry(_RealFolder(root, fs, read_only=True))


def _mount_start_folder(fs: FakeFilesystem, start: StartFolder,
                        changed: Callable[[FakeFile], None]) -> None:
    """Show the real folder the run started in as the working folder, read lazily.

    Unlike the read-only roots, its files are the agent's to change: each carries the
    side effect that mirrors a write (adopting the real content first, :class:`_Mirror`).
    """
    folder, name = _folder_above(fs, start.world)
    if name not in folder.entries:
        folder.add_entry(_StartFolderView(start.real, fs, False, start.world, (start, changed)))


def _hide_removed(fs: FakeFilesystem, disk: CrashDisk, files: dict[str, bytes]) -> None:
    """Hide the real files and folders of the start folder the world took over and then
    removed (or renamed away): the crash disk no longer has them, the real disk still does."""
    if not disk.adopted:
        return
    kept = {*files, *disk.folders()}
    for path in sorted(disk.adopted - kept, key=lambda p: (-p.count("/"), p)):
        if _exists(fs, path):
            fs.remove_object(path)


def _add_real_file(fs: FakeFilesystem, root: str) -> None:
    """``fs.add_real_file(root, read_only=True)`` for a fresh file system, built by hand
    as :func:`_mount_lazily` builds a folder (a certificate bundle is such a root)."""
    folder, name = _folder_above(fs, root)
    if name not in folder.entries:
        made = FakeFileFromRealFile(root, fs)
        made.stat_result.set_from_stat_result(os.stat(root))
        made.st_mode &= 0o777444
        made.file_path = root
        folder.add_entry(made)


def _folder_above(fs: FakeFilesystem, root: str) -> tuple[FakeDirectory, str]:
    """The folder that holds ``root`` (made, plain, where missing) and ``root``'s name."""
    *above, name = root.strip("/").split("/")
    folder = fs.root
    for part in above:
        child = folder.entries.get(part)
        if child is None:
            child = FakeDirectory(part, filesystem=fs)
            folder.add_entry(child)
        assert isinstance(child, FakeDirectory)
        folder = child
    return folder, name


class _RealFolder(FakeDirectoryFromRealDirectory):
    """A real folder, read-only, listed when first looked into: pyfakefs's lazy folder,
    filled without its path resolution.

    pyfakefs adds each entry by path, resolving it from the root again: looking into
    ``site-packages`` (1,700 entries; smolagents reads its prompt templates from
    there) cost a few hundred milliseconds, in every incarnation. Here each entry is
    made and linked in directly, with the same stat, mode and laziness.
    """

    _filled = False  # listed whole, or its entries ready to be made by name

    @property
    def entries(self) -> dict[str, FakeFile]:
        if self.contents_read:
            if not self._filled:  # another thread is listing it (aiosqlite's, say): wait
                with _LISTING:
                    pass
            return self._entries
        with _LISTING:
            if not self.contents_read:
                self.contents_read = True  # what linking entries in asks of it is the dict
                listing = [entry for entry in os.scandir(self.source_path)
                           if self._shown(entry)]
                if any(entry.is_symlink() for entry in listing):
                    for entry in listing:
                        self.make_entry(entry)
                else:
                    self._entries = _EntriesMadeByName(self, listing, self._entries)
                self._filled = True
        return self._entries

    def make_entry(self, entry: os.DirEntry[str], inode: int | None = None) -> None:
        """Make the fake file or folder for ``entry`` (numbered ``inode``) and link it in."""
        if entry.is_symlink():  # rare here; pyfakefs's own way, by path
            self.filesystem.add_real_symlink(entry.path,
                                             posixpath.join(str(self.path), entry.name))
            return
        made = self._folder(entry) if entry.is_dir() else self._file(entry)
        if inode is not None:
            made.st_ino = inode
        self.add_entry(made)

    def _shown(self, entry: os.DirEntry[str]) -> bool:
        del entry
        return True

    def _folder(self, entry: os.DirEntry[str]) -> FakeDirectory:
        return _RealFolder(entry.path, self.filesystem, self.read_only)

    def _file(self, entry: os.DirEntry[str]) -> FakeFile:
        return _real_file(entry, self.filesystem, read_only=self.read_only)


class _StartFolderView(_RealFolder):
    """A folder of the start folder: read lazily, its files writable, each write mirrored."""

    def __init__(self, source: str, fs: FakeFilesystem, read_only: bool, target: str,
                 start: tuple[StartFolder, Callable[[FakeFile], None]]) -> None:
        super().__init__(source, fs, read_only, target)
        self._start = start

    def _shown(self, entry: os.DirEntry[str]) -> bool:
        return self._start[0].shows(entry.path)  # not the run's results, filling meanwhile

    def _folder(self, entry: os.DirEntry[str]) -> FakeDirectory:
        return _StartFolderView(entry.path, self.filesystem, False, entry.name, self._start)

    def _file(self, entry: os.DirEntry[str]) -> FakeFile:
        made = _real_file(entry, self.filesystem, read_only=False)
        made._side_effect = self._start[1]
        return made


# Held while a real folder is listed or one of its entries made: the agent's threads
# (aiosqlite runs each statement on one of its own) look into the same folders.
_LISTING: Final = threading.RLock()


def _every_entry_made(method: Callable[[Any], Any]) -> Callable[[_EntriesMadeByName], Any]:
    """``dict``'s ``method`` (one that reads the whole folder), once every entry is made."""
    def whole(entries: _EntriesMadeByName) -> Any:
        entries._make_all()
        return method(entries)
    return whole


class _EntriesMadeByName(dict[str, FakeFile]):
    """A real folder's entries, each made when first asked for by name.

    Making a pyfakefs file costs about 25 µs, and a folder is listed whenever a path
    through it is looked up: the OpenAI Agents SDK's ``SQLiteSession`` resolving
    ``conversations.db`` in the start folder made every file of the project's folder,
    in every incarnation. Asked by name (``in``, ``[]``, ``get``), one entry is made;
    anything that iterates, counts or copies the folder makes the rest first, and
    finds them in the folder's order with the inode numbers they would have had if
    all had been made at the first look (reserved then), so nothing the agent can see
    depends on which names it asked for first.
    """

    def __init__(self, folder: _RealFolder, listing: list[os.DirEntry[str]],
                 made: dict[str, FakeFile]) -> None:
        super().__init__(made)
        self._folder = folder
        self._pending = {entry.name: entry for entry in listing}
        self._order = [entry.name for entry in listing]
        # What linking every entry in at once would have done to the numbering and
        # the folder's link count, done now; linking one in later counts it again.
        fs = folder.filesystem
        self._first_inode = fs.last_ino
        fs.last_ino += len(listing)
        folder.st_nlink += len(listing)

    def _make(self, name: str) -> None:
        if name not in self._pending:
            return
        with _LISTING:  # another thread may be making it: it is there once the lock is had
            entry = self._pending.pop(name, None)
            if entry is None:
                return
            self._folder.st_nlink -= 1
            self._folder.make_entry(entry, self._first_inode + 1 + self._order.index(name))

    def _make_all(self) -> None:
        with _LISTING:  # one thread may be putting them in order: the others wait for it
            if not self._pending:
                return
            for name in list(self._pending):
                self._make(name)
            made = dict(dict.items(self))
            dict.clear(self)
            for name in self._order:
                if name in made:
                    dict.__setitem__(self, name, made.pop(name))
            dict.update(self, made)  # the agent's own, after the real ones as when listed

    def __contains__(self, name: object) -> bool:
        if dict.__contains__(self, name):
            return True
        with _LISTING:
            return dict.__contains__(self, name) or name in self._pending

    def __getitem__(self, name: str) -> FakeFile:
        self._make(name)
        try:
            return dict.__getitem__(self, name)
        except KeyError:  # or another thread is putting the entries in order
            with _LISTING:
                return dict.__getitem__(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        self._make(name)
        if dict.__contains__(self, name):
            return dict.get(self, name, default)
        with _LISTING:
            return dict.get(self, name, default)

    def __delitem__(self, name: str) -> None:
        self._make(name)
        dict.__delitem__(self, name)
        if name in self._order:  # made again later, it comes after the real ones
            self._order.remove(name)

    def pop(self, name: str, *default: Any) -> Any:
        self._make(name)
        if name in self._order:
            self._order.remove(name)
        return dict.pop(self, name, *default)

    def copy(self) -> dict[str, FakeFile]:
        self._make_all()
        return dict(dict.items(self))

    # Whatever iterates, counts or shows the folder makes every entry first.
    __iter__ = _every_entry_made(dict.__iter__)
    __len__ = _every_entry_made(dict.__len__)
    keys = _every_entry_made(dict.keys)
    values = _every_entry_made(dict.values)
    items = _every_entry_made(dict.items)
    __repr__ = _every_entry_made(dict.__repr__)


def _real_file(entry: os.DirEntry[str], fs: FakeFilesystem, *, read_only: bool) -> FakeFile:
    """What ``fs.add_real_file`` makes of ``entry``, without adding it by path."""
    made = FakeFileFromRealFile(entry.path, fs)
    made.stat_result.set_from_stat_result(entry.stat())
    if read_only:
        made.st_mode &= 0o777444
    made.file_path = entry.path
    return made


class _KeepLibraryModules(dict[str, Callable[[str], bool]]):
    """Cleanup handlers that keep library, installed and standard modules imported while the
    agent ran.

    pyfakefs drops every module imported during a patch from ``sys.modules``;
    for the agent's modules that is welcome (the next incarnation imports them
    afresh), for a library's lazily imported backend, or a standard module such
    as ``concurrent.futures.thread``, it would make a second copy of its
    classes and state. A kept module gets the real ``os``, ``io`` … back in
    place of the fakes it imported.
    """

    def __init__(
        self,
        handlers: dict[str, Callable[[str], bool]],
        packages: tuple[str, ...],
        fakes: dict[str, Any],
        *,
        keep_all: bool = False,
    ) -> None:
        super().__init__(handlers)
        self._keep_all = keep_all
        self._packages = packages
        self._prefixes = tuple(p + "." for p in packages)
        self._fakes = fakes

    def _is_library(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        listed = name in self._packages or name.startswith(self._prefixes)
        return listed or name.partition(".")[0] in _STDLIB

    def __contains__(self, name: object) -> bool:
        # Every module has a say: an installed library the agent imported lazily
        # (litellm loads dozens of its modules on first use) stays imported, once per
        # process instead of once per incarnation; the agent's own code does not.
        return isinstance(name, str)

    def __missing__(self, name: str) -> Callable[[str], bool]:
        return self._keep

    def _keep(self, name: str) -> bool:
        """Put the real modules back into ``name``; whether it may stay imported.

        A module that bound something of the fake file system other than a whole
        module (``from os.path import exists``, under the patch) cannot be put
        right and is dropped, as pyfakefs would: the next import makes it afresh.
        """
        module = sys.modules.get(name)
        reals = {id(fake): _real_module(key) for key, fake in self._fakes.items()}
        kept = True
        for attr, value in list(vars(module).items() if module is not None else ()):
            if id(value) in reals:
                setattr(module, attr, reals[id(value)])
            elif _of_the_fake_file_system(value):
                kept = False
        # Kept all the same when asked (an import checked outside a case): the harness
        # reads what it defines, and a case imports the agent's code afresh.
        return self._keep_all or self._is_library(name) or (kept and _installed_module(module))


def _installed_module(module: ModuleType | None) -> bool:
    """Whether ``module`` was loaded from an installation (``site-packages``, the prefix)."""
    where = getattr(module, "__file__", None)
    if not isinstance(where, str):
        return False
    return any(_within(os.path.abspath(where), root) for root in _installed_roots(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _installed_roots(path: tuple[str, ...]) -> tuple[str, ...]:
    del path  # the cache key: _installed() reads sys.path
    return tuple(os.path.abspath(p) for p in _installed() if p)


def _of_the_fake_file_system(value: object) -> bool:
    """Whether ``value`` is a function, method or object of pyfakefs's fakes.

    Asks nothing of ``value`` that its class could answer with code of its own: a
    lazy proxy (``openai.chat``) answers any attribute by importing modules, which
    must not happen while pyfakefs walks the set of modules loaded under the patch.
    """
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)):
        module: object = type(value.__self__).__module__
    elif isinstance(value, (type, types.FunctionType)):
        module = value.__module__
    else:
        module = type(value).__module__
    return isinstance(module, str) and module.startswith("pyfakefs")


def _real_module(name: str) -> object:
    return pathlib.Path if name == "Path" else sys.modules.get(name)
