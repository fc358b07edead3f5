"""Ctrl-C and SIGTERM stop ``harness run`` cleanly: finished cases kept, workers killed, a
resume command printed, and the resumed run's files those of an uninterrupted run."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness._cli import main

# System tier (pytest --system): a real harness process, its workers and a real signal.
pytestmark = pytest.mark.system

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
# The signal comes from the agent of the third case, so that exactly two cases have
# finished when it arrives, whatever the machine's speed: the harness hands a worker
# the next case only once the last one is recorded. Then the case hangs, to be killed
# with its worker. Only once (a marker file), so that the resumed run finishes.
AGENT = """\
import ctypes
import os
from harness.agent import ReferenceAgent

# Through libc: a factory agent's Python file calls land on the crash disk, and the
# marker must outlive the stopped run.
MARKER = {marker!r}.encode()
_LIBC = ctypes.CDLL(None)


def _mark(pid):
    fd = _LIBC.open(MARKER, os.O_WRONLY | os.O_CREAT, 0o644)
    data = str(pid).encode()
    _LIBC.write(fd, data, len(data))
    _LIBC.close(fd)


def agent(ports):
    in_worker = os.getppid() != {test_process}
    if ports.seed == 3 and in_worker and _LIBC.access(MARKER, 0) != 0:
        _mark(os.getpid())
        os.kill(os.getppid(), {signum})
        os.read(os.pipe()[0], 1)  # blocks until the harness kills this worker
    return ReferenceAgent(ports)
"""


def _harness(words: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), *sys.path])}
    return subprocess.run([sys.executable, "-m", "harness", *words], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_cleanly_and_resume_finishes_it(
        tmp_path: Path, signum: signal.Signals, code: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Shared memory: the one place a sealed case worker still writes (harness/runner/_seal.py).
    marker = Path("/dev/shm") / f"harness-test-{os.getpid()}-{tmp_path.name}-signalled"
    (tmp_path / "stops.py").write_text(AGENT.format(
        marker=str(marker), test_process=os.getpid(), signum=int(signum)), encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, seed in (("a", 1), ("b", 2), ("c", 3)):
        (suite / f"{name}.yaml").write_text(SCENARIO.format(name=name, seed=seed), "utf-8")
    out, whole = tmp_path / "out", tmp_path / "whole"
    words = ["run", str(suite), "--agent", "stops:agent", "--out", str(out)]

    stopped = _harness(words, tmp_path)

    assert stopped.returncode == code, stopped.stderr
    assert "Traceback" not in stopped.stderr
    resume = f"harness run {suite} --agent stops:agent --out {out} --resume"
    assert stopped.stderr.splitlines()[-2:] == [
        f"harness run: interrupted by {signum.name} after 2 of 3 cases; every finished case "
        f"is kept in {out}/journal.jsonl",
        f"resume with: {resume}"]
    assert not _alive(int(marker.read_text()))  # the hanging case's worker was killed
    assert main(["gate", str(out), str(out)]) == 2
    assert capsys.readouterr().err == (f"harness: error: {out}: this run is incomplete: 2 of 3 "
                                       f"cases; resume it with: {resume}\n")

    assert _harness(["run", str(suite), "--agent", "stops:agent", "--out", str(whole)],
                    tmp_path).returncode == 0
    resumed = _harness(shlex.split(resume)[1:], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 to run" in resumed.stderr
    assert ({p.name: p.read_bytes() for p in out.iterdir()}
            == {p.name: p.read_bytes() for p in whole.iterdir()})
    marker.unlink()  # in shared memory, not in tmp_path: nothing else removes it
