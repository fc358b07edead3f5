"""Real files the agent only reads are readable; nothing it does reaches the real disk."""

from __future__ import annotations

import contextlib
import importlib
import os
import pathlib
import ssl
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fakes import CrashDisk
from harness.intercept import AgentFiles, PlainEntry
from harness.runner import Case, CrashSpec, run_case

from .conftest import OPENAI_AGENT, AgentPackages
from .test_plain_agent import SOURCE, mail_scenario

LIBRARY = '''
import importlib.resources
import os


def prompt_by_file():
    with open(os.path.join(os.path.dirname(__file__), "prompts", "agent.yaml")) as f:
        return f.read()


def prompt_by_resources():
    return importlib.resources.files(__package__).joinpath("prompts/agent.yaml").read_text()


def write_beside(name, text):
    with open(os.path.join(os.path.dirname(__file__), name), "w") as f:
        f.write(text)
'''


@pytest.fixture
def installed_library(tmp_path: Path) -> Iterator[Path]:
    """``probe_lib``, an unlisted library in a ``site-packages`` folder, with packaged data."""
    site = tmp_path / "lib" / "site-packages"
    package = site / "probe_lib"
    (package / "prompts").mkdir(parents=True)
    (package / "__init__.py").write_text(LIBRARY)
    (package / "prompts" / "agent.yaml").write_text("system: be brief\n")
    sys.path.insert(0, str(site))
    yield package
    sys.path.remove(str(site))
    sys.modules.pop("probe_lib", None)


def test_an_unlisted_library_reads_its_packaged_data(installed_library: Path) -> None:
    library = importlib.import_module("probe_lib")
    with AgentFiles(CrashDisk()).active(generation=1):
        assert library.prompt_by_file() == "system: be brief\n"
        assert library.prompt_by_resources() == "system: be brief\n"


def test_the_interpreters_packages_and_certificates_are_readable() -> None:
    import tiktoken  # installed, and not a package that keeps the real file system

    wanted = [os.__file__, tiktoken.__file__]
    bundle = ssl.get_default_verify_paths().cafile
    if bundle is not None and os.path.exists(bundle):
        wanted.append(bundle)
    expected = [Path(p).read_bytes() for p in wanted]
    with AgentFiles(CrashDisk()).active(generation=1):
        assert [pathlib.Path(p).read_bytes() for p in wanted] == expected


def test_writes_beside_package_data_go_to_the_world_never_the_real_disk(
        installed_library: Path) -> None:
    library = importlib.import_module("probe_lib")
    data = installed_library / "prompts" / "agent.yaml"
    before = snapshot(installed_library)
    disk = CrashDisk()
    files = AgentFiles(disk)
    with files.active(generation=1):
        library.write_beside("cache.txt", "cached")
        with contextlib.suppress(PermissionError):  # root may, in this incarnation only
            data.write_text("system: changed\n")
    assert disk.files() == {str(installed_library / "cache.txt"): b"cached"}
    assert snapshot(installed_library) == before
    disk.restart()
    with files.active(generation=2):  # the new file is the world's; the real one is as it was
        assert (installed_library / "cache.txt").read_text() == "cached"
        assert library.prompt_by_file() == "system: be brief\n"
    assert snapshot(installed_library) == before


def snapshot(folder: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every name under ``folder`` with its kind, bytes and modification time."""
    found: dict[str, tuple[str, bytes, int]] = {}
    for path in sorted([folder, *folder.rglob("*")]):
        stat = path.lstat()
        kind, data = ("dir", b"") if path.is_dir() else ("file", path.read_bytes())
        found[str(path.relative_to(folder))] = (kind, data, stat.st_mtime_ns)
    return found


STATEFUL_AGENT = '''
import json
import os
import pathlib

from {package}.chat import main as chat

HERE = pathlib.Path(__file__).parent


async def main(prompt: str) -> str:
    instructions = (HERE / "prompt.txt").read_text().strip()
    os.makedirs("state/sessions", exist_ok=True)
    pathlib.Path("state/progress.json").write_text(json.dumps({"step": 1}))
    with open("./data.db", "ab") as db:
        db.write(b"a row")
        db.flush()
        os.fsync(db.fileno())
    (HERE / "last_run.json").write_text("{}")
    try:
        (HERE / "prompt.txt").write_text("overwritten")
    except PermissionError:
        pass
    answer = await chat(prompt)
    return f"{instructions} | {answer}"
'''


@pytest.fixture
def stateful_agent(agent_packages: AgentPackages) -> str:
    from .conftest import TOOLS

    package = agent_packages.write({"tools": TOOLS, "chat": OPENAI_AGENT,
                                    "agent": STATEFUL_AGENT})
    (agent_packages.root / package / "prompt.txt").write_text("Be brief.\n")
    return package


@pytest.mark.parametrize("crash", [None, CrashSpec("progress:write#1", "after", "process_killed")],
                         ids=["no crash", "crash"])
def test_a_run_changes_nothing_on_the_real_disk(
        stateful_agent: str, agent_packages: AgentPackages, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, crash: CrashSpec | None) -> None:
    # Python as CI runs it, caching what it compiles: no __pycache__ beside the agent's code.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    started_in = tmp_path / "project"
    started_in.mkdir()
    (started_in / "data.db").write_bytes(b"the user's own database")
    (started_in / "state").mkdir()
    monkeypatch.chdir(started_in)
    watched: dict[str, Callable[[], object]] = {
        "the folder the run starts in": lambda: snapshot(started_in),
        "the agent's own code": lambda: snapshot(agent_packages.root / stateful_agent),
    }
    before = {name: take() for name, take in watched.items()}

    scenario = mail_scenario(stateful_agent)
    entry = f"{stateful_agent}.agent:main"
    result = run_case(Case(scenario.name, SOURCE, scenario.seed, crash, agent=entry),
                      scenario, PlainEntry(entry))

    assert result.trace is not None
    assert result.trace.extra.final_answer.startswith("Be brief. | Sent."), result.stop_reason
    if crash is not None:
        assert result.crash_reached
    assert {name: take() for name, take in watched.items()} == before
