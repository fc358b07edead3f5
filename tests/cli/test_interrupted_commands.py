"""Ctrl-C stops ``harness points`` and ``harness fuzz`` with exit 130 and one line, never a
traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# System tier (pytest --system): a real harness process and a real signal.
pytestmark = pytest.mark.system

# The agent, once built, sends SIGINT to the harness (itself when it runs in the harness's
# process, else its parent) and waits to be stopped.
AGENT = """\
import os
import signal

def agent(ports):
    harness = os.getpid() if os.getppid() == {test_process} else os.getppid()
    os.kill(harness, signal.SIGINT)
    os.read(os.pipe()[0], 1)  # blocks until the harness stops this process
"""
HELLO = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""


@pytest.mark.parametrize("command", [["points"], ["fuzz", "--budget", "3"]])
def test_ctrl_c_stops_the_command_with_exit_130(command: list[str], tmp_path: Path) -> None:
    (tmp_path / "interrupting_agent.py").write_text(AGENT.format(test_process=os.getpid()))
    (tmp_path / "hello.yaml").write_text(HELLO)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}

    done = subprocess.run([sys.executable, "-m", "harness", command[0], "hello.yaml",
                           *command[1:], "--agent", "interrupting_agent:agent"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                          check=False)

    assert done.returncode == 128 + signal.SIGINT, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"harness {command[0]}: interrupted by SIGINT; stopped")
