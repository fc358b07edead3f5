"""Inside ``harness run``'s workers: no process of the agent's, nothing it leaves behind,
and caps on its memory and output, each a ``harness_limit`` verdict naming it.

The agents misbehave on the scenario with seed 1 and are the reference agent elsewhere,
so each test also shows that the run goes on with the next case.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from harness._cli import main

AGENTS = """\
import ctypes, os, pty, time
from harness.agent import ReferenceAgent

PIDFILE = {pidfile!r}
ESCAPE = {escape!r}


def _when_bad(act):
    class Agent(ReferenceAgent):
        async def run(self, task):
            if self._bad:
                act()
            return await super().run(task)

    def factory(ports):
        agent = Agent(ports)
        agent._bad = ports.seed == 1
        return agent
    return factory


def _hog():
    kept = []
    for _ in range(64):  # up to 4 GiB, touched; stopped long before
        kept.append(b"x" * (64 << 20))
        time.sleep(0.05)


def _chatter():
    for _ in range(80):
        os.write(1, b"x" * (1 << 20))


def _leave_a_child():
    # Native code starts what Python would refuse: a child that leaves the session.
    ctypes.CDLL(None).system(
        ("setsid sh -c 'sleep 300 & echo $! > " + PIDFILE + "' >/dev/null 2>&1").encode())


def _write_in_c():
    # libc's open and write, as a C extension would: no Python file call to intercept.
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(ESCAPE.encode(), os.O_WRONLY | os.O_CREAT, 0o644)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), ESCAPE)
    libc.write(fd, b"escaped", 7)
    libc.close(fd)


def _remount_and_write_in_c():
    # Undo the seal first, as a hostile C extension would: every mount made writable again
    # (the worker is "root" in its own user namespace); then from a new namespace too.
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(b"/proc/self/mountinfo", 0)
    table = ctypes.create_string_buffer(1 << 20)
    size = libc.read(fd, table, len(table))
    points = [line.split()[4] for line in table.raw[:max(size, 0)].decode().splitlines()]
    for unshare in (False, True):
        if unshare:
            libc.unshare(0x00020000 | 0x10000000)  # CLONE_NEWNS | CLONE_NEWUSER
        for point in points:
            for flags in (32 | 4096, 32):  # MS_REMOUNT | MS_BIND, MS_REMOUNT
                libc.mount(None, point.encode(), None, flags, None)
        try:
            _write_in_c()
            return
        except OSError:
            if unshare:
                raise


forks = _when_bad(lambda: os.fork())
execs = _when_bad(lambda: os.execv("/bin/true", ["true"]))
ptys = _when_bad(lambda: pty.fork())
hogs = _when_bad(_hog)
chatters = _when_bad(_chatter)
leaves_a_child = _when_bad(_leave_a_child)
writes_in_c = _when_bad(_write_in_c)
remounts_and_writes_in_c = _when_bad(_remount_and_write_in_c)
"""
SCENARIO = """\
name: {name}
dialect: openai
seed: {seed}
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Each test's module names its own pid file: no copy imported by another test.
    monkeypatch.delitem(sys.modules, "guest_agents", raising=False)
    (tmp_path / "guest_agents.py").write_text(
        AGENTS.format(pidfile=str(_pidfile(tmp_path)), escape=str(tmp_path / "escaped.txt")),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = tmp_path / "suite"
    folder.mkdir()
    for name, seed in (("a-bad", 1), ("b-good", 2)):
        (folder / f"{name}.yaml").write_text(SCENARIO.format(name=name, seed=seed), "utf-8")
    return folder


def _pidfile(tmp_path: Path) -> Path:
    # Shared memory: the one place a sealed worker (harness/runner/_seal.py) still writes.
    return Path("/dev/shm") / f"harness-test-{os.getpid()}-{tmp_path.name}.pid"


def run(suite: Path, agent: str, *options: str) -> list[dict[str, object]]:
    out = suite.parent / "results"
    code = main(["run", str(suite), "--agent", f"guest_agents:{agent}", "--no-crash",
                 "--out", str(out), *options])
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert code == (1 if any(not r["passed"] for r in rows) else 0)
    assert [(r["scenario"], r["error"]) for r in rows] == [("a-bad", None), ("b-good", None)]
    assert rows[1]["passed"]
    return rows


@pytest.mark.parametrize(("agent", "call"), [
    ("forks", "os.fork()"), ("execs", "os.execv('/bin/true', ['true'])"),
    ("ptys", "os.forkpty()"),
])
def test_a_process_started_in_a_worker_is_refused_naming_the_call(
        suite: Path, agent: str, call: str) -> None:
    rows = run(suite, agent)
    assert rows[0]["failed_invariants"] == ["harness_limit"]
    assert rows[0]["verdicts"][0]["message"] == (  # type: ignore[index]
        f"the agent started a process ({call} by guest_agents): a process outside the world "
        "cannot be crashed, timed or seen (it would reach the real disk and network, on the "
        "real clock)")


def test_output_past_the_cap_stops_the_case_with_a_verdict_naming_it(suite: Path) -> None:
    rows = run(suite, "chatters")
    assert rows[0]["failed_invariants"] == ["harness_limit"]
    message = str(rows[0]["verdicts"][0]["message"])  # type: ignore[index]
    assert message.startswith("the agent wrote more than the output cap of 64 MiB to its "
                              "stdout and stderr (")


@pytest.mark.system
def test_memory_past_the_cap_stops_the_case_with_a_verdict_naming_it(suite: Path) -> None:
    rows = run(suite, "hogs", "--case-memory", "1024")
    assert rows[0]["failed_invariants"] == ["harness_limit"]
    message = str(rows[0]["verdicts"][0]["message"])  # type: ignore[index]
    assert message.startswith("the agent exceeded the memory cap of 1024 MiB (its worker "
                              "held ")


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.system
def test_a_child_that_left_the_session_ends_with_its_case(suite: Path, tmp_path: Path) -> None:
    rows = run(suite, "leaves_a_child")
    assert rows[0]["passed"]  # native code is not seen; what it left is ended all the same
    pidfile = _pidfile(tmp_path)
    child = int(pidfile.read_text())
    pidfile.unlink()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(child)
    if alive:
        os.kill(child, 9)
    assert not alive


@pytest.mark.parametrize("agent", ["writes_in_c", "remounts_and_writes_in_c"])
def test_c_code_cannot_write_the_real_disk(suite: Path, tmp_path: Path, agent: str) -> None:
    """The worker is sealed by the kernel: every real mount read-only for it, and no power
    left to mount them again."""
    if os.environ.get("HARNESS_REQUIRE_SEAL") != "1":
        from harness.runner._seal import seal_worker

        pid = os.fork()
        if pid == 0:  # try it where it cannot hurt: a child that exits at once
            os._exit(0 if seal_worker() is None else 1)
        if os.waitpid(pid, 0)[1] != 0:
            pytest.skip("this kernel refuses the namespaces a sealed worker needs "
                        "(.ci/run sets HARNESS_REQUIRE_SEAL=1)")
    out = tmp_path / "results"
    assert main(["run", str(suite), "--agent", f"guest_agents:{agent}", "--no-crash",
                 "--out", str(out)]) == 1
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert not (tmp_path / "escaped.txt").exists()
    assert not rows[0]["passed"]
    assert "Read-only file system" in str(rows[0]["error"])
    assert rows[1]["passed"]  # the next case runs in a sealed worker too, undisturbed


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
def test_a_case_memory_must_be_a_whole_number_of_mib(suite: Path, value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(suite), "--case-memory", value])
    assert exit_.value.code == 2
    assert (f"argument --case-memory: got {value!r}; expected a whole number >= 1"
            in capsys.readouterr().err)
