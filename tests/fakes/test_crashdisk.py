"""CrashDisk: the exact durable state each crash class leaves, and refusal after a crash."""

from __future__ import annotations

import errno
from typing import Any

import pytest

from fakes import CrashDisk, CrashPlan, DeadIncarnationError, SimulatedCrash
from fakes._crashdisk import role_for_path
from harness import ConfigError, DiskError

FILE = "/state/journal.jsonl"


def _write_two_records(disk: CrashDisk) -> None:
    """One durable record, then one appended but not fsynced; crash at the fsync."""
    view = disk.view()
    view.mkdir("/state")
    view.fsync_dir("/")
    with view.open_append(FILE) as f:
        f.write(b"first\n")
        f.fsync()
        view.fsync_dir("/state")
        f.write(b"second-record\n")
        f.fsync()


def _write_and_sync(view: Any, *, sync_folder: bool = False) -> None:
    with view.open_append(FILE) as f:
        f.write(b"data\n")
        if sync_folder:
            view.fsync_dir("/state")
        f.fsync()


def _crash(crash_class: str, point: str = "journal:fsync#2", seed: int = 0) -> CrashDisk:
    disk = CrashDisk(plan=CrashPlan(point, "before", crash_class), seed=seed)  # type: ignore[arg-type]
    with pytest.raises(SimulatedCrash):
        _write_two_records(disk)
    return disk


def test_unsynced_data_is_lost() -> None:
    assert _crash("unsynced_lost").restart().read(FILE) == b"first\n"


def test_a_torn_short_append_keeps_a_prefix_of_the_last_write() -> None:
    data = _crash("torn_append_short").restart().read(FILE)
    assert data.startswith(b"first\n")
    assert b"second-record\n".startswith(data[6:])
    assert 6 < len(data) < len(b"first\nsecond-record\n")


def test_a_zero_filled_torn_append_keeps_the_full_length() -> None:
    data = _crash("torn_append_zeros").restart().read(FILE)
    assert len(data) == len(b"first\nsecond-record\n")
    tail = data[6:]
    cut = len(tail.rstrip(b"\0"))
    assert b"second-record\n"[:cut] == tail[:cut]
    assert tail[cut:] == b"\0" * (len(tail) - cut)


def test_garbage_is_seeded_so_the_state_is_reproducible() -> None:
    first = _crash("torn_append_garbage", seed=3).restart().read(FILE)
    again = _crash("torn_append_garbage", seed=3).restart().read(FILE)
    assert first == again
    assert len(first) == len(b"first\nsecond-record\n")


def test_a_file_whose_folder_was_never_fsynced_disappears() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:fsync#1", "after", "missing_dir_fsync"))
    view = disk.view()
    view.mkdir("/state")
    view.fsync_dir("/")
    with pytest.raises(SimulatedCrash):
        _write_and_sync(view)
    assert disk.durable_view() == {}
    assert not disk.restart().exists(FILE)


def test_the_same_crash_under_unsynced_lost_keeps_the_name() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:fsync#1", "after", "unsynced_lost"))
    view = disk.view()
    view.mkdir("/state")
    with pytest.raises(SimulatedCrash):
        _write_and_sync(view)
    assert disk.durable_view() == {FILE: b"data\n"}


def test_an_unsynced_folder_takes_its_files_with_it() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:fsync#1", "after", "missing_dir_fsync"))
    view = disk.view()
    view.mkdir("/state")  # "/" never fsynced, so /state itself is not durable
    with pytest.raises(SimulatedCrash):
        _write_and_sync(view, sync_folder=True)  # the file's name is durable in /state
    assert disk.durable_view() == {}


@pytest.mark.parametrize(
    ("crash_class", "point", "code"),
    [
        ("eio_on_write", "journal:write#2", errno.EIO),
        ("enospc_on_write", "journal:write#2", errno.ENOSPC),
        ("eio_on_fsync", "journal:fsync#2", errno.EIO),
    ],
)
def test_error_classes_raise_a_disk_error_and_do_not_crash(
    crash_class: str, point: str, code: int
) -> None:
    disk = CrashDisk(plan=CrashPlan(point, "before", crash_class))  # type: ignore[arg-type]
    with pytest.raises(DiskError) as caught:
        _write_two_records(disk)
    assert caught.value.errno == code
    assert isinstance(caught.value.__cause__, OSError)
    assert not disk.incarnations.crashed
    disk.view().read(FILE)  # the process lives on


def test_error_classes_only_apply_to_their_operations() -> None:
    with pytest.raises(
        ConfigError, match=r"^crash_class: got 'eio_on_fsync'; expected a point whose op"
    ):
        CrashPlan("journal:write#1", "before", "eio_on_fsync")
    with pytest.raises(ConfigError, match=r"^point_id: got 'journal'"):
        CrashPlan("journal")


def test_after_the_crash_the_dead_incarnation_is_refused() -> None:
    disk = _crash("unsynced_lost")
    old = disk.for_incarnation(1)
    with pytest.raises(DeadIncarnationError, match="incarnation 1 is dead"):
        old.read(FILE)
    new = disk.restart()
    with pytest.raises(DeadIncarnationError):
        old.open_append(FILE)
    assert new.read(FILE) == b"first\n"
    assert disk.incarnations.refused == [f"read {FILE}", "open /state"]


def _write_then_clean_up(view: Any) -> None:
    try:
        _write_and_sync(view)
    finally:
        view.open_append("/state/cleanup.log")  # refused, raises again


def test_a_late_finally_cannot_write_after_the_crash() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:fsync#1", "before"))
    view = disk.view()
    view.mkdir("/state")
    with pytest.raises(SimulatedCrash):
        _write_then_clean_up(view)
    assert disk.incarnations.refused == ["open /state"]


def test_point_ids_are_stable_across_runs_and_count_per_role() -> None:
    def run() -> list[str]:
        disk = CrashDisk(roles={"/state/journal.jsonl": "tooljournal"})
        _write_two_records(disk)
        return [p.id for p in disk.points]

    assert (
        run()
        == run()
        == [
            "state:mkdir#1",
            "root:fsync_dir#1",
            "tooljournal:create#1",
            "tooljournal:write#1",
            "tooljournal:fsync#1",
            "state:fsync_dir#1",
            "tooljournal:write#2",
            "tooljournal:fsync#2",
        ]
    )


def test_a_clean_restart_keeps_everything() -> None:
    disk = CrashDisk()
    view = disk.view()
    view.mkdir("/state")
    with view.open_append(FILE) as f:
        f.write(b"unsynced\n")
    assert disk.restart().read(FILE) == b"unsynced\n"
    assert disk.incarnations.current == 2


def test_a_killed_process_keeps_everything_it_handed_to_the_os() -> None:
    disk = CrashDisk(plan=CrashPlan("journal:write#2", "after", "process_killed"))
    view = disk.view()
    view.mkdir("/state")  # never fsynced: the page cache still holds the name
    f = view.open_append(FILE)
    f.write(b"first\n")
    with pytest.raises(SimulatedCrash):
        f.write(b"second\n")
    assert disk.restart().read(FILE) == b"first\nsecond\n"


def _unlink_synced_file(disk: CrashDisk, *, sync_removal: bool) -> None:
    view = disk.view()
    view.mkdir("/state")
    view.fsync_dir("/")
    with view.open_append(FILE) as f:
        f.write(b"kept\n")
        f.fsync()
    view.fsync_dir("/state")
    view.unlink(FILE)
    if sync_removal:
        view.fsync_dir("/state")
    view.mkdir("/state/after")  # the crash point


@pytest.mark.parametrize(("sync_removal", "survives"), [(False, True), (True, False)])
def test_an_unlink_is_durable_only_after_a_folder_fsync(
    sync_removal: bool, survives: bool
) -> None:
    disk = CrashDisk(plan=CrashPlan("after:mkdir#1", "before", "missing_dir_fsync"))
    with pytest.raises(SimulatedCrash):
        _unlink_synced_file(disk, sync_removal=sync_removal)
    assert "journal:unlink#1" in [p.id for p in disk.points]
    assert disk.restart().exists(FILE) is survives


def test_rmdir_removes_an_empty_folder_and_refuses_a_full_one() -> None:
    disk = CrashDisk()
    view = disk.view()
    view.mkdir("/state")
    view.mkdir("/state/old")
    with view.open_append(FILE):
        pass
    with pytest.raises(DiskError) as caught:
        view.rmdir("/state")
    assert caught.value.errno == errno.ENOTEMPTY
    with pytest.raises(DiskError) as caught:
        view.unlink("/state/old")
    assert caught.value.errno == errno.EISDIR
    view.rmdir("/state/old")
    assert disk.folders() == ["/", "/state"]
    assert [p.id for p in disk.points][-1] == "old:rmdir#1"


@pytest.mark.parametrize(("path", "role"), [
    ("/agent/1b1cf602e9.tmp", "n1b1cf602e9"),  # a temporary file named by a hash
    ("/agent/2024-05-01.log", "n2024"),
    ("/agent/.state-k3x9.json", "state"),
    ("/agent/42", "n42"),
])
def test_a_files_role_keeps_its_name_from_its_first_character(path: str, role: str) -> None:
    # The role named a point of "1b1cf602e9.tmp" "b1cf602e9": a name the user never saw.
    assert role_for_path(path) == role


def test_durable_folders_are_set_up_without_points() -> None:
    disk = CrashDisk(plan=CrashPlan("x:mkdir#1", "before", "missing_dir_fsync"))
    disk.make_durable_folders("/home/agent")
    view = disk.view()
    with pytest.raises(SimulatedCrash):
        view.mkdir("/home/agent/x")
    assert disk.points[0].id == "x:mkdir#1"
    assert disk.restart().is_dir("/home/agent")


def test_crashes_that_leave_the_same_files_have_one_crash_state_key() -> None:
    # Lost before its fsync, or never written: the restart finds the same one record.
    lost_unsynced = _crash("unsynced_lost", "journal:fsync#2")
    never_written = _crash("unsynced_lost", "journal:write#2")
    kept_by_the_os = _crash("process_killed", "journal:fsync#2")

    assert lost_unsynced.crash_state_key() == never_written.crash_state_key()
    assert lost_unsynced.crash_state_key() != kept_by_the_os.crash_state_key()
    assert kept_by_the_os.durable_view()[FILE] == b"first\nsecond-record\n"


def test_a_disk_that_has_not_crashed_has_no_crash_state_key() -> None:
    disk = CrashDisk()
    _write_two_records(disk)

    with pytest.raises(ValueError, match="has not crashed"):
        disk.crash_state_key()


def test_a_copied_disk_shares_its_files_bytes_and_changes_apart() -> None:
    # A recorded run copies the world at every point: copying every file each time made
    # a recording grow with the square of the run (225 MB at 64 turns of appends).
    import copy

    disk = CrashDisk()
    _write_two_records(disk)
    twin = copy.deepcopy(disk)

    number = disk._names[FILE]
    assert twin._inodes[number].data is disk._inodes[number].data
    with twin.view().open_append(FILE) as f:
        f.write(b"third\n")
    assert disk.files()[FILE] == b"first\nsecond-record\n"
    assert twin.files()[FILE] == b"first\nsecond-record\nthird\n"


def test_appends_grow_one_buffer_after_a_copy_as_before_it() -> None:
    # Immutable bytes alone made every append copy the whole file: 65 appends of 1 MiB
    # copied 2 GB. After a copy froze the bytes, one append copies them once, no more.
    import copy

    disk = CrashDisk()
    view = disk.view()
    view.mkdir("/state")
    with view.open_append(FILE) as f:
        f.write(b"a" * 1024)
        copy.deepcopy(disk)
        f.write(b"b")
        number = disk._names[FILE]
        buffer = disk._inodes[number].data
        for _ in range(3):
            f.write(b"c")
            assert disk._inodes[number].data is buffer
    assert disk.files()[FILE] == b"a" * 1024 + b"bccc"

