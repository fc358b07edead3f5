"""Every bad command line of every command exits 2 with an error line, never a traceback.

Each command is walked with the kinds of mistake a hand or a script makes: an unknown
flag, a wrong type, a missing file, a folder for a file, an empty string, a huge or
negative number, a badly formed ``--agent``. A command that reads a list of files
(``validate``) reports a bad file with its documented exit 1 instead.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from harness._cli import _parser, main

HUGE = "9" * 40
S = "hello.yaml"

# Each command with the lines that are its own mistakes; the shared ones are added below.
OWN: dict[str, list[list[str]]] = {
    "run": [
        [S, "--seed", "x"], [S, "--seed", "-1"], [S, "--seed", HUGE], [S, "--jobs", "-3"],
        [S, "--jobs", "0"], [S, "--case-timeout", "nan"], [S, "--case-timeout", "inf"],
        [S, "--case-timeout", "-1"], [S, "--out", ""], [S, "--out", S],
        [S, "--agent", "~"], [S, "--agent", "a:b:c"], [S, "--agent", "mod:"],
        [S, "--agent", ":main"], [S, "--agent", ""], [S, "--agent", "no_such_module_x:main"],
        [S, "--agent", "os:path.no_such"], [S, "--target", "~"], [S, "--target", "~=a:b"],
        [S, "--target", "a=~"], [S, "--target", "="], [S, "--crash-at", ""],
        [S, "--crash-at", "a:b#1:before:nope"], [S, "--pass-env", ""], [S, "--pass-env", "1x"],
        [S, "--absorb", ""], [S, "--absorb", "~"], [S, "--dialect", "x"],
        [S, "--time-scale", "0"], [S, "--time-scale", "nan"], [S, "--exec", ""],
        [S, "--exec", "  "], [S, "--resume"], [S, "--crash-at", "x", "--no-crash"],
        [S, "--crash", ""], [S, "--crash", "everything"],
        [S, "--crash", "all-points", "--no-crash"],
        [S, "--shard", "0/3"], [S, "--shard", "4/3"], [S, "--shard", "1/0"], [S, "--shard", "x"],
        [S, "--case-memory", "-1"], [S, "--case-memory", "x"], [S, "--prices", "folder"],
        [S, "--prices", "missing.yaml"], [S, "--prices", ""],
    ],
    "merge": [
        ["out", "folder"], ["out", "missing"], ["", "folder"], ["out", ""],
        ["out", "folder", "folder"], ["folder", "out"],
    ],
    "validate": [
        [S, "--agent", "~"], [S, "--agent", "a:b:c"], [S, "--agent", "mod:"], [S, "--agent", ""],
        [S, "--target", "~=a:b"], [S, "--target", "x=~:~"],
    ],
    "points": [
        [S, "--agent", "~"], [S, "--agent", "a:b:c"], [S, "--agent", "mod:"],
        [S, "--agent", ""], [S, "--seed", "-1"], [S, "--seed", HUGE], [S, "--target", "~=x:y"],
    ],
    "fuzz": [
        [S, "--agent", "~"], [S, "--agent", "a:b:c"], [S, "--agent", "mod:"], [S, "--agent", ""],
        [S, "--budget", "-1"], [S, "--budget", "0"], [S, "--budget", HUGE],
        [S, "--max-faults", "-1"], [S, "--kind", ""], [S, "--kind", "~"], [S, "--out", ""],
        [S, "--out", S], [S, "--seed", "x"], [S, "--target", "~=a:b"],
    ],
    "serve": [
        [S, "--port", "-1"], [S, "--port", "70000"], [S, "--port", HUGE],
        [S, "--time-scale", "0"], [S, "--seed", "-5"], [S, "--seed", HUGE],
        [S, "--time-scale", "1e999"],
    ],
    "record": [
        ["--upstream", "", "--out", "r"], ["--upstream", "~", "--out", "r"],
        ["--upstream", "http://x", "--out", ""], ["--upstream", "ftp://x", "--out", "r"],
        ["--upstream", "http://[::1", "--out", "r"], ["--upstream", "http://x:99999", "--out", "r"],
        ["--upstream", "http://", "--out", "r"], ["--upstream", "http://x", "--out", "r",
                                                  "--port", "-1"],
        ["--upstream", "http://x", "--out", "r", "--port", HUGE],
    ],
    "import": [
        [S, "--entry", "-1"], [S, "--stall-seconds", "nan"], [S, "--stall-seconds", "-1"],
        [S, "--out", ""], [S, "--name", ""], [S, "--name", "~"],
    ],
    "compare": [
        ["folder", "folder"], ["a", "b", "--resamples", "-1"], ["a", "b", "--resamples", HUGE],
        ["a", "b", "--format", ""], ["a", "b", "--format", "x"], ["a", "b", "--threshold", "~"],
        ["a", "b", "--threshold", "x=y"], ["a", "b", "--config", "folder"], ["", ""],
        ["a", "b", "--out", ""], ["a", "b", "--seed", "-1"],
    ],
    "gate": [
        ["folder", "folder"], ["a", "b", "--threshold", "~"], ["a", "b", "--threshold", "a=nan"],
        ["a", "b", "--config", "folder"], ["a", "b", "--resamples", "0"], ["", ""],
        ["a", "b", "--out", ""],
    ],
    "demo": [["--dialect", "x"], ["--seed", "-1"], ["--seed", "x"], ["extra"]],
}
# Every command: an unknown flag, and where a file goes, an empty string, a folder, a
# missing file and a device.
SHARED = [["--bogus"], [""], ["folder"], ["missing.yaml"], ["/dev/null"]]
# Commands whose documented exit for a bad file among those it reads is 1.
BAD_FILE_EXIT = {"validate": 1}
# What each of those lines is: a file, not a bad command line.
FILE_LINES = {("folder",), ("missing.yaml",), ("/dev/null",)}

HELLO = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""


def _lines() -> Iterator[tuple[str, list[str]]]:
    for command, own in OWN.items():
        for line in SHARED + own:
            yield command, line


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail the test, instead of hanging it, when the command still runs after ``seconds``."""

    def stop(_signal: int, _frame: FrameType | None) -> None:
        raise TimeoutError(f"still running after {seconds} s: the line was taken as good")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_every_command_is_walked() -> None:
    commands = next(action for action in _parser()._actions
                    if isinstance(action, argparse._SubParsersAction))
    assert set(commands.choices) == set(OWN)


@pytest.mark.parametrize(("command", "line"), list(_lines()),
                         ids=[" ".join([c, *line]) or "-" for c, line in _lines()])
def test_a_bad_command_line_exits_2_with_an_error_line(
        command: str, line: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / S).write_text(HELLO)
    (tmp_path / "folder").mkdir()
    expected = BAD_FILE_EXIT.get(command, 2) if tuple(line) in FILE_LINES else 2
    with within(60):
        try:
            code = main([command, *line])
        except SystemExit as stop:  # argparse's own refusal
            code = stop.code
    err = capsys.readouterr().err
    assert code == expected, err
    assert "Traceback" not in err
    assert "error" in err
    assert not (tmp_path / "results").exists()  # a refused run writes nothing
