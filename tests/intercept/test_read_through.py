"""Real files the agent only reads are readable; nothing it does reaches the real disk."""

from __future__ import annotations

import contextlib
import importlib
import os
import pathlib
import sqlite3
import ssl
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fakes import CrashDisk, CrashPlan, SimulatedCrash
from harness._environment import agent_environ, hiding
from harness.intercept import (
    HIDDEN_VARIABLE,
    AgentFiles,
    PlainEntry,
    WorldDatabases,
    _start_folder,
    keep_hidden_folders,
)
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


PROXYING_LIBRARY = '''
import importlib


class _Lazy:
    """What the openai package exports as ``openai.chat``: a client made, and its
    modules imported, on the first attribute asked of it."""

    def __getattr__(self, name):
        return getattr(importlib.import_module("probe_proxied.loaded_late"), name)


chat = _Lazy()
'''


def test_a_library_first_imported_by_the_agent_is_put_back_without_waking_its_proxies(
        tmp_path: Path) -> None:
    """smolagents imports openai during the first incarnation; putting the real modules
    back into it touched ``openai.chat``, whose import then changed pyfakefs's set of
    loaded modules while it walked it: the first case of every worker ended in
    ``RuntimeError: Set changed size during iteration``, reported as the agent's."""
    site = tmp_path / "lib" / "site-packages"
    (site / "probe_proxied").mkdir(parents=True)
    (site / "probe_proxied" / "__init__.py").write_text(PROXYING_LIBRARY)
    (site / "probe_proxied" / "loaded_late.py").write_text("completions = 'made'\n")
    sys.path.insert(0, str(site))
    try:
        with AgentFiles(CrashDisk()).active(generation=1):
            importlib.import_module("probe_proxied")
        assert "probe_proxied.loaded_late" not in sys.modules
        assert sys.modules["probe_proxied"].chat.completions == "made"
    finally:
        sys.path.remove(str(site))
        for name in ("probe_proxied", "probe_proxied.loaded_late"):
            sys.modules.pop(name, None)


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
import sqlite3

from {package}.chat import main as chat

HERE = pathlib.Path(__file__).parent


async def main(prompt: str) -> str:
    instructions = (HERE / "prompt.txt").read_text().strip()
    tone = open("system_prompt.txt").read().strip()  # from the folder the run starts in
    db = sqlite3.connect("state/lg.sqlite")
    rows = db.execute("select count(*) from notes").fetchone()[0]
    db.execute("insert into notes values ('seen')")
    db.commit()
    db.close()
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
    return f"{instructions} {tone} {rows} | {answer}"
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
    (started_in / "system_prompt.txt").write_text("Be kind.\n")
    db = sqlite3.connect(started_in / "state" / "lg.sqlite")
    db.execute("create table notes (note text)")
    db.execute("insert into notes values ('real')")
    db.commit()
    db.close()
    monkeypatch.chdir(started_in)
    watched: dict[str, Callable[[], object]] = {
        "the folder the run starts in": lambda: snapshot(started_in),
        "the agent's own code": lambda: snapshot(agent_packages.root / stateful_agent),
    }
    before = {name: take() for name, take in watched.items()}

    scenario = mail_scenario(stateful_agent)
    entry = f"{stateful_agent}.agent:main"
    results = [run_case(Case(scenario.name, SOURCE, scenario.seed, crash, agent=entry),
                        scenario, PlainEntry(entry)) for _ in range(2)]
    result = results[0]

    assert result.trace is not None
    assert results[1].digest == result.digest  # each case starts from the same real files
    # The start folder's prompt and database are read through; the row the agent added
    # went to the world's copy (the restarted agent finds it there), and each case
    # starts from the one real row again.
    rows = 1 if crash is None else 2
    assert result.trace.extra.final_answer.startswith(f"Be brief. Be kind. {rows} | Sent."), \
        result.stop_reason
    if crash is not None:
        assert result.crash_reached
    assert {name: take() for name, take in watched.items()} == before


# -- the folder the run starts in -------------------------------------------------------


@pytest.fixture
def started_in(tmp_path: Path) -> Path:
    """A user's project folder: a prompt, a log, and a SQLite database with two rows."""
    folder = tmp_path / "project"
    (folder / "state").mkdir(parents=True)
    (folder / "system_prompt.txt").write_text("Be terse.\n")
    (folder / "notes.log").write_text("old\n")
    db = sqlite3.connect(folder / "state" / "lg.sqlite")
    db.execute("create table notes (note text)")
    db.executemany("insert into notes values (?)", [("one",), ("two",)])
    db.commit()
    db.close()
    return folder


def test_the_start_folder_is_read_through_and_written_only_in_the_world(
        started_in: Path) -> None:
    before = snapshot(started_in)
    disk = CrashDisk()
    files = AgentFiles(disk, start_folder=str(started_in))
    with files.active(generation=1):
        assert pathlib.Path("system_prompt.txt").read_text() == "Be terse.\n"
        assert sorted(os.listdir(".")) == ["notes.log", "state", "system_prompt.txt"]
        with open("notes.log", "a") as log:
            log.write("ran\n")
        os.remove("system_prompt.txt")
        pathlib.Path("state/new.json").write_text("{}")
    assert snapshot(started_in) == before
    assert disk.files()["/agent/notes.log"] == b"old\nran\n"
    assert "/agent/system_prompt.txt" not in disk.files()
    disk.restart()
    with files.active(generation=2):  # the world's changes outlive the incarnation
        assert pathlib.Path("notes.log").read_text() == "old\nran\n"
        assert not os.path.exists("system_prompt.txt")
        assert pathlib.Path("state/new.json").read_text() == "{}"
    # Another case starts from the real folder again.
    with AgentFiles(CrashDisk(), start_folder=str(started_in)).active(generation=1):
        assert pathlib.Path("notes.log").read_text() == "old\n"
        assert pathlib.Path("system_prompt.txt").read_text() == "Be terse.\n"
    assert snapshot(started_in) == before


def _looked_into(folder: Path, first: str | None) -> tuple[list[str] | None, object]:
    """What an incarnation sees of ``folder`` as its start folder: the entries made once
    ``first`` alone was asked for by name, then its listing, inodes and link count once
    the agent added a file of its own and removed a real one."""
    files = AgentFiles(CrashDisk(), start_folder=str(folder))
    made = None
    with files.active(generation=1):
        if first is not None:
            os.stat(first)
            view = files._fake_fs().get_object(os.getcwd())
            made = sorted(dict.keys(view.entries))
        pathlib.Path("mine.txt").write_text("x")
        os.remove("c.txt")
        names = os.listdir(".")
        scanned = [entry.name for entry in os.scandir(".")]
        seen = (names, scanned, {n: os.stat(n).st_ino for n in names}, os.stat(".").st_nlink)
    return made, seen


def test_a_real_file_asked_for_by_name_is_made_alone_and_the_folder_looks_the_same(
        started_in: Path) -> None:
    """Making a fake entry costs; an agent opening one file of a large project folder
    (``SQLiteSession`` resolving ``conversations.db``) pays for that one, and nothing it
    can see depends on which names it asked for first."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (started_in / name).write_text(name)
    made, by_name = _looked_into(started_in, "b.txt")
    assert made == ["b.txt"]
    _, listed = _looked_into(started_in, None)
    assert by_name == listed
    scanned = listed[1]  # type: ignore[index]
    real = [e.name for e in os.scandir(started_in) if e.name != "c.txt"]
    assert scanned == [*real, "mine.txt"]  # the folder's own order, then the agent's


def test_a_listing_is_in_an_order_of_the_cases_seed(started_in: Path) -> None:
    """pyfakefs shuffles ``os.listdir`` with the process's unseeded ``random``: an agent
    that took the first name listed did something else in every run."""
    for name in "abcdefgh":
        (started_in / name).write_text(name)

    def listed(seed: int) -> list[str]:
        with AgentFiles(CrashDisk(), seed=seed, start_folder=str(started_in)).active(
                generation=1):
            return os.listdir(".")

    orders = {tuple(listed(seed)) for seed in (1, 1, 1)}
    assert len(orders) == 1
    assert len({tuple(listed(seed)) for seed in range(2, 8)} | orders) > 1


def test_a_change_to_a_start_folder_file_is_lost_by_a_crash_before_its_fsync(
        started_in: Path) -> None:
    disk = CrashDisk(plan=CrashPlan("notes:write#1", "after", "unsynced_lost"))
    files = AgentFiles(disk, start_folder=str(started_in))
    with pytest.raises(SimulatedCrash), files.active(generation=1), \
            open("notes.log", "a") as log:
        log.write("ran\n")
    disk.restart()
    with files.active(generation=2):  # the real content was durable before the case
        assert pathlib.Path("notes.log").read_text() == "old\n"


def test_a_database_in_the_start_folder_starts_every_case_from_its_real_contents(
        started_in: Path) -> None:
    before = snapshot(started_in)
    for _ in range(2):
        disk = CrashDisk()
        files = AgentFiles(disk, start_folder=str(started_in))
        databases = WorldDatabases(disk, start=files.start)
        with files.active(generation=1), databases.active(1):
            db = sqlite3.connect("state/lg.sqlite")
            assert [r[0] for r in db.execute("select note from notes")] == ["one", "two"]
            db.execute("insert into notes values ('three')")
            db.commit()
            db.close()
        assert [p.id for p in disk.points] == ["sqlite:commit#1"]
        disk.restart()
        with files.active(generation=2), databases.active(2):
            db = sqlite3.connect("state/lg.sqlite")
            assert [r[0] for r in db.execute("select note from notes")] == [
                "one", "two", "three"]
            db.close()
    assert snapshot(started_in) == before


def test_the_runs_results_are_not_shown_in_the_start_folder(started_in: Path) -> None:
    # They fill while the cases run: an agent listing its folder would see another tree
    # in every case (and in each of the two runs --check-determinism compares).
    (started_in / "results").mkdir()
    (started_in / "results" / "cases.jsonl").write_text("{}\n")
    with hiding(str(started_in / "results")):
        files = AgentFiles(CrashDisk(), start_folder=str(started_in))
    with files.active(generation=1):
        assert sorted(os.listdir(".")) == ["notes.log", "state", "system_prompt.txt"]
        assert not os.path.exists("results/cases.jsonl")


def test_the_results_stay_hidden_where_the_agents_environment_is_in_force(
        started_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A sealed worker's os.environ becomes the agent's, which never names the hidden
    # folders: read from there, `harness run --out` and the plugin's results showed in
    # every case. The worker keeps them first, as become_guest does.
    (started_in / "results").mkdir()
    (started_in / "results" / "cases.jsonl").write_text("{}\n")
    monkeypatch.setattr(_start_folder, "_KEPT", [])
    with hiding(str(started_in / "results")):
        keep_hidden_folders()
    with agent_environ({}):
        assert HIDDEN_VARIABLE not in os.environ
        files = AgentFiles(CrashDisk(), start_folder=str(started_in))
    with files.active(generation=1):
        assert "results" not in os.listdir(".")


def test_a_new_database_in_a_real_folder_of_the_start_folder_opens_in_the_world(
        started_in: Path) -> None:
    # sqlite3.connect("state/checkpoints.sqlite") with a real, empty-of-it state/ once
    # failed "unable to open database file": the folder was not in the world.
    before = snapshot(started_in)
    disk = CrashDisk()
    files = AgentFiles(disk, start_folder=str(started_in))
    with files.active(generation=1), WorldDatabases(disk, start=files.start).active(1):
        db = sqlite3.connect("state/checkpoints.sqlite")
        db.execute("create table checkpoints (step integer)")
        db.commit()
        db.close()
        assert sorted(os.listdir("state")) == ["checkpoints.sqlite", "lg.sqlite"]
    assert "/agent/state/checkpoints.sqlite" in disk.files()
    assert snapshot(started_in) == before
