"""``harness run --exec``: an agent in another language, killed at a world event and restarted.

The Node.js agents of ``examples/node_agent`` use the official ``openai`` npm
package (``npm ci`` there installs it; ``.ci/run`` does). The naive one starts
over after the kill and mails twice; the careful one journals around the send and
asks the model to inspect, so the mail goes out once.

Where a test is about what the harness does with the agent's process (killing it at
a world event, its exit code, its environment, a refused option), ``harness run``
runs in this process through its ``main``: the agent still runs as a real process
of its own, and starting the harness's own interpreter over again would only add
its start-up time. The tests of the shipped example, the exit codes of the command
and the killing of a hung agent's process group run ``python -m harness`` itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from harness._cli import main
from harness.runner import Case
from harness.scenario import load_scenario
from harness.serve._exec import run_exec_case
from harness.trace import Trace
from tests.conftest import require_node_packages

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "scenarios" / "exec-mail-once.yaml"
NODE_AGENTS = ROOT / "examples" / "node_agent"


def harness_run(tmp_path: Path, *argv: str, timeout: float = 120
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "run", *argv, "--out",
                           str(tmp_path / "results")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout, check=False)


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def harness_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> Run:
    """``harness run`` in this process, as :func:`harness_run` runs it in another."""
    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(tmp_path)  # the agent's HARNESS_START_DIR, as the cwd= above
        capsys.readouterr()
        code = main(["run", *argv, "--out", str(tmp_path / "results")])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["harness", "run", *argv], code, out, err)
    return run


def node_agent(name: str) -> str:
    require_node_packages(NODE_AGENTS, "openai")
    return f"node {NODE_AGENTS / name}"


def test_the_naive_node_agent_mails_twice_after_a_kill(tmp_path: Path) -> None:
    done = harness_run(tmp_path, str(SCENARIO), "--exec", node_agent("naive.mjs"),
                       "--time-scale", "0.01")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED exec-mail-once[after_tool:mail#1:at:process_killed]" in done.stdout
    assert "I1 broken: 1 non-idempotent effect(s) applied more than once" in done.stdout
    assert "ledger    mail=2, outbox=0 side effect(s); 1 duplicate(s)" in done.stdout
    assert "--exec 'node " in done.stdout  # the replay command repeats the agent
    # Uncrashed, the naive agent is fine: only the kill shows its bug.
    assert "FAILED exec-mail-once " not in done.stdout


def test_the_careful_node_agent_mails_once_after_a_kill(tmp_path: Path) -> None:
    done = harness_run(tmp_path, str(SCENARIO), "--exec", node_agent("careful.mjs"),
                       "--time-scale", "0.01")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.splitlines()
    assert any(line.split()[:5] == ["exec-mail-once", "2", "2", "0", "0"] for line in summary)


@pytest.mark.parametrize("point", ["mid_stream:1", "after_response:2", "before_request:2"])
def test_the_careful_node_agent_recovers_at_every_kind_of_world_event(
        harness_main: Run, point: str) -> None:
    done = harness_main(str(SCENARIO), "--exec", node_agent("careful.mjs"),
                       "--time-scale", "0.01", "--crash-at", f"{point}:at:process_killed")
    assert done.returncode == 0, done.stdout + done.stderr
    # Reached and killed there (an unreached point would be 'unknown', not passed).
    assert any(line.split()[:6] == ["exec-mail-once", "1", "1", "0", "0", "1"]
               for line in done.stdout.splitlines()), done.stdout


def test_a_hung_agent_is_one_failed_case_and_the_run_goes_on(tmp_path: Path) -> None:
    command = 'echo $$ > "$HARNESS_START_DIR/shell.pid"; sleep 60 & echo $! > ' \
              '"$HARNESS_START_DIR/child.pid"; wait'
    done = harness_run(tmp_path, str(SCENARIO), "--exec", command, "--case-timeout", "1")
    assert done.returncode == 1
    assert done.stdout.count("the agent process was still running after 1 s (killed)") >= 2
    assert "[2/2]" in done.stderr  # the second case ran after the first one hung
    for name in ("shell.pid", "child.pid"):  # the whole process group is gone
        assert not running(int((tmp_path / name).read_text())), name


def running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie nobody reaped yet has stopped running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_a_crashing_agent_fails_with_its_exit_code_and_output(harness_main: Run) -> None:
    done = harness_main(str(SCENARIO), "--exec", "echo 'no key here' >&2; exit 3",
                       "--no-crash")
    assert done.returncode == 1
    assert "process: the agent process exited with 3; its last output:\nno key here" \
        in done.stdout


def test_a_crashing_agents_error_is_shown_above_its_stack(harness_main: Run) -> None:
    # Node prints its error first, then the stack: a missing package's message was cut
    # off above the last 600 characters, the report starting in the middle of a line.
    stack = "".join(f"    at frame{i} (node:internal/modules/esm/resolve:{i}:9)\\n"
                    for i in range(40))
    done = harness_main(str(SCENARIO), "--exec",
                        f"printf \"Error: Cannot find package 'openai'\\n{stack}\" >&2; exit 1",
                        "--no-crash")
    assert done.returncode == 1
    assert "its last output:\nError: Cannot find package 'openai'\n    at frame0 " in done.stdout
    assert "    at frame39 (node:internal/modules/esm/resolve:39:9)\n" in done.stdout


def test_a_passing_case_leaves_no_files_and_a_failing_one_keeps_its_own(
        tmp_path: Path, harness_main: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def left() -> list[str]:
        return sorted(path.name for path in temp.glob("harness-exec-*"))

    passed = harness_main(str(SCENARIO), "--exec", node_agent("careful.mjs"),
                          "--time-scale", "0.01", "--no-crash")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert left() == []

    failed = harness_main(str(SCENARIO), "--exec", "echo 'no key here' >&2; exit 3",
                          "--no-crash")
    assert failed.returncode == 1
    folder, *logs = left()
    assert logs == [f"{folder}.1.err", f"{folder}.1.out"]
    assert f"its working folder was {temp / folder}" in failed.stdout
    assert (temp / logs[0]).read_text() == "no key here\n"


def test_a_case_failed_by_a_check_names_its_kept_working_folder(
        tmp_path: Path, harness_main: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    # Exits 0 after mailing twice over $HARNESS_TOOLS_URL: I1 fails, not the process.
    mail_twice = ("import json, os, urllib.request as u\n"
                  "for _ in range(2):\n"
                  "    u.urlopen(u.Request(os.environ['HARNESS_TOOLS_URL'] + '/mail', "
                  "data=json.dumps({'to': 'cfo@example.com', 'body': 'invoice 7'}).encode(), "
                  "method='POST')).read()\n")
    (tmp_path / "mail_twice.py").write_text(mail_twice, encoding="utf-8")
    done = harness_main(str(SCENARIO), "--exec",
                        f'{sys.executable} "$HARNESS_START_DIR/mail_twice.py"', "--no-crash")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "I1 broken" in done.stdout
    [folder] = [path for path in temp.glob("harness-exec-*") if path.is_dir()]
    assert f"the agent's working folder is kept: {folder}" in done.stdout


def test_the_agent_sees_the_servers_urls(tmp_path: Path, harness_main: Run) -> None:
    names = ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "HARNESS_TOOLS_URL",
             "HARNESS_MCP_URL", "HARNESS_PROMPT", "HARNESS_INCARNATION", "HARNESS_TOKEN"]
    command = " ".join(f'echo "{name}=${name}" >> "$HARNESS_START_DIR/env";' for name in names)
    harness_main(str(SCENARIO), "--exec", command, "--no-crash")
    seen = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines())
    base = seen["HARNESS_TOOLS_URL"].removesuffix("/_harness/tools")
    assert base.startswith("http://127.0.0.1:")
    assert seen["OPENAI_BASE_URL"] == base + "/v1"
    assert seen["ANTHROPIC_BASE_URL"] == base
    assert seen["HARNESS_MCP_URL"] == base + "/_harness/mcp"
    assert seen["HARNESS_INCARNATION"] == "1"
    assert seen["HARNESS_PROMPT"].startswith("Mail the CFO invoice 7")
    # The control endpoint's token: the run's own secret, not a fixed value.
    assert len(seen["HARNESS_TOKEN"]) > 40


def test_the_agent_process_is_told_the_frameworks_telemetry_off_switches(
        tmp_path: Path, harness_main: Run) -> None:
    # Its requests to other hosts never pass through the harness: the OpenAI Agents SDK for
    # JavaScript, tracing on by default, would post its spans to api.openai.com on exit.
    names = ["OPENAI_AGENTS_DISABLE_TRACING", "LANGSMITH_TRACING", "CREWAI_DISABLE_TELEMETRY",
             "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK", "ANONYMIZED_TELEMETRY"]
    command = " ".join(f'echo "{name}=${name}" >> "$HARNESS_START_DIR/env";' for name in names)
    harness_main(str(SCENARIO), "--exec", command, "--no-crash")
    seen = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines())
    assert seen == {"OPENAI_AGENTS_DISABLE_TRACING": "1", "LANGSMITH_TRACING": "false",
                    "CREWAI_DISABLE_TELEMETRY": "true", "HF_HUB_DISABLE_TELEMETRY": "1",
                    "DO_NOT_TRACK": "1", "ANONYMIZED_TELEMETRY": "False"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "examples.naive_resend_agent:agent"],
     "harness: error: --exec: got 'true'; expected no --agent, --target, --jobs or "
     "--check-determinism beside it"),
    (["--crash-at", "journal:fsync#1:after:unsynced_lost"],
     "harness: error: --crash-at: got 'journal:fsync#1'; expected a world event with --exec"),
])
def test_exec_refuses_what_it_cannot_do(harness_main: Run, argv: list[str], message: str
                                        ) -> None:
    done = harness_main(str(SCENARIO), "--exec", "true", *argv)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_agent_process_sees_the_allow_list_and_what_it_prints_is_redacted(
        tmp_path: Path, harness_main: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-0123456789abcdef")
    monkeypatch.setenv("MY_SETTING", "on")
    # The secret as an agent might find it elsewhere, then print on its way out.
    (tmp_path / "found.txt").write_text(f"leaked {secret}\n")
    command = 'env > "$HARNESS_START_DIR/seen"; cat "$HARNESS_START_DIR/found.txt"; exit 3'
    done = harness_main(str(SCENARIO), "--exec", command, "--no-crash", "--pass-env",
                        "MY_SETTING")
    seen = dict(line.split("=", 1) for line in (tmp_path / "seen").read_text().splitlines()
                if "=" in line)
    assert "AWS_SECRET_ACCESS_KEY" not in seen
    assert seen["OPENAI_API_KEY"] == "sk-harness-fake-key"
    assert (seen["MY_SETTING"], seen["PATH"]) == ("on", os.environ["PATH"])
    assert done.returncode == 1
    assert "leaked [redacted]" in done.stdout  # the process verdict quotes its output
    cases = (tmp_path / "results" / "cases.jsonl").read_text()
    assert "leaked [redacted]" in cases
    for text in (done.stdout, done.stderr, cases):
        assert secret not in text
        assert "sk-real-0123456789abcdef" not in text


def test_the_agents_working_folder_is_written_the_same_in_every_run(tmp_path: Path) -> None:
    # The folder is made afresh, named at random, for each case: an agent that names it
    # in its answer must not make two runs of one case differ.
    scenario = load_scenario(SCENARIO)
    command = f'{sys.executable} -c "import os; print(\'I work in\', os.getcwd())"'
    traces = []
    for _ in range(2):
        result = run_exec_case(Case(scenario.name, SCENARIO, scenario.seed), scenario,
                               command, time_scale=0.01, timeout=60)
        assert result.trace is not None
        traces.append(result.trace)
    assert [t.extra.final_answer for t in traces] == ["I work in <agent-folder>"] * 2
    # Each process's end is real time, read in scenario seconds (a process's jitter):
    # all else in the trace is the same from run to run.
    assert len({without_real_time(t).digest for t in traces}) == 1


def without_real_time(trace: Trace) -> Trace:
    return replace(trace, incarnations=tuple(replace(i, ended_at=0.0)
                                             for i in trace.incarnations))


def test_points_all_with_no_world_event_is_unknown_and_fails_strict(
        tmp_path: Path, harness_main: Run) -> None:
    # An agent that never reaches the model gives 'points: all' nothing to kill it at:
    # the run must say it proved nothing of a crash, not print a note and move on.
    scenario = tmp_path / "all-points.yaml"
    scenario.write_text(SCENARIO.read_text().replace(
        'points: ["after_tool:mail#1"]', "points: all"))
    done = harness_main(str(scenario), "--exec", "true", "--strict")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "UNKNOWN exec-mail-once: the agent process reached no world event" in done.stderr
    assert "'points: all' made no crash case" in done.stderr
    assert "harness run --strict: 1 thing(s) no case reached" in done.stderr
    assert "harness points SCENARIO --agent" not in done.stderr  # runs no process
