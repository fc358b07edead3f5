"""A library that writes a file when imported: checking the agent's entry point keeps it off
the real disk.

Haystack makes ``~/.haystack/config.yaml`` (its telemetry's user id) the first time it
is imported. The harness imports the agent once outside any case to check ``--agent``;
that import wrote the real home folder, and in a sealed worker, where every real mount
is read-only, it failed with ``EROFS`` and the agent was refused as a bad ``--agent``.
"""

from __future__ import annotations

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


def test_a_file_written_while_the_agent_is_imported_stays_off_the_real_disk(
        agent_packages: AgentPackages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    package = agent_packages.write({"agent": WRITES_ITS_CONFIG})

    entry = load_agent_factory(f"{package}.agent:main")

    assert isinstance(entry, PlainEntry)
    assert sys.modules[f"{package}.agent"].USER  # it wrote and read its config …
    assert list(home.iterdir()) == []  # … on a disk of its own
