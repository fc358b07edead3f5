"""Every form of agent is a guest: its files, sockets and processes stay in the world.

A plain ``main`` and a factory over the ports (``--agent module:Factory``) alike: what
they write lands on the crash disk, never on the real one; a socket to anywhere,
loopback included, is refused and fails ``network`` naming host and port; a process
they start is refused and fails the case with a ``harness_limit`` verdict naming
the call. The reference agent (the harness's own code) runs as it always did.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, run_case
from harness.runner._agents import load_agent_factory
from harness.scenario import Scenario

from .conftest import AgentPackages

SOURCE = Path("scenarios/hello.yaml")

# Each agent does {act} (one statement) and then answers as the reference agent does.
AGENT = '''
import asyncio, os, socket, subprocess, urllib.request
from harness.agent import ReferenceAgent

MARK = {mark!r}
KEEP = os.path.join(os.path.dirname(__file__), "keep.txt")  # a real file the agent can see


async def act():
    {act}


def main(prompt):
    asyncio.run(act())
    return "done"


class Factory(ReferenceAgent):
    async def run(self, task):
        await act()
        return await super().run(task)
'''


def hello() -> Scenario:
    return Scenario(name="hello", dialect="openai", seed=2, description="Say hello.",
                    model=[{"turn": 1, "text": "Hello there."}],
                    expect={"stop_state": "complete"})


def run(agent_packages: AgentPackages, tmp_path: Path, act: str, form: str) -> CaseResult:
    return run_named(agent_packages, tmp_path, act, form)[0]


def run_named(agent_packages: AgentPackages, tmp_path: Path, act: str, form: str,
              scenario: Scenario | None = None) -> tuple[CaseResult, str]:
    """The case's result and the agent's package name."""
    package = agent_packages.write({"agent": AGENT.format(
        mark=str(tmp_path / "mark"), act=act)})
    (tmp_path / package / "keep.txt").write_text("real", encoding="utf-8")
    spec = f"{package}.agent:{form}"
    agent = load_agent_factory(spec)
    assert isinstance(agent, PlainEntry) is (form == "main")
    scenario = scenario or hello()
    case = Case(scenario.name, SOURCE, scenario.seed, agent=spec)
    return run_case(case, scenario, agent), package


# ----------------------------------------------------------------------------------- files


@pytest.mark.parametrize("form", ["main", "Factory"])
def test_an_agents_files_land_on_the_crash_disk_never_the_real_one(
        agent_packages: AgentPackages, tmp_path: Path, form: str) -> None:
    etc = Path("/etc") / f"harness-guest-{tmp_path.name}"  # a real folder, as root
    act = f"open(MARK, 'w').write('x'); os.unlink(KEEP); open({str(etc)!r}, 'w').write('x')"
    try:
        result, package = run_named(agent_packages, tmp_path, act, form)
        written = etc.exists()
    finally:
        etc.unlink(missing_ok=True)  # left by a harness that let the write through
    keep = tmp_path / package / "keep.txt"

    assert result.stop_state == "complete", result.stop_reason  # every write succeeded
    assert keep.read_text(encoding="utf-8") == "real"
    assert not (tmp_path / "mark").exists()
    assert not written


@pytest.mark.parametrize("form", ["main", "Factory"])
def test_what_an_agent_writes_to_its_standard_streams_by_descriptor_is_kept(
        agent_packages: AgentPackages, tmp_path: Path, form: str,
        capfd: pytest.CaptureFixture[str]) -> None:
    result = run(agent_packages, tmp_path, "os.write(1, b'by descriptor')", form)
    assert result.stop_state == "complete", result.stop_reason
    assert "by descriptor" in capfd.readouterr().out


# ------------------------------------------------------------------------------- processes

PROCESSES = {
    "subprocess.run": ("subprocess.run(['touch', MARK])",
                       "subprocess.Popen ['touch', '{mark}']"),
    "check_output": ("subprocess.check_output('touch ' + MARK, shell=True)",
                     "subprocess.Popen 'touch {mark}'"),
    "os.system": ("os.system('touch ' + MARK)", "os.system('touch {mark}')"),
    "os.popen": ("os.popen('touch ' + MARK).read()", "os.popen('touch {mark}')"),
    "os.spawnv": ("os.spawnv(os.P_WAIT, '/usr/bin/touch', ['touch', MARK])",
                  "os.spawnv(0, '/usr/bin/touch', ['touch', '{mark}'])"),
    "os.posix_spawn": ("os.waitpid(os.posix_spawn('/usr/bin/touch', ['touch', MARK], {}), 0)",
                       "os.posix_spawn('/usr/bin/touch', ['touch', '{mark}'], {{}})"),
    "asyncio": ("await (await asyncio.create_subprocess_exec('touch', MARK)).wait()",
                "subprocess.Popen ['touch', '{mark}']"),
    "swallowed": ("exec('try:\\n subprocess.run([\"touch\", MARK])\\nexcept BaseException:\\n"
                  " pass')", "subprocess.Popen ['touch', '{mark}']"),
    "swallowed, then raised": (
        "exec('try:\\n subprocess.run([\"touch\", MARK])\\nexcept BaseException:\\n"
        " pass\\nraise RuntimeError(\"something else\")')",
        "subprocess.Popen ['touch', '{mark}']"),
}


@pytest.mark.parametrize("form", ["main", "Factory"])
@pytest.mark.parametrize("how", sorted(PROCESSES))
def test_a_process_the_agent_starts_is_refused_with_a_verdict_naming_the_call(
        agent_packages: AgentPackages, tmp_path: Path, form: str, how: str) -> None:
    act, call = PROCESSES[how]
    result, package = run_named(agent_packages, tmp_path, act, form)

    assert not (tmp_path / "mark").exists()  # nothing ran
    assert [v.invariant for v in result.verdicts] == ["harness_limit"], result.stop_reason
    (limit,) = result.verdicts
    shown = call.format(mark=tmp_path / "mark")
    assert limit.message == (
        f"the agent started a process ({shown} by {package}): a process outside the world "
        "cannot be crashed, timed or seen (it would reach the real disk and network, on the "
        "real clock)")
    assert limit.evidence == ("limit: process",)
    assert limit.advice.startswith("run the command as a scenario tool (kind: subprocess")


def test_a_subprocess_tool_is_the_worlds_and_still_runs(agent_packages: AgentPackages,
                                                        tmp_path: Path) -> None:
    # The harness starts the tool's process, not the agent: it is let through.
    behaviour = {"kind": "subprocess", "argv": ["touch", str(tmp_path / "mark")]}
    scenario = Scenario(
        name="tool", dialect="openai", seed=2,
        tools={"mark": {"kind": "put", "behaviour": behaviour}},
        model=[{"turn": 1, "calls": [{"tool": "mark", "args": {"key": "k", "value": "v"}}]},
               {"turn": 2, "text": "Done."}],
        expect={"stop_state": "complete"})
    result, _ = run_named(agent_packages, tmp_path, "pass", "Factory", scenario)
    assert result.passed, [v for v in result.verdicts if v.status == "fail"]
    assert (tmp_path / "mark").exists()


def test_a_library_asking_the_system_what_it_is_is_let_through(
        agent_packages: AgentPackages, tmp_path: Path) -> None:
    # distro, the OS lookup of the OpenAI SDK and of Haystack's telemetry (run by every
    # Haystack pipeline), runs lsb_release -a: a fixed, read-only query, as uname -p is.
    act = "import distro; distro.LinuxDistribution(include_lsb=True)._lsb_release_info"
    result = run(agent_packages, tmp_path, act, "main")
    assert result.stop_state == "complete", result.stop_reason
    assert "harness_limit" not in {v.invariant for v in result.verdicts}


# --------------------------------------------------------------------------------- sockets

SOCKETS = {
    "connect": ("with socket.socket() as s: s.connect(('127.0.0.1', 9))",
                "connect 127.0.0.1:9"),
    "create_connection": ("socket.create_connection(('127.0.0.1', 9), timeout=1)",
                          "connect 127.0.0.1:9"),
    "urllib": ("urllib.request.urlopen('http://127.0.0.1:9/x', timeout=1)",
               "connect 127.0.0.1:9"),
    "open_connection": ("await asyncio.open_connection('127.0.0.1', 9)",
                        "connect 127.0.0.1:9"),
    "udp": ("with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s: "
            "s.sendto(b'x', ('127.0.0.1', 9))", "send to 127.0.0.1:9"),
}


@pytest.mark.parametrize("form", ["main", "Factory"])
@pytest.mark.parametrize("how", sorted(SOCKETS))
def test_a_socket_to_loopback_is_refused_and_fails_network_naming_host_and_port(
        agent_packages: AgentPackages, tmp_path: Path, form: str, how: str) -> None:
    act, line = SOCKETS[how]
    result = run(agent_packages, tmp_path, f"try:\n        {act}\n    except OSError:\n"
                 "        pass", form)

    network = next(v for v in result.verdicts if v.invariant == "network")
    assert network.status == "fail"
    assert network.evidence[0].startswith(f"{line} (by ")
