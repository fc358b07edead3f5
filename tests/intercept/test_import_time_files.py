"""A library that writes a file when imported still imports where the real disk is read-only.

Haystack makes ``~/.haystack/config.yaml`` (its telemetry's user id) the first time it
is imported. The harness imports the agent outside any case to check ``--agent``, and
again in each worker, where every real mount is read-only (the seal): the write failed
with ``EROFS`` and the agent was refused as a bad ``--agent``. The test makes the home
folder read-only as the seal does (root writes through file modes).
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
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


# What CrewAI does when imported: numpy (a C extension, loadable once per process) comes
# in before the write to ~/.local/share fails, and after it come pydantic models with a
# path field. A first run on a machine where crewai never ran was refused as a bad
# --agent: the second try, which forgot numpy, failed loading it again, and under the
# fake file system pydantic found no schema for pyfakefs's FakePath.
LOADS_ONCE = '''
import sys

if getattr(sys, "_{package}_loaded", False):
    raise ImportError("cannot load module more than once per process")
sys._{package}_loaded = True
'''

HAS_A_PATH_FIELD = '''
from pathlib import Path

import pydantic


class SkillEvent(pydantic.BaseModel):
    skill_path: Path | None = None
'''

IMPORTS_AS_CREWAI_DOES = '''
import pathlib

from {package} import loads_once

DATA = pathlib.Path("~/.local/share").expanduser() / pathlib.Path.cwd().name
DATA.mkdir(parents=True, exist_ok=True)

from {package}.events import SkillEvent


def main(prompt: str) -> str:
    return str(SkillEvent(skill_path="notes").skill_path)
'''


def test_a_library_importing_as_crewai_does_imports_on_the_throwaway_disk(
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
    package = agent_packages.write({"loads_once": LOADS_ONCE, "events": HAS_A_PATH_FIELD,
                                    "agent": IMPORTS_AS_CREWAI_DOES})
    try:
        entry = load_agent_factory(f"{package}.agent:main")
        assert isinstance(entry, PlainEntry)
        events = sys.modules[f"{package}.events"]
        # What it imported holds the real classes, as an import on a disk that already
        # held the folder would: a path field validates to a real path …
        assert events.Path is pathlib.Path
        made = events.SkillEvent(skill_path="notes").skill_path
        assert type(made) is type(pathlib.Path("notes"))
        assert sys.modules[f"{package}.agent"].DATA.name == Path.cwd().name
        assert list(home.iterdir()) == []  # … and nothing reached the real home folder
    finally:
        with contextlib.suppress(AttributeError):
            delattr(sys, f"_{package}_loaded")


# Haystack's package imports its ``logging`` submodule, then writes ~/.haystack: the
# failed import drops the package, not the submodule that ran to the end. Kept, the
# package imported again would not get it as an attribute ("partially initialized module
# 'haystack' has no attribute 'logging'").
PACKAGE_THAT_WRITES = '''
import pathlib

import {package}_lib.logging

{package}_lib.logging.configure()
CONFIG = pathlib.Path("~/.mylib").expanduser()
CONFIG.mkdir(exist_ok=True)
'''


def test_a_package_whose_import_wrote_gets_its_submodules_again_on_the_throwaway_disk(
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
    package = agent_packages.write({"agent": "import {package}_lib\n"
                                             "def main(prompt):\n    return 'Hi.'\n"})
    lib = tmp_path / f"{package}_lib"  # a library of its own, as haystack is
    lib.mkdir()
    (lib / "__init__.py").write_text(PACKAGE_THAT_WRITES.replace("{package}", package))
    (lib / "logging.py").write_text("def configure():\n    pass\n")

    entry = load_agent_factory(f"{package}.agent:main")

    assert isinstance(entry, PlainEntry)
    assert sys.modules[f"{package}_lib"].logging is sys.modules[f"{package}_lib.logging"]
    assert list(home.iterdir()) == []
