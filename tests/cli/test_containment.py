"""An agent that exits, aborts or hangs is one failed case; the run goes on and writes results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness._cli import main
from harness.runner._contain import worker_count

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

# The agent misbehaves on the scenario with seed 1 and is the reference agent elsewhere.
AGENTS = """\
import os, sys, time
from harness.agent import ReferenceAgent

def _when_bad(act):
    def factory(ports):
        if ports.seed == 1:
            act()
        return ReferenceAgent(ports)
    return factory

def _spin():
    while True:
        pass

class _DiskHog(ReferenceAgent):
    async def run(self, task):
        with self._hog_ports.disk.open_append("/hog.bin") as out:
            while True:
                out.write(b"x" * (1 << 20))

def _hog(ports):
    agent = _DiskHog(ports)
    agent._hog_ports = ports
    return agent

class _Asker(ReferenceAgent):
    async def run(self, task):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        while True:
            try:
                await self._ask_ports.http.post(self._ask_ports.endpoint, json=body)
            except Exception:
                pass  # a careless agent: whatever happens, ask again

def asks_forever(ports):
    if ports.seed != 1:
        return ReferenceAgent(ports)
    agent = _Asker(ports)
    agent._ask_ports = ports
    return agent

def hogs_disk(ports):
    return _hog(ports) if ports.seed == 1 else ReferenceAgent(ports)

exits = _when_bad(lambda: sys.exit(7))
aborts = _when_bad(lambda: os._exit(9))
sleeps = _when_bad(lambda: time.sleep(3600))
spins = _when_bad(_spin)
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
REASONS = {
    "exits": "the agent called sys.exit(7); the case was stopped there",
    "aborts": "the agent's worker process exited with code 9 in the middle of the case",
    "sleeps": "the case took more than 1 s of real time (a busy loop or a blocking call in "
              "the agent?) and was killed; raise --case-timeout if it is honest work",
}
REASONS["spins"] = REASONS["sleeps"]
# Past a harness limit: no harness error, a failed harness_limit verdict with the reason.
LIMITS = {
    "asks_forever": "the agent sent more than 2,000 requests to the model",
    "hogs_disk": "the agent wrote 68,157,440 bytes to the crash disk, more than the "
                 "67,108,864 a case may write",
}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two scenarios (seed 1: the agent misbehaves; seed 2: it does not) and the agents."""
    (tmp_path / "bad_agents.py").write_text(AGENTS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = tmp_path / "suite"
    folder.mkdir()
    for name, seed in (("a-bad", 1), ("b-good", 2)):
        (folder / f"{name}.yaml").write_text(SCENARIO.format(name=name, seed=seed), "utf-8")
    return folder


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("agent", sorted([*REASONS, *LIMITS]))
def test_a_misbehaving_agent_is_one_failed_case(suite: Path, tmp_path: Path, agent: str,
                                                jobs: str, capsys) -> None:
    out = tmp_path / "results"
    # 2,000 requests take a few real seconds; the hanging agents are stopped after one.
    timeout = "60" if agent == "asks_forever" else "1"
    code = main(["run", str(suite), "--agent", f"bad_agents:{agent}", "--jobs", jobs,
                 "--case-timeout", timeout, "--out", str(out)])
    assert code == 1
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert [(r["scenario"], r["passed"], r["error"]) for r in rows] == [
        ("a-bad", False, REASONS.get(agent)), ("b-good", True, None)]
    printed = capsys.readouterr().out
    if agent in LIMITS:
        assert rows[0]["failed_invariants"] == ["harness_limit"]
        assert rows[0]["verdicts"][0]["message"] == LIMITS[agent]
        assert f"harness_limit broken: {LIMITS[agent]}" in printed
    else:
        assert rows[0]["failed_invariants"] == []
        assert f"harness error: {REASONS[agent]}" in printed


def test_jobs_are_capped_by_cases_and_cores() -> None:
    assert worker_count(10_000, 1) == 1
    assert worker_count(10_000, 10_000) == len(os.sched_getaffinity(0))
    assert worker_count(1, 10_000) == 1


@pytest.mark.parametrize("value", ["0", "-1", "x", "nan", "inf"])
def test_a_case_timeout_must_be_a_positive_number(suite: Path, value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(suite), "--case-timeout", value])
    assert exit_.value.code == 2
    assert (f"argument --case-timeout: got {value!r}; expected a number of seconds > 0"
            in capsys.readouterr().err)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_die_with_the_harness(suite: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(suite / "a-bad.yaml"), "--agent",
         "bad_agents:sleeps", "--out", str(tmp_path / "out")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (workers := _children(harness.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert workers, "no worker started"
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_alive, workers))
    finally:
        harness.kill()


# -- --out -----------------------------------------------------------------------------------


def test_an_out_that_names_a_file_is_refused_before_any_case_runs(suite: Path, tmp_path: Path,
                                                                   capsys) -> None:
    out = tmp_path / "a-file"
    out.write_text("keep me", encoding="utf-8")
    assert main(["run", str(suite), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"harness: error: --out: got '{out}'; expected a folder for the "
                            "results. It names a file; pick another path\n")
    assert captured.out == ""  # no case ran
    assert out.read_text(encoding="utf-8") == "keep me"


def test_an_out_that_cannot_be_written_is_refused_before_any_case_runs(suite: Path,
                                                                       capsys) -> None:
    out = Path("/proc/self/results")  # not writable, whoever runs the tests
    assert main(["run", str(suite), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"harness: error: --out: got '{out}'; expected a folder the "
                                   "harness can write to. Cannot write there (")
    assert captured.out == ""


def test_results_replace_old_ones_whole(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    assert main(["run", str(suite / "b-good.yaml"), "--out", str(out)]) == 0
    first = sorted(p.name for p in out.iterdir())
    assert main(["run", str(suite / "b-good.yaml"), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == first  # no temporary file left behind
    assert first == ["attempts.jsonl", "attempts.parquet", "cases.jsonl", "cases.parquet",
                     "manifest.json"]


def test_the_writer_renames_a_finished_file_into_place(tmp_path: Path) -> None:
    from harness._output import write_atomic

    target = tmp_path / "cases.jsonl"
    target.write_text("old\n", encoding="utf-8")

    def killed_half_way(tmp: Path) -> None:
        tmp.write_text("ne", encoding="utf-8")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, killed_half_way)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cases.jsonl"]
    write_atomic(target, lambda tmp: tmp.write_text("new\n", encoding="utf-8"))
    assert target.read_text(encoding="utf-8") == "new\n"


def test_a_result_that_cannot_be_sent_is_a_failed_case() -> None:
    from dataclasses import replace

    from harness.runner import Case, run_trace
    from harness.runner._handback import judge_handback, sendable
    from harness.scenario import load_scenario

    source = Path(__file__).resolve().parents[2] / "scenarios/tools/repeated-error-stops.yaml"
    scenario = load_scenario(source)
    case = Case(scenario.name, source, scenario.seed)
    trace = run_trace(case, scenario)
    first, *rest = trace.invocations
    unsendable = replace(first, arguments={"unsendable": lambda: None})
    trace = replace(trace, invocations=(unsendable, *rest))
    result = judge_handback(case, scenario, sendable({"kind": "trace", "how": "replayed"},
                                                     (trace,)))
    assert result.case == case
    assert result.error is not None
    assert result.error.startswith("the case's trace could not be sent back from its worker: ")
