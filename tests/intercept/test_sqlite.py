"""SQLite databases an unchanged agent opens live on the crash disk, crashed at their commits."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from fakes import CrashClass, CrashDisk, CrashPlan, SimulatedCrash
from harness.intercept import AgentFiles, WorldDatabases

Program = Callable[[], object]


@contextmanager
def incarnation(disk: CrashDisk, databases: WorldDatabases, generation: int) -> Iterator[None]:
    with AgentFiles(disk).active(generation), databases.active(generation):
        yield


def run_program(program: Program, plan: CrashPlan | None = None
                ) -> tuple[CrashDisk, WorldDatabases]:
    """Run ``program`` as incarnation 1 (crashing it if ``plan`` fires), then restart."""
    disk = CrashDisk(plan=plan)
    databases = WorldDatabases(disk)
    try:
        with incarnation(disk, databases, 1):
            program()
    except SimulatedCrash:
        pass
    disk.restart()
    return disk, databases


def rows_after_restart(disk: CrashDisk, databases: WorldDatabases,
                       query: str = "SELECT k, v FROM kv ORDER BY k") -> list[tuple[Any, ...]]:
    with incarnation(disk, databases, 2):
        connection = sqlite3.connect("state.db")
        try:
            return connection.execute(query).fetchall()
        except sqlite3.OperationalError:  # no such table: nothing was committed
            return []
        finally:
            connection.close()


def two_commits() -> None:
    connection = sqlite3.connect("state.db")
    connection.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER)")
    with connection:
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
    connection.execute("INSERT INTO kv VALUES ('b', 2)")
    connection.commit()


def points(disk: CrashDisk) -> list[str]:
    return [p.id for p in disk.points]


# -- every way a transaction commits is one point -------------------------------


def test_each_commit_that_changed_the_database_is_one_sqlite_point() -> None:
    def program() -> None:
        two_commits()
        connection = sqlite3.connect("state.db")
        connection.execute("SELECT * FROM kv").fetchall()  # reads: no point
        connection.execute("INSERT INTO kv VALUES ('c', 3)")
        connection.rollback()  # rolled back: no point
        connection.execute("UPDATE kv SET v = 9 WHERE k = 'nobody'")
        connection.commit()  # changed nothing: no point

    disk, _ = run_program(program)
    # CREATE TABLE autocommits; `with connection:` commits; commit() commits.
    assert points(disk) == ["sqlite:commit#1", "sqlite:commit#2", "sqlite:commit#3"]
    assert {p.path for p in disk.points} == {"/agent/state.db"}


def test_autocommit_scripts_and_sql_commits_are_points_too() -> None:
    def program() -> None:
        connection = sqlite3.connect("state.db", isolation_level=None)  # autocommit
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
        connection.executescript("INSERT INTO kv VALUES ('b', 2); INSERT INTO kv VALUES ('c', 3);")
        connection.execute("BEGIN")
        connection.execute("INSERT INTO kv VALUES ('d', 4)")
        connection.execute("COMMIT")
        cursor = connection.cursor()
        cursor.executemany("INSERT INTO kv VALUES (?, ?)", [("e", 5), ("f", 6)])

    disk, databases = run_program(program)
    assert points(disk) == [f"sqlite:commit#{n}" for n in range(1, 6)]
    assert [k for k, _ in rows_after_restart(disk, databases)] == list("abcdef")


# -- the world, not the real disk -----------------------------------------------


def test_nothing_reaches_the_real_working_folder(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    disk, _ = run_program(two_commits)
    assert sorted(os.listdir(tmp_path)) == []
    assert list(disk.files()) == ["/agent/state.db"]


def test_each_world_starts_with_no_database() -> None:
    first, _ = run_program(two_commits)
    second, _ = run_program(lambda: None)
    assert rows_after_restart(first, WorldDatabases(first)) == [("a", 1), ("b", 2)]
    assert rows_after_restart(second, WorldDatabases(second)) == []


def test_the_agent_sees_its_database_file_in_its_folder() -> None:
    seen: list[bool] = []

    def program() -> None:
        two_commits()
        seen.append(os.path.exists("state.db") and os.path.getsize("state.db") > 0)

    run_program(program)
    assert seen == [True]


def test_memory_databases_are_left_alone() -> None:
    def program() -> None:
        connection = sqlite3.connect(":memory:")
        connection.execute("CREATE TABLE t (x)")
        connection.commit()
        shared = sqlite3.connect("file:cache?mode=memory&cache=shared", uri=True)
        shared.execute("CREATE TABLE t (x)")

    disk, _ = run_program(program)
    assert points(disk) == []


def test_connections_from_other_threads_share_the_database() -> None:
    async def program() -> None:
        def write() -> None:
            connection = sqlite3.connect("state.db")
            connection.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER)")
            connection.execute("INSERT INTO kv VALUES ('t', 1)")
            connection.commit()

        await asyncio.to_thread(write)
        reader = sqlite3.connect("state.db")
        assert reader.execute("SELECT k FROM kv").fetchall() == [("t",)]

    disk, databases = run_program(lambda: asyncio.run(program()))
    assert rows_after_restart(disk, databases) == [("t", 1)]


def test_row_factories_and_factories_of_the_agent_keep_working() -> None:
    class Mine(sqlite3.Connection):
        pass

    def program() -> None:
        connection = sqlite3.connect("state.db", factory=Mine)
        assert isinstance(connection, Mine)
        connection.row_factory = lambda cursor, row: {"only": row[0]}
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
        connection.commit()
        assert connection.execute("SELECT k FROM kv").fetchall() == [{"only": "a"}]

    disk, _ = run_program(program)
    assert points(disk) == ["sqlite:commit#1", "sqlite:commit#2"]


def test_sqlites_now_is_the_cases_wall_time() -> None:
    # SQLiteSession (the OpenAI Agents SDK's) stamps each row DEFAULT CURRENT_TIMESTAMP:
    # it was the machine's date, in the database image crash states are keyed by.
    from fakes import VirtualClock
    from harness.intercept import virtual_time

    clock = VirtualClock()
    clock.advance(42)

    def stamped() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("CREATE TABLE kv (k TEXT, at TEXT DEFAULT CURRENT_TIMESTAMP)")
        with connection:
            connection.execute("INSERT INTO kv (k) VALUES ('a')")
        connection.close()

    with virtual_time(clock):
        disk, databases = run_program(stamped)
        rows = rows_after_restart(disk, databases, "SELECT k, at, datetime('now') FROM kv")
    assert rows == [("a", "2025-01-01 00:00:42", "2025-01-01 00:00:42")]
    # Outside a case, SQLite's 'now' is the machine's again.
    (year,) = sqlite3.connect(":memory:").execute("SELECT strftime('%Y', 'now')").fetchone()
    assert year == time.strftime("%Y", time.gmtime())


def test_a_frame_kept_by_a_profiler_keeps_no_statement_of_the_agent_in_progress() -> None:
    # A sampling profiler (``sys._current_frames()`` from a thread) holds the frames it
    # sampled for a moment, and a frame that returns while held keeps its locals. The
    # harness's own frames between the agent and sqlite3 must not keep the agent's
    # cursor: a ``PRAGMA journal_mode=WAL`` whose row nobody reads (the OpenAI Agents
    # SDK's ``SQLiteSession``) would stay in progress, and the next commit fail. Here
    # every frame is kept, deterministically.
    kept: list[FrameType] = []

    def keep(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            kept.append(frame)

    def program(connect: Callable[[str], sqlite3.Connection]) -> None:
        connection = connect("state.db")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.executemany("INSERT INTO kv VALUES (?, ?)", [("a", 1)])
        connection.executescript("INSERT INTO kv VALUES ('b', 2);")
        connection.execute("INSERT INTO kv VALUES ('c', 3)")
        connection.commit()
        connection.close()

    def profiled(connect: Callable[[str], sqlite3.Connection]) -> None:
        sys.setprofile(keep)
        try:
            program(connect)
        finally:
            sys.setprofile(None)

    # Plain sqlite3 lives with it: there is no frame between the agent and the C calls.
    with tempfile.TemporaryDirectory() as folder:
        profiled(lambda name: sqlite3.connect(os.path.join(folder, name)))
    disk, databases = run_program(lambda: profiled(sqlite3.connect))
    assert kept
    assert rows_after_restart(disk, databases) == [("a", 1), ("b", 2), ("c", 3)]


# -- crashes at a commit, as SQLite promises ------------------------------------


@pytest.mark.parametrize("crash_class", ["process_killed", "unsynced_lost", "torn_append_garbage",
                                         "missing_dir_fsync"])
def test_a_transaction_is_lost_before_its_commit_and_kept_after_it(crash_class: CrashClass
                                                                   ) -> None:
    before = run_program(two_commits, CrashPlan("sqlite:commit#3", "before", crash_class))
    after = run_program(two_commits, CrashPlan("sqlite:commit#3", "after", crash_class))
    assert rows_after_restart(*before) == [("a", 1)]
    assert rows_after_restart(*after) == [("a", 1), ("b", 2)]


def wal_normal_commits() -> None:
    connection = sqlite3.connect("state.db")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
    connection.execute("INSERT INTO kv VALUES ('a', 1)")
    connection.commit()
    connection.close()  # the last connection closes: a checkpoint syncs the file


def test_wal_with_normal_sync_may_roll_back_a_commit_after_power_loss() -> None:
    lost = run_program(wal_normal_commits, CrashPlan("sqlite:commit#2", "after", "unsynced_lost"))
    kept = run_program(wal_normal_commits,
                       CrashPlan("sqlite:commit#2", "after", "process_killed"))
    assert rows_after_restart(*lost) == []
    assert rows_after_restart(*kept) == [("a", 1)]


def test_a_checkpoint_when_the_connection_closes_makes_wal_commits_durable() -> None:
    disk, databases = run_program(wal_normal_commits)
    assert points(disk)[-1] == "sqlite:fsync#1"
    synced = run_program(wal_normal_commits, CrashPlan("sqlite:fsync#1", "after", "unsynced_lost"))
    assert rows_after_restart(*synced) == [("a", 1)]
    assert rows_after_restart(disk, databases) == [("a", 1)]


def test_synchronous_off_loses_commits_on_power_loss_but_not_on_a_kill() -> None:
    def program() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("PRAGMA synchronous = OFF")
        two_commits()  # another connection: its own, default, FULL setting
        connection.execute("INSERT INTO kv VALUES ('z', 26)")
        connection.commit()

    plan = "sqlite:commit#4"
    lost = run_program(program, CrashPlan(plan, "after", "unsynced_lost"))
    kept = run_program(program, CrashPlan(plan, "after", "process_killed"))
    assert rows_after_restart(*lost) == [("a", 1), ("b", 2)]
    assert rows_after_restart(*kept) == [("a", 1), ("b", 2), ("z", 26)]


def test_wal_mode_sticks_to_the_database_across_a_restart() -> None:
    def first() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.commit()

    def second() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("PRAGMA synchronous=NORMAL")  # WAL from the file, NORMAL now
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
        connection.commit()

    disk, databases = run_program(first)
    with incarnation(disk, databases, 2):
        second()
    assert disk.durable_view("unsynced_lost") != disk.durable_view("process_killed")


def test_an_io_error_before_the_commit_rolls_the_transaction_back() -> None:
    seen: list[object] = []

    def program() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
        try:
            connection.commit()
        except sqlite3.OperationalError as error:
            seen.append(str(error))
        seen.append(connection.execute("SELECT k FROM kv").fetchall())

    run_program(program, CrashPlan("sqlite:commit#2", "before", "eio_on_fsync"))
    assert seen == ["disk I/O error", []]


def test_a_full_disk_after_the_commit_still_reports_it_and_keeps_the_data() -> None:
    seen: list[object] = []

    def program() -> None:
        connection = sqlite3.connect("state.db")
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.execute("INSERT INTO kv VALUES ('a', 1)")
        try:
            connection.commit()
        except sqlite3.OperationalError as error:
            seen.append(str(error))

    disk, databases = run_program(program, CrashPlan("sqlite:commit#2", "after",
                                                     "enospc_on_write"))
    assert seen == ["database or disk is full"]
    assert rows_after_restart(disk, databases) == [("a", 1)]


def test_a_late_commit_of_a_dead_incarnation_is_refused() -> None:
    kept: list[sqlite3.Connection] = []

    def program() -> None:
        two_commits()
        kept.append(sqlite3.connect("state.db"))
        raise SimulatedCrash("test", "process_killed", 1)

    disk = CrashDisk()
    databases = WorldDatabases(disk)
    with pytest.raises(SimulatedCrash), incarnation(disk, databases, 1):
        program()
    disk.incarnations.crash()
    disk.restart()
    kept[0].execute("INSERT INTO kv VALUES ('late', 0)")
    with pytest.raises(SimulatedCrash, match=r"refused commit /agent/state\.db"):
        kept[0].commit()


# -- paths the world cannot hold ------------------------------------------------


def test_a_database_in_a_folder_the_world_lacks_is_refused_and_named() -> None:
    errors: list[str] = []

    def program() -> None:
        try:
            sqlite3.connect("/var/lib/app/state.db")
        except sqlite3.OperationalError as error:
            errors.append(str(error))

    _, databases = run_program(program)
    assert errors == ["unable to open database file"]
    assert databases.refused == ["/var/lib/app/state.db"]


def test_paths_and_uris_name_the_same_database() -> None:
    def program() -> None:
        os.makedirs("data")
        sqlite3.connect(Path("data") / "state.db").execute("CREATE TABLE kv (k, v)")
        uri = sqlite3.connect("file:data/state.db?mode=rw", uri=True)
        uri.execute("INSERT INTO kv VALUES ('a', 1)")
        uri.commit()
        read_only = sqlite3.connect("file:data/state.db?mode=ro", uri=True)
        assert read_only.execute("SELECT k FROM kv").fetchall() == [("a",)]

    disk, _ = run_program(program)
    assert {p.path for p in disk.points if p.role == "sqlite"} == {"/agent/data/state.db"}


# -- an unchanged agent whose conversation lives in SQLite, end to end -----------

# Keeps its conversation in SQLite, as framework sessions do, and records the
# assistant's tool calls only once their results are in: a crash after the send
# loses the call, and the restart sends the mail again.
SQLITE_AGENT = '''
import json
import sqlite3

from openai import AsyncOpenAI

from {package}.tools import send_mail

STRING = {{"type": "string"}}
TOOLS = [{{"type": "function", "function": {{"name": "mail", "parameters": {{
    "type": "object", "properties": {{"to": STRING, "body": STRING}}}}}}}}]


def remember(db, *messages):
    with db:
        db.executemany("INSERT INTO messages (body) VALUES (?)",
                       [(json.dumps(m),) for m in messages])


async def main(prompt: str) -> str:
    db = sqlite3.connect("conversations.db")
    db.execute("CREATE TABLE IF NOT EXISTS messages "
               "(id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT)")
    if not db.execute("SELECT 1 FROM messages").fetchall():
        remember(db, {{"role": "user", "content": prompt}})
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    while True:
        messages = [json.loads(b) for (b,) in db.execute("SELECT body FROM messages ORDER BY id")]
        reply = (await client.chat.completions.create(
            model="gpt-test", messages=messages, tools=TOOLS)).choices[0].message
        if not reply.tool_calls:
            remember(db, {{"role": "assistant", "content": reply.content}})
            return reply.content
        results = [{{"role": "tool", "tool_call_id": call.id,
                    "content": json.dumps(send_mail(**json.loads(call.function.arguments)))}}
                   for call in reply.tool_calls]
        remember(db, reply.model_dump(exclude_none=True), *results)
'''


@pytest.fixture
def sqlite_agent(agent_packages: Any) -> str:
    from .conftest import TOOLS

    return str(agent_packages.write({"tools": TOOLS, "agent": SQLITE_AGENT}))


def mail_scenario(package: str, points: object = "none", **changes: Any) -> Any:
    from .test_plain_agent import mail_scenario as plain_mail_scenario

    crash = {"points": points, "classes": ["process_killed", "unsynced_lost"]}
    return plain_mail_scenario(package, **{"name": "mail-sqlite", "crash": crash, **changes})


def run_agent(package: str, scenario: Any, crash: Any = None) -> Any:
    from harness.intercept import PlainEntry
    from harness.runner import Case, run_case

    entry = f"{package}.agent:main"
    case = Case(scenario.name, Path("mail-sqlite.yaml"), scenario.seed, crash, agent=entry)
    return run_case(case, scenario, PlainEntry(entry))


def test_an_agent_on_sqlite_passes_and_leaves_the_real_folder_untouched(
        sqlite_agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    first = run_agent(sqlite_agent, mail_scenario(sqlite_agent))
    second = run_agent(sqlite_agent, mail_scenario(sqlite_agent))
    assert first.status == second.status == "pass", first.failed_verdicts
    # The second case started from an empty world, not from the first one's database.
    assert first.trace.digest == second.trace.digest
    assert os.listdir(folder) == []


def test_the_commits_of_an_agents_database_are_crash_points(sqlite_agent: str) -> None:
    from harness.intercept import PlainEntry
    from harness.runner import plan_cases

    scenario = mail_scenario(sqlite_agent, points="all")
    cases = plan_cases(scenario, "mail-sqlite.yaml", PlainEntry(f"{sqlite_agent}.agent:main"))
    crashed = sorted({c.crash.point_id for c in cases if c.crash is not None})
    # The table, the prompt, the call with its result, the answer.
    assert crashed == [f"sqlite:commit#{n}" for n in range(1, 5)]


def test_a_crash_after_the_send_is_caught_as_a_second_mail(sqlite_agent: str) -> None:
    from harness.runner import CrashSpec

    result = run_agent(sqlite_agent, mail_scenario(sqlite_agent),
                       CrashSpec("after_tool:mail#1", "at", "process_killed"))
    assert result.side_effects == {"mail": 2}
    assert {v.invariant for v in result.failed_verdicts} >= {"I1"}


def test_a_crash_after_the_commit_of_the_results_sends_once(sqlite_agent: str) -> None:
    from harness.runner import CrashSpec

    result = run_agent(sqlite_agent, mail_scenario(sqlite_agent),
                       CrashSpec("sqlite:commit#3", "after", "unsynced_lost"))
    assert result.side_effects == {"mail": 1}
    assert result.status == "pass", result.failed_verdicts


REFUSED_AGENT = '''
import sqlite3


def main(prompt: str) -> str:
    sqlite3.connect("/srv/app/state.db").execute("CREATE TABLE t (x)")
    return "done"
'''


def test_a_database_the_world_cannot_hold_is_named_in_the_report(agent_packages: Any) -> None:
    from harness._report_text import render_failure

    package = agent_packages.write({"agent": REFUSED_AGENT})
    scenario = mail_scenario(package, tools={}, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    result = run_agent(package, scenario)
    assert result.trace.extra.databases_refused == ("/srv/app/state.db",)
    assert "  /srv/app/state.db" in render_failure(result)


# -- what is built on sqlite3 --------------------------------------------------------


@pytest.mark.parametrize("round_", range(40))
def test_aiosqlite_reaches_the_world_on_virtual_time(round_: int) -> None:
    # Forty rounds: a reply the worker thread hands over just as it goes quiet was
    # missed about once in ten runs (a false deadlock), and must never be. aiosqlite
    # runs in turn, as in every plain agent's case (_plain.py): without it the loop
    # could only guess from the thread's state, which a loaded machine fools (a
    # thread waiting for the GIL looks asleep), and this test failed in about one run
    # of twenty of tests/runner with it at load 3-8.
    import aiosqlite

    from fakes import VirtualClock
    from harness.intercept import virtual_time
    from harness.intercept._aiosqlite import aiosqlite_in_turn
    from harness.intercept._time import virtual_event_loops

    async def program() -> None:
        # Every statement runs on aiosqlite's own thread and answers the loop through
        # call_soon_threadsafe: the clock must wait for it, neither jump nor deadlock.
        async with aiosqlite.connect("state.db") as db:
            await db.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
            await db.execute("INSERT INTO kv VALUES ('a', 1)")
            await db.commit()
        await asyncio.sleep(5)

    clock = VirtualClock()
    disk = CrashDisk()
    databases = WorldDatabases(disk)
    with virtual_time(clock), virtual_event_loops(clock), aiosqlite_in_turn(), \
            incarnation(disk, databases, 1):
        asyncio.run(program())
    assert clock.now() == 5.0
    assert points(disk) == ["sqlite:commit#1", "sqlite:commit#2"]
    disk.restart()
    assert rows_after_restart(disk, databases) == [("a", 1)]


def test_virtual_time_waits_for_aiosqlite_however_long_its_thread_takes() -> None:
    # aiosqlite's thread blocks in real time (a busy machine, a slow disk) while a timer
    # of the case is due in 10 virtual seconds. The thread is asleep, so watching its
    # state took it for settled and the clock jumped to the timer before the commit's
    # answer came: on a loaded machine two runs of one case differed.
    import threading

    import aiosqlite

    from fakes import VirtualClock
    from harness.intercept import virtual_time
    from harness.intercept._aiosqlite import aiosqlite_in_turn
    from harness.intercept._time import virtual_event_loops

    order: list[tuple[str, float]] = []

    def slow() -> None:
        threading.Event().wait(0.05)  # real time, asleep: what a loaded machine looks like

    async def program() -> None:
        async def timer() -> None:
            await asyncio.sleep(10)
            order.append(("timer", clock.now()))

        waiting = asyncio.create_task(timer())
        async with aiosqlite.connect("state.db") as db:
            await db._execute(slow)
            order.append(("statement", clock.now()))
        await waiting

    clock = VirtualClock()
    disk = CrashDisk()
    databases = WorldDatabases(disk)
    with virtual_time(clock), virtual_event_loops(clock), aiosqlite_in_turn(), \
            incarnation(disk, databases, 1):
        asyncio.run(program())
    assert order == [("statement", 0.0), ("timer", 10.0)]


def test_sqlalchemy_reaches_the_world() -> None:
    from sqlalchemy import create_engine, text

    def program() -> None:
        engine = create_engine("sqlite:///state.db")
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)"))
            connection.execute(text("INSERT INTO kv VALUES ('a', 1)"))
        engine.dispose()

    disk, databases = run_program(program)
    assert {p.path for p in disk.points} == {"/agent/state.db"}
    assert rows_after_restart(disk, databases) == [("a", 1)]


def test_a_crash_waits_for_a_commit_a_thread_of_the_agent_has_under_way() -> None:
    import threading

    from fakes import VirtualClock
    from harness.intercept import virtual_time

    def checkpoint_in_the_background() -> None:
        sum(range(3_000_000))  # a framework's work before its checkpoint lands
        connection = sqlite3.connect("state.db")
        connection.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)")
        connection.execute("INSERT INTO kv VALUES ('saved', 1)")
        connection.commit()

    disk = CrashDisk()
    databases = WorldDatabases(disk)
    with virtual_time(VirtualClock()), incarnation(disk, databases, 1):
        # LangGraph's default durability: the checkpoint is saved on a thread of its
        # own while the next step runs; the process dies meanwhile.
        saver = threading.Thread(target=checkpoint_in_the_background)
        saver.start()
        crash = disk.crash_at_event("after_tool:mail#1", "process_killed")
        saver.join()
    assert crash.point_id == "after_tool:mail#1"
    disk.restart()
    assert rows_after_restart(disk, databases) == [("saved", 1)]
