"""A library that writes a file when imported still imports where the real disk is read-only.

Haystack makes ``~/.haystack/config.yaml`` (its telemetry's user id) the first time it
is imported. The harness imports the agent outside any case to check ``--agent``, and
again in each worker, where every real mount is read-only (the seal): the write failed
with ``EROFS`` and the agent was refused as a bad ``--agent``. The test makes the home
folder read-only as the seal does (root writes through file modes).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from harness.intercept import PlainEntry
from harness.runner import load_agent_factory

from .conftest import AgentPackages

WRITES_ITS_CONFIG = '''
import pathlib
import uuid

CONFIG = pathlib.Path("~/.mylib/config.yaml").expanduser()
if CONFIG.exists():
    USER = CONFIG.read_text()
else:
    CONFIG.parent.mkdir(parents=True, exist_ok=True)
    USER = str(uuid.uuid4())
    CONFIG.write_text(USER)


def main(prompt: str) -> str:
    return USER
'''


def test_a_library_writing_at_import_to_a_read_only_disk_still_imports(
        agent_packages: AgentPackages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    real_mkdir = os.mkdir

    def read_only(path: object, *args: object, **kwargs: object) -> None:
        if str(path).startswith(str(home)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", read_only)
    package = agent_packages.write({"agent": WRITES_ITS_CONFIG})

    entry = load_agent_factory(f"{package}.agent:main")

    assert isinstance(entry, PlainEntry)
    assert sys.modules[f"{package}.agent"].USER  # it wrote and read its config …
    assert list(home.iterdir()) == []  # … on a disk of its own
