"""RealDisk on a real temporary folder and on pyfakefs: modes, folder fsync, every error."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem_unittest import Patcher

from harness import DiskError
from harness.agent._disk import RealDisk, ensure_dir
from harness.agent._journal import ToolJournal
from harness.ports import LoopClock, ToolInvocation


class _Clock(LoopClock):
    def now(self) -> float:
        return 0.0


def _journal(path: str, root: str) -> ToolJournal:
    return ToolJournal.open(RealDisk(), path, run_id="run", clock=_Clock(), root=root)


def _append_durably(path: str) -> None:
    with RealDisk().open_append(path) as f:
        f.write(b"x\n")
        f.fsync()


def _fill(journal: ToolJournal) -> None:
    for _ in range(5):
        journal.record_intent(CALL)


CALL = ToolInvocation("turn_1", "call_1", "append", {"text": "hi"})


def test_files_are_created_with_mode_0600_and_folders_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync_dir = RealDisk.fsync_dir
    monkeypatch.setattr(
        RealDisk, "fsync_dir", lambda self, p: (synced.append(p), real_fsync_dir(self, p))[1]
    )
    path = tmp_path / "state" / "journal.jsonl"
    _journal(str(path), str(tmp_path)).record_intent(CALL)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert synced == [str(tmp_path), str(tmp_path / "state"), str(tmp_path)]


def test_appends_use_o_append_and_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real(fd))[1])
    disk = RealDisk()
    path = str(tmp_path / "a.log")
    for text in (b"a\n", b"b\n"):
        with disk.open_append(path) as f:
            f.write(text)
            f.fsync()
    assert disk.read(path) == b"a\nb\n"
    assert len(fsyncs) == 2


def test_ensure_dir_reports_what_it_created(tmp_path: Path) -> None:
    created = ensure_dir(RealDisk(), str(tmp_path / "a" / "b"), root=str(tmp_path))
    assert created == [str(tmp_path / "a"), str(tmp_path / "a" / "b")]
    assert ensure_dir(RealDisk(), str(tmp_path / "a" / "b"), root=str(tmp_path)) == []


def test_a_missing_folder_is_a_disk_error_with_the_path(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "j.jsonl")
    with pytest.raises(DiskError) as caught:
        RealDisk().open_append(missing)
    assert (caught.value.errno, caught.value.path, caught.value.operation) == (
        errno.ENOENT,
        missing,
        "open",
    )
    assert isinstance(caught.value.__cause__, FileNotFoundError)
    assert "create the parent folder first" in str(caught.value)


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_eio_becomes_a_disk_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    def eio(*args: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, failing, eio)
    with pytest.raises(DiskError, match=r"input/output error") as caught:
        _append_durably(str(tmp_path / "j"))
    assert caught.value.errno == errno.EIO
    assert caught.value.operation == failing


def test_permission_denied_on_pyfakefs() -> None:
    # allow_root_user=False: the fake file system enforces mode bits even under root.
    with Patcher(allow_root_user=False) as patcher:
        assert patcher.fs is not None
        patcher.fs.create_dir("/locked", perm_bits=0o500)
        with pytest.raises(DiskError, match=r"permission denied") as caught:
            RealDisk().open_append("/locked/j")
        assert caught.value.errno == errno.EACCES
        assert isinstance(caught.value.__cause__, PermissionError)


def test_a_read_only_folder_on_pyfakefs(monkeypatch: pytest.MonkeyPatch) -> None:
    with Patcher() as patcher:
        assert patcher.fs is not None
        patcher.fs.create_dir("/ro")

        def read_only(*args: object, **kwargs: object) -> int:
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(os, "open", read_only)
        with pytest.raises(DiskError, match=r"read-only file system") as caught:
            RealDisk().open_append("/ro/j")
        assert caught.value.errno == errno.EROFS


def test_a_full_disk_on_pyfakefs_fails_the_journal_append() -> None:
    with Patcher() as patcher:
        fs = patcher.fs
        assert fs is not None
        fs.create_dir("/data")
        fs.set_disk_usage(600, "/data")
        journal = _journal("/data/state/journal.jsonl", "/data")
        journal.record_intent(CALL)
        with pytest.raises(DiskError) as caught:
            _fill(journal)
        assert caught.value.errno == errno.ENOSPC
        # The journal still loads: what was durable is intact, the failed line is cut.
        again = _journal("/data/state/journal.jsonl", "/data")
        assert len(again.executions) == len(journal.executions)
