"""AgentFiles: an unchanged agent's file I/O reaches the crash disk as persistence points."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib
import json
import os
import pathlib
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import harness.intercept
from fakes import (
    CRASH_CLASSES,
    CrashDisk,
    CrashPlan,
    DeadIncarnationError,
    SimulatedCrash,
    crash_class_applies,
)
from harness import HarnessError
from harness.agent._disk import RealDisk
from harness.intercept import REAL_FS_PACKAGES, AgentFiles
from harness.intercept._files import read_through_roots

Program = Callable[[], object]


def points_of(program: Program, disk: CrashDisk | None = None) -> list[str]:
    """Run ``program`` as incarnation 1 of a fresh world; the points it reached."""
    disk = disk or CrashDisk()
    with AgentFiles(disk).active(generation=1):
        program()
    return [p.id for p in disk.points]


def crash_and_restart(program: Program, plan: CrashPlan) -> CrashDisk:
    """Run ``program`` until ``plan`` crashes it, then start the next incarnation."""
    disk = CrashDisk(plan=plan)
    with pytest.raises(SimulatedCrash), AgentFiles(disk).active(generation=1):
        program()
    disk.restart()
    return disk


def read_after_restart(disk: CrashDisk, path: str) -> str | None:
    """What incarnation 2 reads at ``path`` (None: no such file)."""
    with AgentFiles(disk).active(generation=2):
        return pathlib.Path(path).read_text() if os.path.exists(path) else None


# -- what a person writes ------------------------------------------------------


def _walk_the_world(world_folders: list[str]) -> Iterator[tuple[str, list[str]]]:
    """``os.walk("/")`` as the agent sees it, without the real folders it reads through.

    A folder that is read through, or only leads to one, is the real disk's;
    everything else the walk finds must be the world's.
    """
    real = read_through_roots(("/agent", tempfile.gettempdir()))
    kept = set(world_folders)

    def the_real_disks(path: str) -> bool:
        leads = any(root == path or root.startswith(path + "/") for root in real)
        return leads and path not in kept

    for folder, folders, names in os.walk("/"):
        folders[:] = [f for f in folders if not the_real_disks(os.path.join(folder, f))]
        yield folder, names


def save_naively(state: dict[str, Any]) -> None:
    with open("state.json", "w") as f:
        json.dump(state, f)


def save_atomically(path: str, state: dict[str, Any]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as tmp:
        json.dump(state, tmp)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.replace(tmp.name, path)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the points of each pattern --------------------------------------------------


def test_a_naive_json_save_creates_then_truncates_and_rewrites() -> None:
    def program() -> None:
        save_naively({"step": 1})
        save_naively({"step": 2})

    assert points_of(program) == [
        "state:create#1",
        "state:write#1",
        "state:truncate#1",
        "state:write#2",
    ]


def test_bytes_reach_the_disk_only_when_python_flushes_them() -> None:
    def program() -> None:
        f = open("log.txt", "a")  # noqa: SIM115 - flushed by hand, as the test is about
        f.write("one\n")
        f.write("two\n")  # both still in Python's buffer
        f.flush()
        f.write("three\n")
        f.close()
        with open("log.txt", "ab") as g:
            g.write(b"four\n")

    disk = CrashDisk()
    assert points_of(program, disk) == [
        "log:create#1",
        "log:write#1",
        "log:write#2",
        "log:write#3",
    ]
    assert disk.files()["/agent/log.txt"] == b"one\ntwo\nthree\nfour\n"


def test_binary_exclusive_and_update_modes() -> None:
    def program() -> None:
        with open("blob.bin", "xb") as f:
            f.write(b"0123456789")
        with open("blob.bin", "r+b") as f:
            f.seek(4)
            f.write(b"XY")
        with open("blob.bin", "wb") as f:
            f.write(b"new")

    disk = CrashDisk()
    assert points_of(program, disk) == [
        "blob:create#1",
        "blob:write#1",
        "blob:truncate#1",  # r+ changed bytes in the middle: cut, then rewrite
        "blob:write#2",
        "blob:truncate#2",
        "blob:write#3",
    ]
    assert disk.files()["/agent/blob.bin"] == b"new"


def test_raw_descriptors_write_at_once_and_fsync_files_and_folders() -> None:
    def program() -> None:
        fd = os.open("journal.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.write(fd, b"intent\n")
        os.fsync(fd)
        os.write(fd, b"done\n")
        os.fdatasync(fd)
        os.close(fd)
        folder = os.open(".", os.O_RDONLY)
        os.fsync(folder)
        os.close(folder)

    assert points_of(program) == [
        "journal:create#1",
        "journal:write#1",
        "journal:fsync#1",
        "journal:write#2",
        "journal:fsync#2",
        "agent:fsync_dir#1",
    ]


def test_folders_renames_and_removals() -> None:
    def program() -> None:
        os.makedirs("runs/2024", exist_ok=True)
        os.mkdir("cache")
        pathlib.Path("runs/2024/a.txt").write_text("a")
        os.rename("runs/2024/a.txt", "runs/2024/b.txt")
        os.remove("runs/2024/b.txt")
        os.rmdir("cache")

    disk = CrashDisk()
    assert points_of(program, disk) == [
        "runs:mkdir#1",
        "n2024:mkdir#1",
        "cache:mkdir#1",
        "a:create#1",
        "a:write#1",
        "b:rename#1",
        "b:unlink#1",
        "cache:rmdir#1",
    ]
    assert disk.folders() == ["/", "/agent", "/agent/runs", "/agent/runs/2024", "/tmp"]


def test_pathlib_reads_what_it_wrote_and_lists_folders() -> None:
    seen: dict[str, object] = {}

    def program() -> None:
        notes = pathlib.Path("notes")
        notes.mkdir()
        (notes / "a.md").write_text("alpha")
        (notes / "b.bin").write_bytes(b"\x00\x01")
        (notes / "a.md").replace(notes / "c.md")
        (notes / "b.bin").rename(notes / "d.bin")
        (notes / "d.bin").unlink()
        seen["names"] = sorted(p.name for p in notes.iterdir())
        seen["text"] = (notes / "c.md").read_text()
        seen["gone"] = (notes / "d.bin").exists()

    assert points_of(program) == [
        "notes:mkdir#1",
        "a:create#1",
        "a:write#1",
        "b:create#1",
        "b:write#1",
        "c:rename#1",
        "d:rename#1",
        "d:unlink#1",
    ]
    assert seen == {"names": ["c.md"], "text": "alpha", "gone": False}


def test_shutil_copies_moves_and_removes_trees() -> None:
    def program() -> None:
        os.makedirs("src/inner")
        pathlib.Path("src/inner/x.txt").write_text("x")
        shutil.copyfile("src/inner/x.txt", "src/y.txt")
        shutil.move("src/y.txt", "z.txt")
        shutil.rmtree("src")

    disk = CrashDisk()
    ids = points_of(program, disk)
    assert ids[:6] == ["src:mkdir#1", "inner:mkdir#1", "x:create#1", "x:write#1", "y:create#1",
                       "y:write#1"]
    assert ids[6:] == ["z:rename#1", "x:unlink#1", "inner:rmdir#1", "src:rmdir#1"]
    assert disk.files() == {"/agent/z.txt": b"x"}


def test_the_atomic_write_pattern_reaches_its_points_in_order() -> None:
    ids = points_of(lambda: save_atomically("state.json", {"v": 1}))
    tmp_role = ids[0].partition(":")[0]
    assert tmp_role.startswith("tmp")
    assert ids == [
        f"{tmp_role}:create#1",
        f"{tmp_role}:write#1",
        f"{tmp_role}:fsync#1",
        "state:rename#1",
        "agent:fsync_dir#1",
    ]


def test_the_same_program_reaches_the_same_points_every_run() -> None:
    def program() -> None:
        save_atomically("state.json", {"v": 1})
        save_atomically("state.json", {"v": 2})

    assert points_of(program) == points_of(program)


# -- crash states ------------------------------------------------------------------


def test_a_naive_save_killed_after_its_truncate_leaves_an_empty_state_file() -> None:
    def program() -> None:
        save_naively({"step": 1})
        save_naively({"step": 2})

    disk = crash_and_restart(program, CrashPlan("state:truncate#1", "after", "process_killed"))
    assert read_after_restart(disk, "state.json") == ""
    with AgentFiles(disk).active(generation=2), open("state.json") as f:  # noqa: SIM117
        with pytest.raises(json.JSONDecodeError):
            json.load(f)


def test_killed_just_before_the_truncate_the_old_state_is_intact() -> None:
    def program() -> None:
        save_naively({"step": 1})
        save_naively({"step": 2})

    disk = crash_and_restart(program, CrashPlan("state:truncate#1", "before", "process_killed"))
    assert read_after_restart(disk, "state.json") == '{"step": 1}'


def _two_atomic_saves() -> None:
    save_atomically("state.json", {"v": 1})
    save_atomically("state.json", {"v": 2})


def _crash_plans_of_two_atomic_saves() -> Iterator[tuple[CrashPlan, bool]]:
    """Every point x before/after x class, and whether the first save had returned."""
    ids = points_of(_two_atomic_saves)
    first_save_done = len(points_of(lambda: save_atomically("state.json", {"v": 1})))
    for index, point in enumerate(ids):
        for when in ("before", "after"):
            for crash_class in ("unsynced_lost", "missing_dir_fsync"):
                last_of_first = index == first_save_done - 1
                done = index >= first_save_done or (last_of_first and when == "after")
                yield CrashPlan(point, when, crash_class), done  # type: ignore[arg-type]


@pytest.mark.parametrize(("plan", "first_save_done"), list(_crash_plans_of_two_atomic_saves()))
def test_the_atomic_pattern_survives_every_crash_with_old_or_new_content(
    plan: CrashPlan, first_save_done: bool
) -> None:
    disk = crash_and_restart(_two_atomic_saves, plan)
    content = read_after_restart(disk, "state.json")
    allowed = {'{"v": 1}', '{"v": 2}'} if first_save_done else {None, '{"v": 1}'}
    assert content in allowed


def test_a_killed_process_keeps_flushed_bytes_and_loses_buffered_ones() -> None:
    def program() -> None:
        log = open("log.txt", "a")  # noqa: SIM115 - left open: the crash comes first
        log.write("flushed\n")
        log.flush()
        log.write("buffered\n")
        open("marker", "w").close()  # the crash point; log.txt is never closed

    plan = CrashPlan("marker:create#1", "before", "process_killed")
    assert read_after_restart(crash_and_restart(program, plan), "log.txt") == "flushed\n"
    plan = CrashPlan("marker:create#1", "before", "unsynced_lost")
    assert read_after_restart(crash_and_restart(program, plan), "log.txt") == ""


def _journal_then_truncating_rewrite() -> None:
    os.makedirs("state", exist_ok=True)
    with open("state/journal.jsonl", "a") as journal:
        for n in range(3):
            journal.write(json.dumps({"seq": n}) + "\n")
            journal.flush()
            if n < 2:
                os.fsync(journal.fileno())
    fd = os.open("state/summary.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"three records")
    os.close(fd)
    fd = os.open("state/summary.txt", os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"rewritten")
    os.close(fd)


def _every_crash_of_the_journal_program() -> Iterator[CrashPlan]:
    for point in points_of(_journal_then_truncating_rewrite):
        for crash_class in CRASH_CLASSES:
            if crash_class_applies(crash_class, point):
                yield CrashPlan(point, "after", crash_class)


@pytest.mark.parametrize("plan", list(_every_crash_of_the_journal_program()), ids=str)
def test_the_next_incarnation_sees_exactly_the_crash_state(plan: CrashPlan) -> None:
    disk = CrashDisk(plan=plan, seed=7)
    files = AgentFiles(disk)
    with contextlib.suppress(SimulatedCrash, OSError), files.active(generation=1):
        _journal_then_truncating_rewrite()
    crashed = disk.incarnations.crashed
    expected = disk.durable_view() if crashed else disk.files()
    disk.restart()
    seen: dict[str, bytes] = {}
    with files.active(generation=2):
        for folder, names in _walk_the_world(disk.folders()):
            for name in names:
                seen[os.path.join(folder, name)] = pathlib.Path(folder, name).read_bytes()
    assert seen == expected


def test_appends_and_o_trunc_reach_their_points() -> None:
    assert points_of(_journal_then_truncating_rewrite) == [
        "state:mkdir#1",
        "journal:create#1",
        "journal:write#1",
        "journal:fsync#1",
        "journal:write#2",
        "journal:fsync#2",
        "journal:write#3",
        "summary:create#1",
        "summary:write#1",
        "summary:truncate#1",
        "summary:write#2",
    ]


def test_the_next_incarnation_starts_in_the_surviving_workdir() -> None:
    def program() -> None:
        pathlib.Path("a.txt").write_text("unsynced name")
        pathlib.Path("b.txt").write_text("never created")

    disk = CrashDisk(plan=CrashPlan("b:create#1", "before", "missing_dir_fsync"))
    files = AgentFiles(disk, workdir="/home/agent")
    with pytest.raises(SimulatedCrash), files.active(generation=1):
        program()
    disk.restart()
    with files.active(generation=2):
        assert os.getcwd() == "/home/agent"
        assert os.listdir(".") == []
        pathlib.Path("c.txt").write_text("after the restart")
    assert disk.files() == {"/home/agent/c.txt": b"after the restart"}


def test_files_that_survived_a_restart_are_mirrored_too() -> None:
    def program() -> None:
        save_atomically("state.json", {"v": 1})
        save_naively({"v": 2})

    disk = crash_and_restart(program, CrashPlan("state:truncate#1", "before", "unsynced_lost"))
    mark = len(disk.points)
    with AgentFiles(disk).active(generation=2):
        with open("state.json", "a") as f:
            f.write("\n")
        os.truncate("state.json", 3)
        with open("state.json", "r+") as f:
            f.truncate(1)
    assert [p.id for p in disk.points[mark:]] == [
        "state:write#1",
        "state:truncate#2",
        "state:truncate#3",
    ]
    assert disk.files()["/agent/state.json"] == b"{"


def test_a_crash_at_the_last_flush_of_a_clean_end_still_restores_the_real_world() -> None:
    def program() -> None:
        open("log.txt", "w").write("flushed at the end")  # noqa: SIM115 - never closed

    disk = CrashDisk(plan=CrashPlan("log:write#1", "before", "unsynced_lost"))
    with pytest.raises(SimulatedCrash), AgentFiles(disk).active(generation=1):
        program()
    assert open.__module__ == "io"  # the real builtin, not pyfakefs's
    assert os.path.isdir(os.path.dirname(__file__))


def test_renaming_an_empty_folder_is_a_rename_point() -> None:
    def program() -> None:
        os.mkdir("old")
        os.rename("old", "new")

    disk = CrashDisk()
    assert points_of(program, disk) == [
        "old:mkdir#1",
        "new:rename#1",
    ]
    assert "/agent/new" in disk.folders()


@pytest.mark.parametrize("inside", ["old/x.txt", "old/sub/"])
def test_renaming_a_folder_with_anything_inside_is_refused_with_the_way_out(inside: str) -> None:
    def program() -> None:
        os.makedirs("old/sub")
        if not inside.endswith("/"):
            pathlib.Path(inside).write_text("x")
        os.rename("old", "new")

    with pytest.raises(HarnessError, match=r"^renaming the folder '/agent/old' with anything"):
        points_of(program)


@pytest.mark.parametrize("kind", ["symlink", "link"])
def test_links_are_refused_with_the_way_out(kind: str) -> None:
    def program() -> None:
        pathlib.Path("state.json").write_text("{}")
        getattr(os, kind)("state.json", "current.json")  # looked up while active

    with pytest.raises(HarnessError, match=r"^.*'current.json'.*: links are not modelled"):
        points_of(program)


def test_one_incarnation_at_a_time() -> None:
    first, second = AgentFiles(CrashDisk()), AgentFiles(CrashDisk())
    with first.active(generation=1), pytest.raises(HarnessError, match="entered twice"):  # noqa: SIM117
        with second.active(generation=1):
            pass


# -- the dead incarnation -------------------------------------------------------------


def test_a_late_write_of_the_dead_incarnation_is_refused() -> None:
    disk = CrashDisk(plan=CrashPlan("crash:create#1", "before", "unsynced_lost"))
    with AgentFiles(disk).active(generation=1):
        late = open("late.txt", "w")  # noqa: SIM115 - held by a task that outlives the crash
        with pytest.raises(SimulatedCrash):
            pathlib.Path("crash.txt").touch()
        late.write("written after the crash")
        with pytest.raises(DeadIncarnationError, match="incarnation 1 is dead"):
            late.flush()
    assert disk.incarnations.refused == ["write /agent/late.txt"]


def test_files_left_open_by_a_crashed_incarnation_never_flush_later() -> None:
    left_open = []

    def program() -> None:
        log = open("log.txt", "w")  # noqa: SIM115 - left open: the crash comes first
        left_open.append(log)
        log.write("buffered")
        pathlib.Path("crash.txt").touch()

    disk = CrashDisk(plan=CrashPlan("crash:create#1", "before", "process_killed"))
    with pytest.raises(SimulatedCrash), AgentFiles(disk).active(generation=1):
        program()
    left_open[0].close()  # as a finalizer would, after the world moved on
    assert disk.durable_view() == {"/agent/log.txt": b""}
    assert disk.incarnations.refused == []


def test_files_left_open_by_a_clean_incarnation_are_flushed_at_its_end() -> None:
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        open("log.txt", "w").write("flushed at the end")  # noqa: SIM115 - never closed
    assert disk.files() == {"/agent/log.txt": b"flushed at the end"}


def test_a_finally_that_writes_during_the_crash_lets_the_crash_through() -> None:
    def program() -> None:
        try:
            save_naively({"step": 1})
        finally:
            pathlib.Path("cleanup.log").write_text("cleaning up")

    disk = CrashDisk(plan=CrashPlan("state:write#1", "before", "unsynced_lost"))
    with pytest.raises(SimulatedCrash) as caught, AgentFiles(disk).active(generation=1):
        program()
    assert type(caught.value) is SimulatedCrash
    assert caught.value.point_id == "state:write#1"
    assert disk.incarnations.refused == ["create /agent/cleanup.log"]


def test_a_dead_incarnation_cannot_start_again() -> None:
    disk = crash_and_restart(lambda: save_naively({}), CrashPlan("state:create#1"))
    with pytest.raises(DeadIncarnationError), AgentFiles(disk).active(generation=1):
        pass


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("crash_class", "code"), [("eio_on_write", errno.EIO), ("enospc_on_write", errno.ENOSPC)]
)
def test_a_failed_write_raises_the_oserror_of_the_real_call(crash_class: str, code: int) -> None:
    disk = CrashDisk(plan=CrashPlan("state:write#1", "before", crash_class))  # type: ignore[arg-type]
    with AgentFiles(disk).active(generation=1):
        with pytest.raises(OSError, match=os.strerror(code)) as caught:
            save_naively({"step": 1})
        assert caught.value.errno == code
        assert os.path.getsize("state.json") == 0  # the agent sees what the disk holds
    assert not disk.incarnations.crashed


def test_a_failed_fsync_raises_eio() -> None:
    disk = CrashDisk(plan=CrashPlan("state:fsync#1", "before", "eio_on_fsync"))
    with AgentFiles(disk).active(generation=1), open("state.json", "w") as f:
        f.write("{}")
        f.flush()
        with pytest.raises(OSError, match=r"^\[Errno 5\] Input/output error") as caught:
            os.fsync(f.fileno())
    assert caught.value.errno == errno.EIO
    assert caught.value.strerror == os.strerror(errno.EIO)


# -- what keeps the real file system ------------------------------------------------------


@pytest.fixture
def real_package(tmp_path: Path) -> Iterator[Path]:
    """A package ``probe_pkg.reader`` on the real disk that reads files."""
    (tmp_path / "probe_pkg").mkdir()
    (tmp_path / "probe_pkg" / "__init__.py").write_text("")
    (tmp_path / "probe_pkg" / "reader.py").write_text(
        "import os\n"
        "from pathlib import Path\n"
        "def read(path):\n"
        "    with open(path) as f:\n"
        "        return f.read(), os.path.exists(path)\n"
        "def read_path(path):\n"
        "    return Path(path).read_text()\n"
    )
    (tmp_path / "probe_pkg" / "late.py").write_text("import os\nHERE = os.getcwd()\n")
    (tmp_path / "real.txt").write_text("on the real disk")
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in ("probe_pkg", "probe_pkg.reader", "probe_pkg.late"):
        sys.modules.pop(name, None)


def test_listed_packages_keep_the_real_file_system(real_package: Path) -> None:
    reader = importlib.import_module("probe_pkg.reader")
    real = str(real_package / "real.txt")
    files = AgentFiles(CrashDisk(), real_fs_packages=(*REAL_FS_PACKAGES, "probe_pkg"))
    with files.active(generation=1):
        assert not os.path.exists(real)  # the agent's view
        assert reader.read(real) == ("on the real disk", True)  # the library's view
        assert reader.read_path(real) == "on the real disk"
        assert RealDisk().read(real) == b"on the real disk"  # the harness's own code


def test_an_unlisted_package_sees_the_agents_files(real_package: Path) -> None:
    reader = importlib.import_module("probe_pkg.reader")
    with AgentFiles(CrashDisk()).active(generation=1):
        pathlib.Path("mine.txt").write_text("fake")
        assert reader.read("mine.txt") == ("fake", True)


def test_a_module_imported_while_active_loads_from_the_real_disk(real_package: Path) -> None:
    with AgentFiles(CrashDisk()).active(generation=1):
        late = importlib.import_module("probe_pkg.late")
    assert late.HERE == "/agent"  # its code runs in the agent's world
    assert "probe_pkg.late" not in sys.modules  # the next incarnation imports it afresh


def test_a_standard_module_imported_while_active_stays_imported_with_the_real_os() -> None:
    name = "filecmp"  # a standard module that imports os, and nothing here before
    assert name not in sys.modules
    try:
        with AgentFiles(CrashDisk()).active(generation=1):
            module = importlib.import_module(name)
        assert sys.modules[name] is module
        assert module.os is os
    finally:
        sys.modules.pop(name, None)


def test_a_library_imported_while_active_stays_imported(real_package: Path) -> None:
    files = AgentFiles(CrashDisk(), real_fs_packages=(*REAL_FS_PACKAGES, "probe_pkg"))
    with files.active(generation=1):
        late = importlib.import_module("probe_pkg.late")
    assert sys.modules["probe_pkg.late"] is late
    assert late.os is os  # not the fake it imported while the agent ran
    assert os.getcwd() == late.HERE  # a library's code saw the real current folder


def test_read_only_folders_show_the_agents_own_data_and_keep_it_unchanged(
    real_package: Path,
) -> None:
    prompts = str(real_package / "probe_pkg")
    disk = CrashDisk()
    with AgentFiles(disk, read_only_folders=[prompts]).active(generation=1):
        assert pathlib.Path(prompts, "late.py").read_text().startswith("import os")
        # Refused for a normal user; root may write, but only in the fake file system.
        with contextlib.suppress(PermissionError):
            pathlib.Path(prompts, "late.py").write_text("changed")
    assert disk.points == []
    assert (real_package / "probe_pkg" / "late.py").read_text().startswith("import os")


def test_async_file_helpers_write_the_agents_files(tmp_path: Path) -> None:
    import anyio

    async def agent() -> None:
        await anyio.Path("a.txt").write_text("via anyio.Path")
        async with await anyio.open_file("b.txt", "w") as f:
            await f.write("via anyio.open_file")
        await asyncio.to_thread(pathlib.Path("c.txt").write_text, "via a worker thread")

    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        anyio.run(agent)
    assert disk.files() == {
        "/agent/a.txt": b"via anyio.Path",
        "/agent/b.txt": b"via anyio.open_file",
        "/agent/c.txt": b"via a worker thread",
    }


def test_an_http_client_builds_its_tls_context_from_the_real_certificates() -> None:
    import httpx

    with AgentFiles(CrashDisk()).active(generation=1):
        client = httpx.Client()
        client.close()


def test_the_public_face_exports_exactly_its_public_names() -> None:
    public = {name for name in vars(harness.intercept) if not name.startswith("_")}
    public -= {"annotations"}
    public = {n for n in public if not isinstance(getattr(harness.intercept, n), type(sys))}
    assert public == set(harness.intercept.__all__)
    assert {"REAL_FS_PACKAGES", "AgentFiles"} <= public


# -- the mirror never drifts ---------------------------------------------------------------

NAMES = ["a.txt", "b.txt", "d/c.txt"]
operations = st.lists(
    st.tuples(
        st.sampled_from(
            ["write", "append", "buffer", "flush", "fsync", "replace", "unlink", "mkdir",
             "rmdir", "truncate"]
        ),
        st.sampled_from(NAMES),
        st.sampled_from(NAMES),
        st.binary(max_size=12),
    ),
    max_size=14,
)


class _AgentProgram:
    """Random file work in an agent's own words; OS errors are the agent's to ignore."""

    def __init__(self) -> None:
        self.held: dict[str, Any] = {}

    def run(self, op: str, name: str, other: str, data: bytes) -> None:
        with contextlib.suppress(OSError):
            getattr(self, op)(name, other, data)

    def write(self, name: str, _other: str, data: bytes) -> None:
        with open(name, "wb") as f:
            f.write(data)

    def append(self, name: str, _other: str, data: bytes) -> None:
        with open(name, "ab") as f:
            f.write(data)

    def buffer(self, name: str, _other: str, data: bytes) -> None:
        if name not in self.held:
            self.held[name] = open(name, "ab")  # noqa: SIM115 - held open across steps
        self.held[name].write(data)

    def flush(self, name: str, _other: str, _data: bytes) -> None:
        if name in self.held:
            self.held[name].flush()

    def fsync(self, name: str, _other: str, _data: bytes) -> None:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def replace(self, name: str, other: str, _data: bytes) -> None:
        os.replace(name, other)

    def unlink(self, name: str, _other: str, _data: bytes) -> None:
        os.unlink(name)

    def mkdir(self, _name: str, _other: str, _data: bytes) -> None:
        os.mkdir("d")

    def rmdir(self, _name: str, _other: str, _data: bytes) -> None:
        os.rmdir("d")

    def truncate(self, name: str, _other: str, data: bytes) -> None:
        os.truncate(name, len(data))


def _what_the_agent_sees(disk: CrashDisk) -> dict[str, bytes]:
    seen = {}
    for folder, names in _walk_the_world(disk.folders()):
        for name in names:
            seen[os.path.join(folder, name)] = pathlib.Path(folder, name).read_bytes()
    return seen


@settings(max_examples=40, deadline=None)
@given(ops=operations)
def test_the_crash_disk_holds_what_the_agent_handed_to_the_os_after_every_step(
    ops: list[tuple[str, str, str, bytes]],
) -> None:
    disk = CrashDisk()
    program = _AgentProgram()
    with AgentFiles(disk).active(generation=1):
        for op in ops:
            program.run(*op)
            assert _what_the_agent_sees(disk) == disk.files()
            assert sorted(d for d, _ in _walk_the_world(disk.folders())) == disk.folders()


# -- pyfakefs's file objects, made cheap, answer as pyfakefs does ------------------------


def test_a_file_object_written_in_many_small_pieces_holds_them_all() -> None:
    # json.dump writes token by token: hundreds of write() calls into one file.
    state = {"entries": [{"id": i, "tags": ["a", "b"], "text": "é" * 3} for i in range(40)]}
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        with open("state.json", "w", encoding="utf-8") as text:
            json.dump(state, text)
        with open("state.bin", "wb") as binary:
            for i in range(300):
                binary.write(bytes([i % 256]))
        with open("state.json", "a", encoding="utf-8") as appended:
            appended.write("\n")
            appended.write("tail")
    files = disk.files()
    assert files["/agent/state.json"] == (json.dumps(state) + "\ntail").encode()
    assert files["/agent/state.bin"] == bytes(i % 256 for i in range(300))


def test_writing_a_closed_or_read_only_file_object_fails_as_on_a_real_disk() -> None:
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        with open("notes.txt", "w") as kept:
            kept.write("one")  # the write method is now known to this object
        with pytest.raises(ValueError, match="closed file"):
            kept.write("two")
        with open("notes.txt") as reading, pytest.raises(OSError, match="not open for writing"):
            reading.write("three")
        with open("notes.txt", "rb") as reading_bytes, \
                pytest.raises(OSError, match="not open for writing"):
            reading_bytes.write(b"four")
    assert disk.files()["/agent/notes.txt"] == b"one"


def test_pyfakefs_is_left_as_it_was_for_the_users_own_tests() -> None:
    # The cheaper file objects and path helpers are swapped in for an incarnation only:
    # a project's own pyfakefs tests in the same process get pyfakefs unchanged.
    from pyfakefs import fake_file, fake_filesystem, fake_open, fake_os, fake_path, helpers

    def pyfakefs_as_shipped() -> bool:
        return (fake_open.FakeTextFileWrapper is fake_file.FakeTextFileWrapper
                and fake_open.FakeBinaryFileWrapper is fake_file.FakeBinaryFileWrapper
                and all(module.make_string_path is helpers.make_string_path
                        for module in (fake_filesystem, fake_os, fake_path)))

    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        inside = pyfakefs_as_shipped()
        pathlib.Path("notes.txt").write_text("kept")
    assert not inside
    assert pyfakefs_as_shipped()
    assert disk.files()["/agent/notes.txt"] == b"kept"


def _agent_module(name: str) -> Any:
    """A module of the agent's own, as an incarnation imports it afresh: it uses ``os``."""
    module = type(sys)(name)
    exec("import os\nfrom os.path import exists\n"
         "def save(text):\n    with open('m.txt', 'w') as f:\n        f.write(text)\n",
         vars(module))
    return module


class _Unhashable:
    """What some libraries put in ``sys.modules``: an object that is no module."""

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize("unhashable_in_sys_modules", [False, True])
def test_the_agents_dropped_modules_leave_the_patchers_tables(
        unhashable_in_sys_modules: bool) -> None:
    """Each incarnation's fresh copy of the agent's module is patched, then forgotten.

    pyfakefs caches the modules it patches in tables it never empties; a module the
    next incarnation imports afresh left its dead copy there, and every later set-up
    patched it again: set-up cost grew with the incarnations a worker had run. The
    dead copies are found as well when ``sys.modules`` holds an unhashable object.
    """
    from harness.intercept._files import _AgentPatcher

    disk, name, sizes = CrashDisk(), "agent_module_made_per_incarnation", []
    odd = "an_unhashable_entry_of_sys_modules"
    if unhashable_in_sys_modules:
        sys.modules[odd] = _Unhashable()  # type: ignore[assignment]
    try:
        for generation in range(1, 6):
            if generation > 1:
                disk.restart()
            module = sys.modules[name] = _agent_module(name)
            with AgentFiles(disk).active(generation=generation):
                module.save(f"incarnation {generation}")
                assert module.exists("m.txt")  # patched: the file is on the crash disk
            del sys.modules[name]  # the incarnation ends: its modules are dropped
            sizes.append((len(_AgentPatcher.CACHED_MODULES),
                          sum(len(m) for m in _AgentPatcher.FS_MODULES.values()),
                          sum(len(m) for m in _AgentPatcher.FS_FUNCTIONS.values())))
    finally:
        sys.modules.pop(name, None)
        sys.modules.pop(odd, None)
    assert disk.files()["/agent/m.txt"] == b"incarnation 5"
    assert module.os is os  # the last copy got the real modules back
    assert len(set(sizes[1:])) == 1, f"the tables grew with each incarnation: {sizes}"


def test_the_dropped_modules_leave_a_cache_pyfakefs_made_anew_as_well() -> None:
    """pyfakefs replaces its module cache when a patcher's options change (another
    agent's listed packages in the same worker); the new cache, smaller than the one
    before it, is pruned too: whether it is must not depend on what the worker ran."""
    from harness.intercept._files import _AgentPatcher

    fillers = [f"a_module_loaded_before_{i}" for i in range(40)]
    for filler in fillers:
        sys.modules[filler] = _agent_module(filler)
    try:
        first = CrashDisk()
        for generation in (1, 2):  # the cache and its pruning mark hold the fillers
            if generation > 1:
                first.restart()
            with AgentFiles(first).active(generation=generation):
                pass
    finally:
        for filler in fillers:
            del sys.modules[filler]
    other = AgentFiles(CrashDisk(), real_fs_packages=(*REAL_FS_PACKAGES, "json"))
    with other.active(generation=1):  # another patcher's options: a new, smaller cache
        pass

    disk, name, sizes = CrashDisk(), "agent_module_made_per_incarnation", []
    files = AgentFiles(disk)
    try:
        for generation in range(1, 6):
            if generation > 1:
                disk.restart()
            module = sys.modules[name] = _agent_module(name)
            with files.active(generation=generation):
                module.save(f"incarnation {generation}")
            del sys.modules[name]
            sizes.append((len(_AgentPatcher.CACHED_MODULES),
                          sum(len(m) for m in _AgentPatcher.FS_FUNCTIONS.values())))
    finally:
        sys.modules.pop(name, None)
    assert len(set(sizes[1:])) == 1, f"the tables grew with each incarnation: {sizes}"


class _RaisesOnLook(type(sys)):  # type: ignore[misc]
    """A module whose attributes raise when looked at (pyfakefs's own workaround covers it)."""

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            raise RuntimeError("no looking")
        return super().__getattribute__(name)


def _patcher_tables(scan: Callable[[Any], None], fresh: dict[str, Any]) -> tuple[Any, ...]:
    """pyfakefs's tables after ``scan``: first of every loaded module with empty tables,
    then, ``fresh`` loaded, a second scan that finds the first one's in the cache."""
    from harness.intercept._files import _AgentPatcher

    class Isolated(_AgentPatcher):  # tables of its own, empty
        CACHED_MODULES: ClassVar[Any] = set()
        FS_MODULES: ClassVar[Any] = {}
        SKIPPED_FS_MODULES: ClassVar[Any] = {}
        FS_FUNCTIONS: ClassVar[Any] = {}
        FS_DEFARGS: ClassVar[Any] = []

    patcher = Isolated(additional_skip_names=["a_skipped_package"], use_cache=True,
                       patch_default_args=True)
    Isolated.CACHED_MODULES = set()
    first = scan(patcher)
    del first
    added = {name: sys.modules.setdefault(name, module) for name, module in fresh.items()}
    try:
        scan(patcher)
    finally:
        for name in added:
            sys.modules.pop(name, None)

    def ids(pairs: Any) -> Any:
        return sorted((id(m), n) for m, n in pairs)

    return ({id(m) for m in Isolated.CACHED_MODULES},
            {k: ids(v) for k, v in Isolated.FS_MODULES.items()},
            {k: ids(v) for k, v in Isolated.SKIPPED_FS_MODULES.items()},
            {k: sorted(map(id, v)) for k, v in Isolated.FS_FUNCTIONS.items()},
            [(id(f), i, id(d)) for f, i, d in Isolated.FS_DEFARGS])


@pytest.mark.parametrize("unhashable_in_sys_modules", [False, True])
def test_the_patchers_scan_of_new_modules_fills_pyfakefs_tables_as_its_own_scan(
        unhashable_in_sys_modules: bool) -> None:
    """Each set-up scans only the modules loaded since the last one (pyfakefs walks every
    loaded module again, skipping the cached ones one at a time): the tables it fills,
    and their order, are pyfakefs's own, for modules that use ``os``, a skipped package,
    a function default that is a file-system function, objects that are no modules."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    defaults = type(sys)("an_agent_module_with_defaults")
    exec("import os\ndef check(path, exists=os.path.exists):\n    return exists(path)\n"
         "class Store:\n    def has(self, path, look=os.path.isfile):\n        return look(path)\n",
         vars(defaults))
    fresh: dict[str, Any] = {
        "an_agent_module_made_afresh": _agent_module("an_agent_module_made_afresh"),
        "a_skipped_package": _agent_module("a_skipped_package"),
        "an_agent_module_with_defaults": defaults,
        "a_module_that_raises_when_looked_at": _RaisesOnLook("a_module_that_raises_when_looked_at"),
        "an_object_that_is_no_module": object(),
    }
    if unhashable_in_sys_modules:
        fresh["an_unhashable_entry_of_sys_modules"] = _Unhashable()
    # A scan may import what it looks at (a module's lazy attribute): done once first,
    # so both scans compared meet the same modules.
    _patcher_tables(Patcher._find_modules, fresh)
    ours = _patcher_tables(lambda p: p._find_modules(), fresh)
    theirs = _patcher_tables(Patcher._find_modules, fresh)
    assert ours == theirs
    assert ours[1], "the scan found no module using os: it compared nothing"
    assert ours[4], "the scan found no default to patch: it compared nothing"


def test_the_patchers_set_up_scans_only_the_modules_not_scanned_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second incarnation's set-up looks at its fresh module alone, not at the two
    thousand a framework brings, which pyfakefs had already scanned."""
    from harness.intercept._files import _AgentPatcher

    looked: list[str] = []
    scan = _AgentPatcher._scan_module

    def counted(self: Any, module: Any, names: list[str]) -> None:
        looked.append(getattr(module, "__name__", "?"))
        scan(self, module, names)

    monkeypatch.setattr(_AgentPatcher, "_scan_module", counted)
    disk, name = CrashDisk(), "agent_module_made_per_incarnation"
    try:
        for generation in (1, 2):
            if generation > 1:
                disk.restart()
            module = sys.modules[name] = _agent_module(name)
            looked.clear()
            with AgentFiles(disk).active(generation=generation):
                module.save(f"incarnation {generation}")
                assert module.exists("m.txt")  # patched: the file is on the crash disk
            del sys.modules[name]
    finally:
        sys.modules.pop(name, None)
    assert name in looked
    assert len(looked) < 20, f"scanned {len(looked)} modules again: {looked[:30]}"
    assert disk.files()["/agent/m.txt"] == b"incarnation 2"


@pytest.mark.parametrize(("mode", "encoding", "piece"), [
    ("w", "utf-8", "é" * 3000),       # 6,000 bytes a piece in UTF-8
    ("a", "utf-8", "x" * 3000),
    ("w", "latin-1", "x" * 3000),     # not UTF-8: every write is pyfakefs's own
    ("wb", None, b"x" * 3000),
    ("ab", None, b"x" * 3000),
])
def test_a_buffered_file_reaches_the_disk_at_the_same_writes_as_pyfakefs_own(
        mode: str, encoding: str | None, piece: str | bytes) -> None:
    # Small writes go to the buffer directly; the one that fills Python's buffer
    # still flushes there, a point of the crash disk, as pyfakefs's own write did.
    disk = CrashDisk()
    seen: list[bytes | None] = []
    with AgentFiles(disk).active(generation=1), open("log.txt", mode, encoding=encoding) as f:
        for _ in range(6):
            f.write(piece)
            seen.append(disk.files().get("/agent/log.txt"))
    sizes = [None if data is None else len(data) for data in seen]
    piece_bytes = len(piece.encode(encoding or "utf-8") if isinstance(piece, str) else piece)
    pyfakefs_would = [0, 0, 0, 0, 0, 0]  # the buffer's size: 8,192 bytes (io.DEFAULT_BUFFER_SIZE)
    held = 0
    for n in range(6):
        if held + piece_bytes > 8192:
            pyfakefs_would[n:] = [pyfakefs_would[n - 1] + held] * (6 - n)
            held = 0
        held += piece_bytes
    assert sizes == pyfakefs_would
    assert disk.files()["/agent/log.txt"] == (
        piece.encode(encoding or "utf-8") if isinstance(piece, str) else piece) * 6


def test_a_write_method_kept_past_close_fails_as_on_a_real_disk() -> None:
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        f = open("notes.txt", "w")  # noqa: SIM115 - closed by hand, as the test is about
        write = f.write
        write("one")
        f.close()
        with pytest.raises(ValueError, match="closed file"):
            write("two")
    assert disk.files()["/agent/notes.txt"] == b"one"


_PATH_PARTS = st.sampled_from(["d", "e", "f.txt", ".", "..", "", "link", ".hidden", "agent"])


@settings(max_examples=150, deadline=None)
@given(start=st.sampled_from(["/agent", "/agent/link", "/", "", "/nowhere", "agent/d", "e",
                              "link", "."]),
       parts=st.lists(_PATH_PARTS, max_size=4), trailing=st.booleans(),
       cwd=st.sampled_from(["/agent", "/agent/d", "/"]))
@example(start="/agent/link", parts=["e"], trailing=False, cwd="/agent")
@example(start="/agent/link", parts=[], trailing=False, cwd="/agent")
@example(start="link", parts=["e"], trailing=False, cwd="/agent")
def test_paths_resolve_as_pyfakefs_resolves_them(start: str, parts: list[str],
                                                 trailing: bool, cwd: str) -> None:
    # The mirrored file system walks plain absolute paths itself; every answer is
    # pyfakefs's, links and paths to normalize included.
    from pyfakefs.fake_filesystem import FakeFilesystem

    path = "/".join([start, *parts]) + ("/" if trailing else "")
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        os.makedirs("/agent/d/e", exist_ok=True)
        pathlib.Path("/agent/d/f.txt").write_text("f")
        files = AgentFiles._active
        assert files is not None
        fs = files._fake_fs()
        fs._reading_through = True  # a link, as a real folder read through may hold
        try:
            fs.create_symlink("/agent/link", "/agent/d")
        finally:
            fs._reading_through = False
        os.chdir(cwd)

        def answer(method: Callable[..., Any], *args: Any) -> object:
            try:
                return method(fs, *args)
            except OSError as error:
                return error.errno

        for name in ("resolve_path", "absnormpath"):
            ours = answer(getattr(type(fs), name), path)
            theirs = answer(getattr(FakeFilesystem, name), path)
            assert ours == theirs, (name, path)


@pytest.mark.parametrize("set_tmpdir", [False, True])
def test_the_world_makes_the_temporary_folder_as_pyfakefs_did(
        set_tmpdir: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyfakefs made the temporary folder at every set-up, through its slow path lookup
    (7 % of a plain agent's incarnation); the world makes it instead: the one ``TMPDIR``
    names, and ``/tmp`` (pyfakefs links it to the other where there is none)."""
    if set_tmpdir:
        monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with AgentFiles(CrashDisk()).active(generation=1):
        temp = tempfile.gettempdir()
        assert os.path.isdir(temp)
        assert os.path.isdir("/tmp")
        with tempfile.NamedTemporaryFile("w", delete=False) as scratch:
            scratch.write("x")
        assert os.path.dirname(scratch.name) == temp
        assert os.path.exists(scratch.name)
    assert temp == (str(tmp_path) if set_tmpdir else "/tmp")
    assert not os.path.exists(scratch.name)  # the world's, never the real disk's


_LOOKUP_PARTS = st.sampled_from(["d", "e", "f.txt", ".", "..", "", "link", "flink", "dangling",
                                 "agent", "nowhere"])


@settings(max_examples=200, deadline=None)
@given(start=st.sampled_from(["/agent", "/agent/link", "/agent/flink", "/agent/dangling", "/",
                              "", "/nowhere", "agent/d", "e", "link", "flink", "dangling", ".",
                              "/dev/null", "/agent/d/f.txt"]),
       parts=st.lists(_LOOKUP_PARTS, max_size=3), trailing=st.booleans(),
       cwd=st.sampled_from(["/agent", "/agent/d", "/"]))
@example(start="/agent/flink", parts=[], trailing=False, cwd="/agent")
@example(start="/agent/dangling", parts=[], trailing=False, cwd="/agent")
@example(start="/agent/link", parts=["f.txt"], trailing=False, cwd="/agent")
@example(start="/agent/d/f.txt", parts=["e"], trailing=False, cwd="/agent")
@example(start="/dev/null", parts=[], trailing=False, cwd="/agent")
def test_objects_are_looked_up_as_pyfakefs_looks_them_up(start: str, parts: list[str],
                                                         trailing: bool, cwd: str) -> None:
    # The mirrored file system finds the object of a plain path itself (lresolve, the
    # lookup of a resolved path, exists with and without the link itself): every answer
    # is pyfakefs's own, the same object or the same error, links to a folder, to a
    # file and to nothing on the way or at the end included.
    from pyfakefs.fake_filesystem import FakeFilesystem

    path = "/".join([start, *parts]) + ("/" if trailing else "")
    disk = CrashDisk()
    with AgentFiles(disk).active(generation=1):
        os.makedirs("/agent/d/e", exist_ok=True)
        pathlib.Path("/agent/d/f.txt").write_text("f")
        files = AgentFiles._active
        assert files is not None
        fs = files._fake_fs()
        fs._reading_through = True  # links, as a real folder read through may hold
        try:
            fs.create_symlink("/agent/link", "/agent/d")
            fs.create_symlink("/agent/flink", "/agent/d/f.txt")
            fs.create_symlink("/agent/dangling", "/agent/none")
        finally:
            fs._reading_through = False
        os.chdir(cwd)

        def answer(method: Callable[..., Any], *args: Any) -> object:
            try:
                return method(fs, *args)
            except OSError as error:
                return error.errno, error.filename

        def pyfakefs_answer(name: str, *args: Any) -> object:
            # pyfakefs's own class throughout, its inner calls (resolve calls
            # lresolve) included: the answer owes nothing to ours.
            mirrored = type(fs)
            fs.__class__ = FakeFilesystem
            try:
                return answer(getattr(FakeFilesystem, name), *args)
            finally:
                fs.__class__ = mirrored

        resolved = pyfakefs_answer("resolve_path", path)
        calls: list[tuple[str, tuple[Any, ...]]] = [
            ("lresolve", (path,)), ("exists", (path,)), ("exists", (path, True)),
            ("islink", (path,)), ("isdir", (path,)), ("isfile", (path,)),
            ("resolve", (path,)), ("resolve", (path, False))]
        if isinstance(resolved, str):
            calls.append(("get_object_from_normpath", (resolved,)))
        for name, args in calls:
            ours = answer(getattr(type(fs), name), *args)
            theirs = pyfakefs_answer(name, *args)
            assert ours is theirs or ours == theirs, (name, args, ours, theirs)


@pytest.mark.parametrize("start_folder", [False, True])
def test_an_incarnations_files_are_made_as_pyfakefs_makes_them(
        start_folder: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The disk's folders and files are linked into a fresh file system by hand
    # (_made_in_place); the file system is the one pyfakefs's create_dir and
    # create_file made: the same objects' modes, inodes, links, sizes and contents,
    # in the same order, a real file the agent wrote over among them, and a write
    # through any of them still reaches the disk.
    import harness.intercept._files as files_module

    (tmp_path / "given.txt").write_text("real")
    disk = CrashDisk()
    files = AgentFiles(disk, start_folder=str(tmp_path) if start_folder else None)
    with files.active(generation=1):
        os.makedirs("/agent/a/b/c", exist_ok=True)
        os.makedirs(os.path.join(tempfile.gettempdir(), "scratch"), exist_ok=True)
        pathlib.Path("/agent/a/one.json").write_text('{"n": 1}')
        pathlib.Path("/agent/a/b/c/two.bin").write_bytes(b"\x00\x01")
        pathlib.Path("/agent/given.txt").write_text("the agent's")
        pathlib.Path("/agent/empty").write_bytes(b"")
    made = disk.folders() + sorted(disk.files())

    def built(by_hand: bool) -> list[tuple[object, ...]]:
        if not by_hand:
            monkeypatch.setattr(files_module, "_made_in_place", lambda *_args: False)
        disk.restart()
        with files.active(generation=disk.incarnations.current):
            fs = files._fake_fs()
            seen: list[tuple[object, ...]] = [("last inode", fs.last_ino)]
            for path in made:
                node = fs.lresolve(path)
                seen.append((path, type(node).__name__, node.st_mode, node.st_ino,
                             node.st_nlink, node.st_dev, node.size,
                             None if stat.S_ISDIR(node.st_mode) else node.byte_contents))
        monkeypatch.undo()
        return seen

    assert built(by_hand=True) == built(by_hand=False)
    disk.restart()
    with files.active(generation=disk.incarnations.current):
        pathlib.Path("/agent/a/one.json").write_text('{"n": 2}')
        os.mkdir("/agent/a/b/c/d")
    assert disk.files()["/agent/a/one.json"] == b'{"n": 2}'
    assert "/agent/a/b/c/d" in disk.folders()
