"""The contained process that imports and plans an agent has a case's limits.

Before the first case ``run`` and ``validate`` import the agent and run it once to find
its crash points; ``points`` and ``fuzz`` run it. That process (:mod:`harness.runner._guest`)
ends everything the agent started, a child that left its session (``setsid``) too; keeps
the agent's prints out of the command's own output; stops the agent past a case's output
or memory cap; and every error it gives names the ``--agent`` spec. What an agent started
before its process (that one, or a case's worker) died is ended by the harness.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from harness._cli import main

HELLO = """\
name: hello
dialect: openai
crash:
  points: all
  classes: [unsynced_lost]
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""
COMMANDS = {
    "run": ["run", "hello.yaml", "--out", "results"],
    "validate": ["validate", "hello.yaml"],
    "points": ["points", "hello.yaml"],
    "fuzz": ["fuzz", "hello.yaml", "--budget", "2", "--out", "fuzz"],
}
# Native code starts what the harness refuses in Python: a child that leaves the session.
# Its pid goes to shared memory, the one place a sealed case worker still writes.
LEAVES_A_CHILD = """\
import ctypes


def _leave_a_child():
    ctypes.CDLL(None).system(
        ("setsid sh -c 'sleep 1000 & echo $! >> {pidfile}' >/dev/null 2>&1").encode())


_leave_a_child()


def main(prompt):
    _leave_a_child()
    return "Hello."
"""
NOISY = """\
print("NOISE AT IMPORT")


def main(prompt):
    print("NOISE IN THE RUN")
    return "Hello."
"""
CHATTERS = """\
import os

for _ in range(80):
    os.write(1, b"x" * (1 << 20))


def main(prompt):
    return "Hello."
"""
HOGS = """\
import time

_kept = []
for _ in range(64):  # up to 4 GiB, touched; stopped long before
    _kept.append(b"x" * (64 << 20))
    time.sleep(0.05)


def main(prompt):
    return "Hello."
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the current folder and on the path, with the scenario."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hello.yaml").write_text(HELLO)
    return tmp_path


def _harness(folder: Path, command: str, module: str, source: str, *options: str) -> int:
    (folder / f"{module}.py").write_text(source)
    try:
        return main([*COMMANDS[command], *options, "--agent", f"{module}:main"])
    except SystemExit as stop:  # what the agent's sys.exit would do in the harness's process
        return int(stop.code or 0)


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.system
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_child_that_left_the_session_while_planning_ends_with_the_command(
        folder: Path, command: str) -> None:
    pidfile = Path("/dev/shm") / f"harness-test-{os.getpid()}-{folder.name}-{command}.pid"
    try:
        _harness(folder, command, f"leaves_a_child_{command}",
                 LEAVES_A_CHILD.format(pidfile=pidfile))
        children = [int(pid) for pid in pidfile.read_text().split()]
    finally:
        pidfile.unlink(missing_ok=True)
    assert children  # the agent did start them
    deadline = time.monotonic() + 10  # SIGKILL is sent; the kernel may take a moment
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in children if _alive(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert not left


def test_the_agents_prints_while_planning_stay_out_of_the_commands_output(
        folder: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code = _harness(folder, "points", "noisy", NOISY)

    out, err = capfd.readouterr()
    assert code == 0, err
    assert "NOISE" not in out + err


@pytest.mark.parametrize("command", ["points", "validate"])
def test_output_past_the_cap_while_planning_is_exit_2_naming_the_cap(
        folder: Path, command: str, capfd: pytest.CaptureFixture[str]) -> None:
    code = _harness(folder, command, f"chatters_{command}", CHATTERS)

    out, err = capfd.readouterr()
    assert code == 2, err[-500:]
    assert len(out) < 1000
    assert err.startswith("harness: error: the agent wrote more than the output cap of 64 MiB "
                          "to its stdout and stderr while being imported (")
    assert err.count("\n") == 1


@pytest.mark.system
def test_memory_past_the_cap_while_planning_is_exit_2_naming_the_cap(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _harness(folder, "run", "hogs", HOGS, "--case-memory", "1024")

    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("harness: error: the agent exceeded the memory cap of 1024 MiB "
                          "while being imported (its process held ")
    assert err.rstrip().endswith("(--agent hogs:main)")


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("source", "said"), [
    ("import sys\nsys.exit(0)\n", "it called sys.exit(0)"),
    ("import os\nos._exit(3)\n", "its process exited with code 3"),
])
def test_an_error_while_planning_names_the_agent(
        folder: Path, command: str, source: str, said: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    module = f"named_{command}_{'exit' if 'sys' in source else 'abort'}"
    code = _harness(folder, command, module, source + "\ndef main(prompt):\n    return 'Hi.'\n")

    err = capsys.readouterr().err
    assert code == 2, err
    assert err == (f"harness: error: the agent exited while being imported: {said} "
                   f"(--agent {module}:main)\n")


# The agent leaves a child, then its process dies: the child is an orphan the dead process
# can no longer end. A factory agent that misbehaves only in the case with seed 1 dies in a
# case's worker; the plain one dies in the process that plans it.
DIES_LEAVING_A_CHILD = """\
import ctypes
import os

from harness.agent import ReferenceAgent


def _leave_a_child_and_die():
    # -w: the shell has written the pid and gone, the sleep is an orphan, before the exit.
    ctypes.CDLL(None).system(
        ("setsid -w sh -c 'sleep 1000 & echo $! >> {pidfile}' >/dev/null 2>&1").encode())
    os._exit(3)


def main(prompt):
    _leave_a_child_and_die()


class _Agent(ReferenceAgent):
    async def run(self, task):
        if self._bad:
            _leave_a_child_and_die()
        return await super().run(task)


def factory(ports):
    agent = _Agent(ports)
    agent._bad = ports.seed == 1
    return agent
"""


@pytest.mark.system
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
@pytest.mark.parametrize(("command", "entry"), [
    (["points", "hello.yaml"], "main"),
    (["run", "hello.yaml", "--out", "results", "--no-crash", "--seed", "1"], "factory"),
])
def test_a_child_left_by_an_agent_whose_process_died_ends_with_the_command(
        folder: Path, command: list[str], entry: str) -> None:
    module = f"dies_leaving_a_child_{command[0]}"
    pidfile = Path("/dev/shm") / f"harness-test-{os.getpid()}-{folder.name}-{module}.pid"
    (folder / f"{module}.py").write_text(DIES_LEAVING_A_CHILD.format(pidfile=pidfile))
    try:
        code = main([*command, "--agent", f"{module}:{entry}"])
        children = [int(pid) for pid in pidfile.read_text().split()]
    finally:
        pidfile.unlink(missing_ok=True)
    assert code == (2 if command[0] == "points" else 1)  # a one-line error; a failed case
    assert children
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in children if _alive(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert not left
