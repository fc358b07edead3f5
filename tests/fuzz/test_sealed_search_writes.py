"""What a sealed search hands back is written as the search would have written it, and
only under ``--out``: the agent may have written what came back."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from harness._errors import WorkerError
from harness.fuzz import HandedBackDatabase, apply_changes, write_handed_back


def _changes(database: ExampleDatabase) -> None:
    database.save(b"key", b"kept")
    database.save(b"key", b"dropped")
    database.delete(b"key", b"dropped")
    database.move(b"key", b"other", b"kept")
    database.save(b"key.secondary", b"\x00\xff")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_handed_back_changes_make_the_same_files_and_bytes(tmp_path: Path) -> None:
    _changes(DirectoryBasedExampleDatabase(tmp_path / "direct" / "db"))
    sealed = HandedBackDatabase(tmp_path / "sealed" / "db")
    _changes(sealed)
    assert not (tmp_path / "sealed").exists()  # nothing written while searching

    apply_changes(tmp_path / "sealed", sealed.sendable())

    assert _files(tmp_path / "sealed") == _files(tmp_path / "direct")
    assert _files(tmp_path / "direct")


def test_what_is_on_disk_is_read_and_overlaid(tmp_path: Path) -> None:
    DirectoryBasedExampleDatabase(tmp_path / "db").save(b"key", b"saved before")
    sealed = HandedBackDatabase(tmp_path / "db")
    sealed.save(b"key", b"new")
    sealed.delete(b"key", b"saved before")

    assert list(sealed.fetch(b"key")) == [b"new"]


@pytest.mark.parametrize("name", ["../escaped", "/tmp", "..", ""])
def test_a_database_named_outside_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(WorkerError, match="handed back a database named"):
        apply_changes(tmp_path / "out", {"name": name, "changes": []})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../escaped.yaml", "/tmp/x.yaml", "repro.py"])
def test_a_repro_named_outside_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    found = {"databases": [], "repros": [{"name": name, "text": "x"}]}
    with pytest.raises(WorkerError, match="handed back a repro named"):
        write_handed_back(tmp_path / "out", found)
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.rglob("*.yaml")) == []
