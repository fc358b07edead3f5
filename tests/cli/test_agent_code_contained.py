"""Agent code runs only in a contained process, outside cases too.

``run`` and ``validate`` import the agent to check its entry point and run it once to
plan its crash points; ``points`` and ``fuzz`` run it. An agent that exits or hangs
there is a one-line error with exit 2: never exit 0 (a green CI), never a hang, never
the agent's own exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import _cli, _options
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
AT_IMPORT = {
    "exits_0": "import sys\nsys.exit(0)\n",
    "aborts_3": "import os\nos._exit(3)\n",
    "spins": "while True:\n    pass\n",
}
IN_RUN = {
    "aborts_3": "import os\n\ndef main(prompt):\n    os._exit(3)\n",
    "spins": "def main(prompt):\n    while True:\n        pass\n",
}
PLAIN = "\ndef main(prompt):\n    return 'Hello.'\n"
COMMANDS = {
    "run": ["run", "hello.yaml", "--out", "results"],
    "validate": ["validate", "hello.yaml"],
    "points": ["points", "hello.yaml"],
    "fuzz": ["fuzz", "hello.yaml", "--budget", "2", "--out", "fuzz"],
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the current folder and on the path, with the scenario."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hello.yaml").write_text(HELLO)
    return tmp_path


def _one_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """One real second for each contained step, the case limit of every command."""
    monkeypatch.setattr(_cli, "DEFAULT_CASE_TIMEOUT", 1.0)
    monkeypatch.setattr(_options, "DEFAULT_CASE_TIMEOUT", 1.0)


def _harness(folder: Path, command: str, module: str, source: str, *, fast: bool = False
             ) -> tuple[int, str]:
    (folder / f"{module}.py").write_text(source)
    limit = ["--case-timeout", "1"] if fast and command == "run" else []
    try:
        code = main([*COMMANDS[command], *limit, "--agent", f"{module}:main"])
    except SystemExit as stop:  # what the agent's sys.exit would do in the harness's process
        code = int(stop.code or 0)
    return code, ""


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("behaviour", ["exits_0", "aborts_3"])
def test_an_agent_that_exits_at_import_is_exit_2_with_one_line(
        folder: Path, command: str, behaviour: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = f"exits_at_import_{command}_{behaviour}"

    code, _ = _harness(folder, command, module, AT_IMPORT[behaviour] + PLAIN)

    err = capsys.readouterr().err
    assert code == 2, err
    assert "harness: error: the agent exited while being imported: " in err
    assert "Traceback" not in err
    assert module not in sys.modules  # never imported in the harness's own process


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_agent_that_loops_at_import_is_stopped(
        folder: Path, command: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _one_second(monkeypatch)
    code, _ = _harness(folder, command, f"loops_at_import_{command}",
                       AT_IMPORT["spins"] + PLAIN, fast=True)

    err = capsys.readouterr().err
    assert code == 2, err
    assert "harness: error: importing the agent took longer than 1 s of real time" in err


@pytest.mark.parametrize("command", ["points", "fuzz"])
@pytest.mark.parametrize("behaviour", ["aborts_3", "spins"])
def test_an_agent_that_exits_or_hangs_in_its_run_is_exit_2(
        folder: Path, command: str, behaviour: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    if behaviour == "spins":
        _one_second(monkeypatch)
    code, _ = _harness(folder, command, f"bad_run_{command}_{behaviour}", IN_RUN[behaviour],
                       fast=behaviour == "spins")

    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("harness: error: ")
    assert ("exited with code 3" if behaviour == "aborts_3" else "took longer than 1 s") in err


def test_a_run_never_imports_the_agent_in_its_own_process(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _harness(folder, "run", "imported_only_contained", PLAIN)

    # The agent never asks the model, so its case fails; it ran, and only in workers.
    assert code != 2, capsys.readouterr().err
    assert "imported_only_contained" not in sys.modules
    assert (folder / "results" / "manifest.json").is_file()


# Native code at import: libc's open and write, past any interception of Python's files.
WRITES_AT_IMPORT = """\
import ctypes, os

_libc = ctypes.CDLL(None)
_fd = _libc.open(os.path.abspath("escaped-%d.txt" % os.getpid()).encode(),
                 os.O_WRONLY | os.O_CREAT, 0o644)
if _fd >= 0:
    _libc.write(_fd, b"escaped", 7)
    _libc.close(_fd)


def main(prompt):
    return "Hello."
"""


@pytest.mark.parametrize("command", ["run", "validate", "points", "fuzz"])
def test_native_code_at_import_or_while_planning_cannot_write_the_real_disk(
        folder: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The processes that import and plan the agent are sealed as a case's workers are;
    # fuzz's hands back its repro and example database for the harness to write.
    code, _ = _harness(folder, command, "writes_at_import", WRITES_AT_IMPORT)

    # run: it never asks the model (I4); validate: it keeps no file, so 'points: all'
    # makes no crash case (run's unknown); fuzz: no schedule violates what it judges.
    assert code == (1 if command in ("run", "validate") else 0), capsys.readouterr().err
    assert sorted(path.name for path in folder.glob("escaped-*")) == []
