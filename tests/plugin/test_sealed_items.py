"""The plugin runs a user's agent only sealed, as ``harness run`` does: in the case worker for
each item, in a sealed process for the run that plans a scenario's cases.

A hostile agent fails its own item with its reason and the session goes on, under xdist
too; it finds none of pytest's secrets, and cannot write the real disk; and each case's
digest and verdicts are those ``harness run`` gives for it, however the agent changes the
harness's modules in its worker.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_forged_verdicts import FACTORIES, TOOLS_SCENARIO
from tests.cli.test_worker_environment import LOOKING, SECRETS, expected, under_a_shell
from tests.plugin.conftest import CRASHY

# System tier (pytest --system): real pytest sessions, worker processes and guests.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]

# One agent per scenario, chosen by the scenario's name through the plugin's hook: the
# reference agent, which first does its harm.
HOSTILE = '''
import ctypes
import os
import signal
import sys
import threading

from harness.agent import ReferenceAgent


def _spin():
    while True:
        pass


def _forks():
    # In C, past the harness's refusal of os.fork: the case's end must end them.
    libc = ctypes.CDLL(None)
    for _ in range(50):
        if libc.fork() == 0:
            _spin()


def _writes_outside():
    # In C, past the harness's interception of Python's files: only the seal stops it.
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(OUTSIDE.encode(), os.O_WRONLY | os.O_CREAT, 0o644)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), OUTSIDE)
    libc.write(fd, b"escaped", 7)
    libc.close(fd)


def _threads():
    for _ in range(4):
        threading.Thread(target=_spin, daemon=True).start()


def _raises():
    raise BaseException("a reason of its own")


def _harmful(harm):
    class Harmful(ReferenceAgent):
        async def run(self, task):
            harm()
            return await super().run(task)

    return Harmful


busy = _harmful(_spin)
exits = _harmful(lambda: sys.exit(0))
exits_hard = _harmful(lambda: os._exit(3))
kills_itself = _harmful(lambda: os.kill(os.getpid(), signal.SIGKILL))
raises_base = _harmful(_raises)
endless_threads = _harmful(_threads)
forks = _harmful(_forks)
writes_outside = _harmful(_writes_outside)
'''
CONFTEST = '''
import hostile_agents


def pytest_harness_agent_factory(config, scenario):
    return getattr(hostile_agents, scenario.name.replace("-", "_"), None)
'''
# Long enough for an honest case on a busy machine: only the hanging agents wait it out.
CASE_TIMEOUT = "10"
# What each hostile agent's item says (a line of its report), the same as `harness run`'s.
REASONS = {
    "busy": f"the case took more than {CASE_TIMEOUT} s of real time (a busy loop or a "
            "blocking call in the agent?) and was killed; raise --harness-case-timeout if it "
            "is honest work",
    "exits": "the agent called sys.exit(0); the case was stopped there",
    "exits-hard": "the agent's worker process exited with code 3 in the middle of the case",
    "kills-itself": "the agent's worker process was killed by signal SIGKILL",
    "raises-base": "the agent raised BaseException: a reason of its own; the case was "
                   "stopped there",
    "writes-outside": "Read-only file system",
}
# Agents that do their harm and return: their cases end; what they left is ended with them.
LEAVES_BEHIND = ("endless-threads", "forks")
GOOD = ("a-good", "z-good")  # the reference agent, first and last: the session goes on


def _scenario(name: str) -> str:
    """A scenario named ``name``: a tool call, then a crash at each of its points."""
    return CRASHY.replace("name: crashy", f"name: {name}")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "hostile_agents.py").write_text(
        f"OUTSIDE = {str(tmp_path / 'outside.txt')!r}\n{HOSTILE}", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    for name in (*REASONS, *LEAVES_BEHIND, *GOOD):
        (tmp_path / "scenarios" / f"{name}.yaml").write_text(_scenario(name),
                                                              encoding="utf-8")
    return tmp_path


def _pytest(project: Path, *args: str, crash: str = "none", **environ: str
            ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **environ,
           "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "--harness-crash", crash, "--harness-case-timeout", CASE_TIMEOUT, *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.mark.parametrize("xdist", [[], ["-p", "xdist", "-n", "2"]], ids=["one", "xdist"])
def test_a_hostile_agent_fails_only_its_own_item_with_its_reason(
        tmp_path: Path, xdist: list[str]) -> None:
    project = _project(tmp_path)
    outside = tmp_path / "outside.txt"

    done = _pytest(project, "-rA", *xdist)

    said = done.stdout
    assert done.returncode == 1, said + done.stderr
    assert f"{len(REASONS)} failed, {len(LEAVES_BEHIND) + len(GOOD)} passed" in said, said
    for name, reason in REASONS.items():
        assert f"FAILED scenarios/{name}.yaml::{name}" in said, said
        assert reason in _report(said, name), (name, said)
    for name in (*LEAVES_BEHIND, *GOOD):
        assert f"PASSED scenarios/{name}.yaml::{name}" in said, said
    assert "INTERNALERROR" not in said + done.stderr
    assert "node down" not in said + done.stderr  # no xdist worker lost
    assert not outside.exists()
    assert _left_in(project) == []  # the forks' children, the workers: none outlives pytest


def test_an_agent_that_fails_its_planning_run_fails_its_file_only(tmp_path: Path) -> None:
    project = _project(tmp_path)

    done = _pytest(project, "-rA", "scenarios/exits-hard.yaml", "scenarios/busy.yaml",
                   "scenarios/a-good.yaml", crash="as-written")

    said = done.stdout
    assert done.returncode == 1, said + done.stderr
    # a-good's items (uncrashed, crashed at each point): its planning ran as it should.
    assert re.search(r"\b2 failed, \d\d? passed", said), said
    assert ("the agent exited while running once to find its crash points: its process "
            "exited with code 3") in said
    assert ("the agent's run that finds its crash points took longer than "
            f"{CASE_TIMEOUT} s of real time (a busy loop or a blocking call in the agent?) "
            "and was stopped; raise --harness-case-timeout if it is honest work") in said


def test_a_fuzz_item_runs_its_agent_sealed(tmp_path: Path) -> None:
    project = _project(tmp_path)

    done = _pytest(project, "-rA", "--harness-fuzz", "3", "scenarios/exits-hard.yaml",
                   "scenarios/writes-outside.yaml", "scenarios/a-good.yaml")

    said = done.stdout
    assert done.returncode == 1, said + done.stderr
    assert "the agent exited while running a fuzz case: its process exited with code 3" \
        in _report(said, "exits-hard", "fuzz"), said
    assert "Traceback" not in said
    assert "PASSED scenarios/a-good.yaml::a-good[fuzz]" in said
    assert not (tmp_path / "outside.txt").exists()


@pytest.mark.parametrize("agent", ["looking_agents:main", "looking_agents:Factory"])
def test_an_item_s_agent_finds_no_secret_of_pytest_anywhere_in_its_process(
        tmp_path: Path, agent: str) -> None:
    (tmp_path / "looking_agents.py").write_text(LOOKING, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(_scenario("hello"),
                                                       encoding="utf-8")
    environ = {**os.environ, **SECRETS,
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}

    done = subprocess.run(under_a_shell(
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--harness-crash", "none",
        # Reading every byte of its process is slow work on a busy machine, not a hang.
        "--harness-case-timeout", "600",
        "--harness-agent", agent, "--harness-results", "out"),
        env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)

    assert done.returncode == 1, done.stdout + done.stderr
    rows = tmp_path / "out" / "cases-main.jsonl"
    assert rows.is_file(), done.stdout + done.stderr
    row = json.loads(rows.read_text(encoding="utf-8"))
    seen = dict(word.split("=") for word in row["stop_reason"].rsplit(": ", 1)[-1].split())
    # The agent is imported and run in the item's worker, never in pytest's process.
    assert seen == expected("import", "case"), row["stop_reason"]


def test_each_item_gives_the_digest_and_verdicts_harness_run_gives(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "crash" / "unknown-send-is-inspected.yaml"
    agent = "examples.naive_resend_agent:agent"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-m", "harness", "run", str(scenario), "--agent",
                          agent, "--crash", "sample", "--out", str(tmp_path / "run")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    tested = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                             str(scenario), "--harness-agent", agent, "--harness-crash",
                             "sample", "--harness-results", str(tmp_path / "plugin")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                            check=False)

    assert ran.returncode == 1, ran.stdout + ran.stderr  # the broken agent fails some cases
    assert tested.returncode == 1, tested.stdout + tested.stderr
    by_run = _judged(tmp_path / "run" / "cases.jsonl")
    by_plugin = _judged(tmp_path / "plugin" / "cases-main.jsonl")
    assert len(by_run) > 5
    assert by_plugin == by_run
    assert any(not passed for passed, _, _ in by_run.values())


def test_an_agent_that_forges_the_judge_in_its_worker_is_judged_as_an_honest_one(
        tmp_path: Path) -> None:
    # It forges wherever a case runs: in pytest's own process, if the plugin ran it there.
    in_a_case = FACTORIES.replace('!= "harness-case-worker"', '== "harness-agent-guest"')
    assert in_a_case != FACTORIES
    (tmp_path / "forging_factories.py").write_text(in_a_case, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")

    def judged(forge: bool) -> tuple[int, dict[str, tuple[bool, str, list[tuple[str, str]]]]]:
        out = tmp_path / ("forged" if forge else "honest")
        env = {**os.environ, "FORGE_THE_JUDGE": "1" if forge else "0",
               "HARNESS_PASS_ENV": "FORGE_THE_JUDGE",
               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "tests/runner"),
                                              str(ROOT)])}
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                               str(TOOLS_SCENARIO), "--harness-agent",
                               "forging_factories:minimal", "--harness-results", str(out)],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        return done.returncode, _judged(out / "cases-main.jsonl")

    honest = judged(forge=False)
    assert honest[0] == 1  # the minimal agent has no repetition guard (L3)

    assert judged(forge=True) == honest
    rows = (tmp_path / "forged" / "cases-main.jsonl").read_text().splitlines()
    assert any("the agent forged the judge" in  # the forgery ran, in the case's worker
               (json.loads(row)["agent_output"] or {}).get("tail", "") for row in rows)


def _judged(path: Path) -> dict[str, tuple[bool, str, list[tuple[str, str]]]]:
    """Each case's pass, digest and verdicts, by case id."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {row["case_id"]: (row["passed"], row["digest"],
                             [(v["invariant"], v["status"]) for v in row["verdicts"]])
            for row in rows}


def _report(said: str, name: str, kind: str = "scenario") -> str:
    """The failure report of the ``kind`` item (``scenario``, ``fuzz``) ``name`` in pytest's
    output."""
    after = said.partition(f"_ {kind} {name} _")[2]
    return after.partition("\n___")[0].partition("\n===")[0]


def _left_in(folder: Path) -> list[int]:
    """The processes still working in ``folder`` (whose working folder it is)."""
    left = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").resolve() == folder.resolve():
                left.append(int(entry.name))
        except OSError:
            continue
    return left


LISTING = '''
import os


def main(prompt):
    raise RuntimeError("listed " + " ".join(sorted(os.listdir("."))))
'''


def test_an_item_s_agent_does_not_see_the_sessions_results_in_its_folder(
        tmp_path: Path) -> None:
    # They fill while the items run (and a last session's are there from the start): an
    # agent listing its folder would find another tree in every item.
    (tmp_path / "listing_agent.py").write_text(LISTING, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "hello.yaml").write_text(_scenario("hello"), encoding="utf-8")
    for kept in ("out", ".harness-fuzz"):
        (tmp_path / kept).mkdir()
        (tmp_path / kept / "from-the-last-session.jsonl").write_text("{}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}

    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "--harness-crash", "none", "--harness-agent", "listing_agent:main",
                           "--harness-results", "out"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                          check=False)

    assert done.returncode == 1, done.stdout + done.stderr
    row = json.loads((tmp_path / "out" / "cases-main.jsonl").read_text(encoding="utf-8"))
    listed = row["stop_reason"].rsplit("listed ", 1)[-1].split()
    assert "listing_agent.py" in listed, row["stop_reason"]  # the start folder is read
    assert "out" not in listed
    assert ".harness-fuzz" not in listed


def test_under_harness_strict_points_all_that_made_no_crash_case_fails(tmp_path: Path) -> None:
    # As harness run --strict: the item of the uncrashed case passes on its own checks, but
    # the crash cases its scenario asked for could not be made, and a strict run says so.
    from tests.cli.test_what_a_run_proved import CRASH_EVERYWHERE, STATELESS

    (tmp_path / "stateless_agent.py").write_text(STATELESS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "crash-everywhere.yaml").write_text(CRASH_EVERYWHERE,
                                                                  encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}

    def pytest_run(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                               "--harness-agent", "stateless_agent:main", *options],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600, check=False)

    done = pytest_run()
    assert done.returncode == 0, done.stdout + done.stderr
    strict = pytest_run("--harness-strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert ("--harness-strict: unknown: the agent reached no persistence point of its own"
            in strict.stdout)
