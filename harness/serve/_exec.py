"""``harness run PATH… --exec COMMAND``: an agent as a process, killed and restarted.

For each case the scenario's world is served on a free port of 127.0.0.1 and
``COMMAND`` runs through ``/bin/sh`` in a working folder of the case, with the
server's URLs in its environment (:func:`~harness.serve.agent_environment`) and,
of the harness's own, only an allow-list of paths and settings
(:mod:`harness._environment`): no credential of the machine running it.
When the world reaches the case's crash point (``after_tool:NAME#K``,
``before_request:T``, ``mid_stream:T``, ``after_response:T``), the server kills
the process group with SIGKILL before it answers, and the command starts again
in the same folder: what the process wrote is there as a killed process leaves
it (the ``process_killed`` crash class). The run is judged from the world's
record, by the same checks as an in-process run. The crash points are the
world's events only (a process keeps its files on the real disk, out of the
harness's sight): ``points: all`` is every event the uncrashed run reaches
(:func:`recorded_events`), a listed point of the agent's own files is ``unknown``.

A process that exits non-zero, or runs past the case timeout (it is killed),
makes that one case fail with the reason; the next case runs. Every process is
started in its own session and killed with the harness (and, on Linux, by the
kernel if the harness itself dies). A case that passes leaves nothing behind; one
that does not keeps its working folder and its processes' output
(``FOLDER.N.out``, ``FOLDER.N.err``) under the temporary folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness._environment import allowed_environment
from harness.runner import (
    NO_CRASH_CASE,
    Case,
    CaseResult,
    CrashSpec,
    SecretLook,
    Verdict,
    case_result,
    is_world_point,
    not_dumpable,
    without_secrets,
)
from harness.scenario import Scenario
from harness.serve._app import Worlds, agent_environment, build_app
from harness.serve._guard import new_token
from harness.serve._server import ServerThread
from harness.serve._trace import ProcessRun, folder_files, served_trace
from harness.serve._world import KILL_CLASS, ServedWorld
from harness.trace import Trace

#: A killed agent is started again at most this often in one case (a crash, then its recovery).
MAX_PROCESSES = 3
#: How much of the end of an agent's output its failure report shows: enough for Node's
#: error, whose message comes before a stack of some ten lines (a missing package: 862 bytes).
_TAIL_CHARS = 4000


def exec_cases(scenario: Scenario, source: Path, crash_at: CrashSpec | None = None,
               reached: Sequence[str] = ()) -> list[Case]:
    """The uncrashed case, then one per crash point of the scenario (``process_killed``).

    ``crash.points`` as in process, with one difference: ``all`` is every world event
    the uncrashed run reached (``reached``, found by :func:`recorded_events`), for a
    process's own files are on the real disk, out of the harness's sight, so they have
    no points here. A listed point still gets its case: a world event the agent never
    reaches, and any point of the agent's own files, end ``unknown`` with the reason.
    """
    base = Case(scenario.name, source, scenario.seed)
    if crash_at is not None:
        return [replace(base, crash=replace(crash_at, crash_class=KILL_CLASS))]
    selection = scenario.crash.points
    if selection == "none":
        return [base]
    listed = ["all"] if selection == "all" else list(dict.fromkeys(selection))
    wanted = [p for p in listed if p != "all"]
    found = [p for p in dict.fromkeys(reached) if "all" in listed or p in wanted]
    points = found + [p for p in wanted if p not in found]
    return [base] + [replace(base, crash=CrashSpec(p, "at", KILL_CLASS)) for p in points]


def wants_recording(scenario: Scenario) -> bool:
    """Whether the scenario's crash points need the uncrashed run first (``all``)."""
    points = scenario.crash.points
    return points == "all" or (points != "none" and "all" in points)


def recorded_events(scenario: Scenario, source: Path, command: str, *, time_scale: float,
                    timeout: float) -> list[str]:
    """The world events an uncrashed run of ``command`` reaches, in order (for ``all``).

    As ``harness points`` records a run in process, the uncrashed case is run once
    before any case of the plan; what it reached is where the crash cases kill.
    """
    result = run_exec_case(Case(scenario.name, source, scenario.seed), scenario, command,
                           time_scale=time_scale, timeout=timeout)
    events = (result.trace.extra.world_events or ()) if result.trace is not None else ()
    return [str(event) for event in events]


def run_exec_case(case: Case, scenario: Scenario, command: str, *, time_scale: float,
                  timeout: float) -> CaseResult:
    """Run ``command`` over ``case``'s world until it exits (restarted after a kill); judge it.

    A case at a point of the agent's own files is not run: it is ``unknown``, saying why.
    """
    if case.crash is not None and not is_world_point(case.crash.point_id):
        return own_point_result(case)
    return _ExecCase(case, scenario, command, time_scale, timeout).run()


def no_world_event_case(case: Case, scenario: Scenario, trace: Trace) -> Verdict | None:
    """``unknown`` on the uncrashed case of a scenario whose points ask for ``all`` when
    its process reached no world event: no crash case could be made, so the scenario
    proves nothing of a crash, and ``--strict`` fails the run on it (as an in-process
    agent that reaches no persistence point, :func:`harness.runner.no_crash_case`)."""
    if case.crash is not None or not wants_recording(scenario) or trace.extra.world_events:
        return None
    return Verdict(NO_CRASH_CASE, "unknown", (
        "the agent process reached no world event (no model request, no tool call) in its "
        "uncrashed run, so 'points: all' made no crash case: the run proves nothing of how "
        "it survives a kill, only its uncrashed case was judged"))


def own_point_result(case: Case) -> CaseResult:
    """``unknown``: a point of the agent's own files, which a process keeps on the real disk."""
    assert case.crash is not None
    message = (f"{case.crash.point_id} is a point of the agent's own files; an --exec agent "
               "writes them on the real disk, out of the harness's sight, so this case proves "
               "nothing (its crash points are world events: after_tool:NAME#K, "
               "before_request:T, mid_stream:T, after_response:T)")
    return CaseResult(case, None, "not run: a point of the agent's own files",
                      (Verdict("crash", "unknown", message),), "", crash_reached=False)


class _ExecCase:
    """One case of an agent process: the world, the server, the processes in turn."""

    def __init__(self, case: Case, scenario: Scenario, command: str, time_scale: float,
                 timeout: float) -> None:
        self.case, self.scenario, self.command, self.timeout = case, scenario, command, timeout
        self.folder = tempfile.mkdtemp(prefix=f"harness-exec-{scenario.name}-")
        self.process: subprocess.Popen[bytes] | None = None
        # The world event the server killed the running process at, if it did.
        self.killed_at: str | None = None
        kill_at = case.crash.point_id if case.crash is not None else None
        self.world = ServedWorld(scenario, seed=case.seed, time_scale=time_scale,
                                 kill_at=kill_at, on_kill=self._crash)
        self.worlds = Worlds([scenario], lambda _s: self.world)
        self.secrets = SecretLook(scenario)

    def run(self) -> CaseResult:
        token = new_token()
        with ServerThread(build_app(self.worlds, token)) as url:
            env = allowed_environment({**agent_environment(url, self.scenario, token,
                                                           self.world.time_scale),
                                       "HARNESS_START_DIR": os.getcwd()})
            try:
                self._run_processes(env)
            finally:
                self._kill()
        trace = served_trace(self.world, self.case, self.worlds.runs, self.secrets,
                             self.folder)
        result = case_result(self.case, trace)
        problems = (self._process_verdict(), no_world_event_case(self.case, self.scenario, trace))
        extra = tuple(problem for problem in problems if problem is not None)
        if extra:
            result = replace(result, verdicts=(*result.verdicts, *extra))
        # The process's output is quoted in the verdict: a secret it printed is not.
        result = without_secrets(result, self.scenario.secret_values())
        if result.passed:
            self._remove_files()  # a failing case keeps them, for whoever looks into it
            return result
        return self._naming_the_folder(result)

    def _naming_the_folder(self, result: CaseResult) -> CaseResult:
        """The result with its first failure saying where the kept working folder is."""
        failed = [i for i, v in enumerate(result.verdicts) if v.status == "fail"]
        if not failed or self.folder in " ".join(result.verdicts[failed[0]].evidence):
            return result
        verdicts = list(result.verdicts)
        first = verdicts[failed[0]]
        kept = (f"the agent's working folder is kept: {self.folder} (its processes' output: "
                f"{Path(self.folder).name}.N.out and .err beside it)")
        verdicts[failed[0]] = replace(first, evidence=(*first.evidence, kept))
        return replace(result, verdicts=tuple(verdicts))

    def _remove_files(self) -> None:
        """The case's working folder and its processes' logs (``FOLDER.N.out``/``.err``)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        for run in self.worlds.runs:
            for stream in ("out", "err"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self._logs(run.number)}.{stream}")

    def _logs(self, number: int) -> Path:
        """Where process ``number``'s output goes, beside the working folder."""
        return Path(self.folder).parent / f"{Path(self.folder).name}.{number}"

    def _run_processes(self, env: dict[str, str]) -> None:
        for number in range(1, MAX_PROCESSES + 1):
            if number > 1:
                self.world.restart()
            run = self._run_one(number, {**env, "HARNESS_INCARNATION": str(number)})
            self.worlds.runs.append(run)
            self.secrets.after(number, lambda: folder_files(self.folder), self.world.invocations)
            if run.killed_at is None:
                return

    def _run_one(self, number: int, env: dict[str, str]) -> ProcessRun:
        run = ProcessRun(number)
        logs = self._logs(number)
        # Not dumpable while the agent runs: its process cannot read the harness's /proc.
        with open(f"{logs}.out", "wb") as out, open(f"{logs}.err", "wb") as err, \
                not_dumpable():
            self.killed_at = None
            self.process = subprocess.Popen(
                ["/bin/sh", "-c", self.command], cwd=self.folder, env=env, stdout=out,
                stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
                # Only a call through a function pointer looked up before the fork.
                preexec_fn=_die_with_parent)  # noqa: PLW1509
            code = self._wait(self.process)
        run.ended_at = self.world.clock.now()
        run.killed_at = self._killed_at()
        if run.killed_at is not None:
            return run
        stdout, stderr = _tail(f"{logs}.out"), _tail(f"{logs}.err")
        run.exit_code = code
        run.final_text = stdout.strip().splitlines()[-1] if stdout.strip() else None
        run.output = stderr or stdout or "(none)"
        if code is None:
            run.error = f"the agent process was still running after {self.timeout:g} s (killed)"
        elif code != 0:
            run.error = f"the agent process exited with {code}"
        return run

    def _wait(self, process: subprocess.Popen[bytes]) -> int | None:
        """The exit code; None when the process hung past the timeout (then it is killed)."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(timeout=0.05)
        self._kill()
        return None

    def _killed_at(self) -> str | None:
        """Where the server killed the process that just ended (set from its thread)."""
        return self.killed_at

    def _crash(self, event: str) -> None:
        """The world reached the case's crash point (in the server's thread): kill there."""
        self.killed_at = event  # before the kill: the main thread reads it once the process is gone
        self._kill()

    def _kill(self) -> None:
        """SIGKILL the agent's whole process group, and wait until it is gone."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def _process_verdict(self) -> Verdict | None:
        runs = self.worlds.runs
        if not runs or runs[-1].error is None:
            return None
        return Verdict("process", "fail", f"{runs[-1].error}; its last output:\n"
                       f"{runs[-1].output}",
                       advice="the agent process must exit 0 once the task is done; "
                              f"its working folder was {self.folder}")


def _tail(path: str) -> str:
    """The end of an output file, from the start of a line."""
    whole = Path(path).read_bytes()
    data = whole[-_TAIL_CHARS:]
    if len(data) < len(whole) and b"\n" in data:
        data = data.partition(b"\n")[2]  # not from the middle of a line
    return data.decode("utf-8", "replace").strip()


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()
_UNSHARE = None if _PRCTL is None else ctypes.CDLL(None, use_errno=True).unshare
_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER = 0x10000000


def _die_with_parent() -> None:
    """In the child: the kernel SIGKILLs it when the harness dies (Linux's PR_SET_PDEATHSIG),
    and it leaves for a user namespace of its own (no ids mapped: after ``exec`` it holds no
    capability, and the files it owns stay its own). From there the kernel refuses it the
    ``/proc/<pid>/environ`` and ``mem`` of every process outside, the harness and the shell
    that started it among them, whatever the user (harness.runner._seal); where the kernel
    refuses the namespace, the harness is still not dumpable while the agent runs."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if _UNSHARE is not None:
        _UNSHARE(_CLONE_NEWUSER)


def run_exec(planned: Sequence[tuple[Case, Scenario]], command: str, *, time_scale: float,
             timeout: float, on_result: object = None) -> list[CaseResult]:
    """Every case in turn, each over its own server; results in plan order."""
    results = []
    for case, scenario in planned:
        result = run_exec_case(case, scenario, command, time_scale=time_scale, timeout=timeout)
        if callable(on_result):
            on_result(result)
        results.append(result)
    return results
