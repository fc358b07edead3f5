"""Hostile agents, bad command lines and killed runs through the real ``harness`` CLI.

Each command runs as its own process, as a user or a CI job starts it, under a real
timeout generous enough for a loaded machine. Three corpora:

- hostile agents (a busy loop, ``sys.exit``, ``os._exit``, self-SIGKILL, a
  ``BaseException``, endless threads, forks, a big allocation, an exit and a loop at
  import, a process started, a socket to a loopback listener, a write outside the working
  folder, the harness's checkers patched): each must fail its own case (exit 1), or be a
  one-line error at import (exit 2), and leave nothing on the real disk or the listener;
- every bad command line of tests/cli/test_bad_command_lines.py: exit 2 (1 for a bad file
  given to ``validate``), one line, no traceback;
- a run stopped by SIGINT, SIGTERM or SIGKILL after a few of its cases, then ``--resume``:
  every case finished before the stop is kept, the resumed run's files are byte for byte
  those of an uninterrupted run.

It prints the figures the harness promises: tracebacks 0, hangs 0, wrong exit codes 0,
finished cases lost 0 (and escapes 0, resumed runs differing 0)::

    .venv/bin/python benchmarks/bench_hostile.py [--quick]
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from _quick import quick, scaled

ROOT = Path(__file__).resolve().parent.parent
# A command still running after this many real seconds is a hang: a case's own limit is
# far below it, so only a harness that stopped watching its workers gets here.
HANG_SECONDS = scaled(600.0, 300.0)
CASE_TIMEOUT = scaled("20", "10")
KILLED_SCENARIO = ROOT / scaled("examples/scenarios/openai-careful.yaml",
                                "scenarios/crash/unknown-send-is-inspected.yaml")
KILLED_AGENT = scaled(["--agent", "examples.openai_careful.agent:main"], [])
HELLO = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello.
expect:
  stop_state: complete
"""
AGENTS = '''
import os
import signal
import socket
import subprocess
import sys
import threading


def busy(prompt):
    while True:
        pass


def exits(prompt):
    sys.exit(0)


def exits_hard(prompt):
    os._exit(3)


def kills_itself(prompt):
    os.kill(os.getpid(), signal.SIGKILL)


def raises_base(prompt):
    raise BaseException("a reason of its own")


def endless_threads(prompt):
    for _ in range(8):
        threading.Thread(target=lambda: [None for _ in iter(int, 1)]).start()
    return "done"


def forks(prompt):
    for _ in range(50):
        if os.fork() == 0:
            while True:
                pass
    return "done"


def allocates(prompt):
    kept = []
    while True:
        kept.append(b"x" * (64 << 20))


def starts_a_process(prompt):
    subprocess.run(["true"], check=True)
    return "done"


def connects(prompt):
    with socket.create_connection(("127.0.0.1", int(os.environ["BENCH_PORT"])), timeout=5):
        return "done"


def writes_outside(prompt):
    with open(os.environ["BENCH_OUTSIDE"], "w") as out:
        out.write("escaped")
    return "done"


def forges(prompt):
    import harness.checks
    import harness.runner._case
    import harness.runner._run

    for module in (harness.checks, harness.runner._run, harness.runner._case):
        for name in dir(module):
            if name.startswith(("check", "judge")) and callable(getattr(module, name)):
                setattr(module, name, lambda *args, **kwargs: ())
    raise RuntimeError("fails, then hopes the checkers say it passed")
'''
IMPORT_TIME = {"import_exit": "import sys\nsys.exit(0)\n\ndef main(prompt):\n    return 'x'\n",
               "import_loop": "while True:\n    pass\n\ndef main(prompt):\n    return 'x'\n"}
# Agent: the exit codes that are right for it.
HOSTILE = {
    "busy": {1}, "exits": {1}, "exits_hard": {1}, "kills_itself": {1}, "raises_base": {1},
    "endless_threads": {0, 1}, "forks": {1}, "allocates": {1}, "starts_a_process": {1},
    "connects": {1}, "writes_outside": {0, 1}, "forges": {1},
}
PROGRESS = re.compile(r"\[(\d+)/(\d+)\]")
# The harness's own traceback starts a line; an agent's, quoted in its failure report, is
# indented under "the agent's own exception".
TRACEBACK = re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)


@dataclass
class Figures:
    commands: int = 0
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    wrong_exits: list[str] = field(default_factory=list)
    escapes: list[str] = field(default_factory=list)
    cases_lost: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    stops: list[str] = field(default_factory=list)  # how each stopped run went


@dataclass
class Done:
    code: int | None  # None: still running at the timeout (killed)
    output: str


def harness(args: Sequence[str], cwd: Path, env: dict[str, str]) -> Done:
    """``harness ARGS`` as a process of its own, killed with its group past the timeout."""
    process = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return Done(None, output)
    return Done(process.returncode, output)


def judge(figures: Figures, label: str, done: Done, expected: set[int]) -> None:
    figures.commands += 1
    if TRACEBACK.search(done.output):
        figures.tracebacks.append(label)
    if done.code is None:
        figures.hangs.append(label)
    elif done.code not in expected:
        figures.wrong_exits.append(f"{label}: exit {done.code}, expected {sorted(expected)}")


def environment(folder: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]), **extra}


# -- hostile agents --------------------------------------------------------------------------


def hostile_agents(figures: Figures, folder: Path) -> None:
    (folder / "hostile_agents.py").write_text(AGENTS, encoding="utf-8")
    for name, code in IMPORT_TIME.items():
        (folder / f"{name}.py").write_text(code, encoding="utf-8")
    (folder / "hello.yaml").write_text(HELLO, encoding="utf-8")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    outside = Path(tempfile.gettempdir()) / f"bench-hostile-outside-{os.getpid()}"
    env = environment(folder, BENCH_PORT=str(listener.getsockname()[1]),
                      BENCH_OUTSIDE=str(outside))
    runs = [(f"hostile_agents:{name}", codes) for name, codes in HOSTILE.items()]
    runs += [(f"{name}:main", {2}) for name in IMPORT_TIME]
    for spec, codes in runs:
        args = ["run", "hello.yaml", "--agent", spec, "--no-crash", "--case-timeout",
                CASE_TIMEOUT, "--case-memory", "512", "--out", f"out-{spec.replace(':', '-')}"]
        judge(figures, f"run --agent {spec}", harness(args, folder, env), codes)
    try:
        listener.accept()
        figures.escapes.append("a socket reached the loopback listener")
    except BlockingIOError:
        pass
    listener.close()
    if outside.exists():
        figures.escapes.append(f"a file was written outside the working folder: {outside}")
        outside.unlink()


# -- bad command lines -----------------------------------------------------------------------


def bad_command_lines(figures: Figures, folder: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests/cli"))
    try:
        import test_bad_command_lines as lines  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "tests/cli"))
    (folder / lines.S).write_text(lines.HELLO, encoding="utf-8")
    (folder / "folder").mkdir(exist_ok=True)
    every = list(lines._lines())
    if quick():  # the first line of each command, and every shared one of run
        firsts = dict(reversed(every))
        every = list(firsts.items())
    env = environment(folder)

    def one(command: str, line: list[str]) -> tuple[str, Done, set[int]]:
        expected = (lines.BAD_FILE_EXIT.get(command, 2) if tuple(line) in lines.FILE_LINES
                    else 2)
        return " ".join([command, *line]), harness([command, *line], folder, env), {expected}

    with ThreadPoolExecutor(2) as pool:
        for label, done, expected in pool.map(lambda pair: one(*pair), every):
            judge(figures, label, done, expected)
            if (folder / "results").exists():
                figures.escapes.append(f"{label}: a refused command left a results folder")


# -- kills and resumes -----------------------------------------------------------------------


def killed_runs(figures: Figures, folder: Path) -> None:
    env = environment(folder)
    base = ["run", str(KILLED_SCENARIO), *KILLED_AGENT, "--jobs", "2"]
    whole = harness([*base, "--out", "whole"], folder, env)
    judge(figures, "run (uninterrupted)", whole, {0, 1})
    total = max((int(m.group(2)) for m in PROGRESS.finditer(whole.output)), default=0)
    stops = [(signal.SIGINT, 1), (signal.SIGTERM, total // 2), (signal.SIGKILL, total - 2)]
    if not quick():
        stops += [(signal.SIGINT, total // 3), (signal.SIGTERM, 2), (signal.SIGKILL, total // 2)]
    for number, (stop, after) in enumerate(stops):
        out = f"killed-{number}"
        label = f"{stop.name} after {after} of {total} cases"
        seen = stop_after([*base, "--out", out], folder, env, stop, max(1, after))
        expected = {128 + stop.value} if stop != signal.SIGKILL else {-stop.value}
        judge(figures, label, seen.done, expected | ({0, 1} if seen.finished >= total else set()))
        kept = journal_cases(folder / out)
        figures.stops.append(f"{label}: exit {seen.done.code}, {seen.finished} said finished, "
                             f"{kept} in the journal")
        if kept < seen.finished and not (folder / out / "cases.jsonl").exists():
            figures.cases_lost.append(f"{label}: {seen.finished} finished, {kept} kept")
        resumed = harness([*base, "--out", out, "--resume"], folder, env)
        judge(figures, f"{label}, then --resume", resumed, {whole.code or 0})
        for name in ("cases.jsonl", "attempts.jsonl"):
            ours, theirs = folder / out / name, folder / "whole" / name
            if not ours.exists() or ours.read_bytes() != theirs.read_bytes():
                figures.differing.append(f"{label}: {name}")


@dataclass
class Stopped:
    done: Done
    finished: int  # the cases the run had said were finished when it was stopped


def stop_after(args: Sequence[str], folder: Path, env: dict[str, str], stop: signal.Signals,
               cases: int) -> Stopped:
    """Start ``harness ARGS``, send ``stop`` once it said ``cases`` cases finished."""
    process = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True, bufsize=1)
    assert process.stdout is not None
    text, finished = [], 0
    for line in iter_parts(process.stdout):
        text.append(line)
        found = [int(m.group(1)) for m in PROGRESS.finditer(line)]
        finished = max([finished, *found])
        if finished >= cases:
            process.send_signal(stop)
            break
    try:
        rest, _ = process.communicate(timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        rest, _ = process.communicate()
        return Stopped(Done(None, "".join(text) + rest), finished)
    return Stopped(Done(process.returncode, "".join(text) + rest), finished)


def iter_parts(stream: IO[str]) -> Iterator[str]:
    """The progress lines as they come: the harness ends them with a carriage return or a
    newline."""
    buffer = ""
    while True:
        char = stream.read(1)
        if not char:
            if buffer:
                yield buffer
            return
        buffer += char
        if char in "\r\n":
            yield buffer
            buffer = ""


def journal_cases(out: Path) -> int:
    """The finished cases a stopped run kept: its journal's lines after the plan."""
    journal = out / "journal.jsonl"
    if not journal.exists():
        return 0
    return max(0, len(journal.read_bytes().splitlines()) - 1)


def main() -> None:
    figures = Figures()
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as temp:
        folder = Path(temp)
        for part in (hostile_agents, bad_command_lines, killed_runs):
            part(figures, folder)
    print(f"commands run            {figures.commands}")
    for title, found in (("tracebacks", figures.tracebacks), ("hangs", figures.hangs),
                         ("wrong exit codes", figures.wrong_exits),
                         ("finished cases lost", figures.cases_lost),
                         ("escapes", figures.escapes),
                         ("resumed runs differing", figures.differing)):
        print(f"{title:<24}{len(found)}")
        for what in found:
            print(f"    {what}")
    for line in figures.stops:
        print(f"stopped: {line}")
    print(f"(the bench's own CPU: {time.process_time() - started:.1f} s)")


if __name__ == "__main__":
    main()
