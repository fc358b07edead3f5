"""A path that names no regular file is refused in one line, never read: a named pipe
would hang the command, ``/dev/zero`` would read until memory runs out."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from harness._cli import main
from harness.frontend import read_input

ZERO = Path("/dev/zero")


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail the test, instead of hanging it, when the block is still blocked after ``seconds``."""

    def stop(_signal: int, _frame: FrameType | None) -> None:
        pytest.fail(f"still reading after {seconds} s: the path was read, not refused")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def pipe(tmp_path: Path) -> Path:
    """A named pipe with no writer: opening it to read waits forever."""
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


def test_a_regular_file_and_a_symlink_to_one_are_read(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"name: x\n")
    (tmp_path / "link.yaml").symlink_to(real)
    assert read_input(real, 8) == read_input(tmp_path / "link.yaml", 8) == b"name: x\n"


@pytest.mark.parametrize(("target", "kind"), [
    ("pipe", "a named pipe (FIFO)"),
    ("zero", "a character device"),
    ("folder", "a folder"),
])
def test_what_is_no_regular_file_is_refused_unread(tmp_path: Path, pipe: Path, target: str,
                                                   kind: str) -> None:
    # Through a symlink too: the refusal is of what the path leads to.
    link = tmp_path / "link"
    link.symlink_to({"pipe": pipe, "zero": ZERO, "folder": tmp_path}[target])
    with within(10), pytest.raises(OSError, match="not a regular file") as refused:
        read_input(link, 1024)
    assert refused.value.errno == errno.EINVAL
    assert refused.value.strerror == f"{kind}, not a regular file"


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 11)
    with pytest.raises(OSError, match="at most 10") as refused:
        read_input(path, 10)
    assert (refused.value.errno, refused.value.strerror) == (
        errno.EFBIG, "11 bytes or more; at most 10 are read")


def _results_with_piped_cases(tmp_path: Path, pipe: Path) -> Path:
    """A result folder whose ``cases.jsonl`` is a symlink to a pipe."""
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "cases.jsonl").symlink_to(pipe)
    return folder


COMMANDS: list[tuple[str, Callable[[Path, Path], list[str]], int, str]] = [
    ("validate", lambda tmp, pipe: ["validate", str(pipe)], 1,
     "{pipe}: cannot read the scenario file: a named pipe (FIFO), not a regular file; "
     "expected a readable YAML file\n"),
    ("validate a folder", lambda tmp, pipe: ["validate", str(tmp)], 1,
     "{pipe}: cannot read the scenario file: a named pipe (FIFO), not a regular file; "
     "expected a readable YAML file\n"),
    ("run", lambda tmp, pipe: ["run", str(pipe), "--out", str(tmp / "out")], 2,
     "harness: error: {pipe}: cannot read the scenario file: a named pipe (FIFO), not a "
     "regular file; expected a readable YAML file\n"),
    ("points", lambda tmp, pipe: ["points", str(pipe)], 2,
     "harness: error: {pipe}: cannot read the scenario file: a named pipe (FIFO), not a "
     "regular file; expected a readable YAML file\n"),
    ("serve", lambda tmp, pipe: ["serve", str(pipe)], 2,
     "harness: error: {pipe}: cannot read the scenario file: a named pipe (FIFO), not a "
     "regular file; expected a readable YAML file\n"),
    ("import", lambda tmp, pipe: ["import", str(pipe)], 2,
     "harness: error: {pipe}: cannot read it (a named pipe (FIFO), not a regular file); "),
    ("gate", lambda tmp, pipe: ["gate", *[str(_results_with_piped_cases(tmp, pipe))] * 2], 2,
     "harness: error: {tmp}/results/cases.jsonl: cannot read: a named pipe (FIFO), not a "
     "regular file\n"),
    ("compare", lambda tmp, pipe: ["compare", *[str(_results_with_piped_cases(tmp, pipe))] * 2,
                                   "--out", str(tmp / "report")], 2,
     "harness: error: {tmp}/results/cases.jsonl: cannot read: a named pipe (FIFO), not a "
     "regular file\n"),
]


@pytest.mark.parametrize("command", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_every_command_refuses_a_pipe_in_one_line(
        tmp_path: Path, pipe: Path, capsys: pytest.CaptureFixture[str],
        command: tuple[Callable[[Path, Path], list[str]], int, str]) -> None:
    argv, code, message = command
    with within(20):
        assert main(argv(tmp_path, pipe)) == code
    out, err = capsys.readouterr()
    printed = out if code == 1 else err
    assert printed.startswith(message.format(pipe=pipe, tmp=tmp_path))
    assert len(printed.splitlines()) == 1
    assert "Traceback" not in out + err


def test_a_scenario_linked_to_dev_zero_is_refused_unread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to(ZERO)
    with within(10):
        assert main(["run", str(link), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"harness: error: {link}: cannot read the scenario file: a character device, not a "
        "regular file; expected a readable YAML file\n")


def test_a_huge_scenario_is_refused_unread(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as huge:
        huge.truncate(10 * 1024 * 1024 * 1024)  # 10 GB, sparse: nothing to read but zeros
    with within(10):
        assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"harness: error: {path}: the scenario file is too large: got more than 65,536 bytes; "
        "expected at most 65,536 bytes. Split it into several scenarios\n")
