"""A fake job runner in the world: background jobs that survive the agent's crash.

Seed 002 §19.4: after a restart the agent's promises and callbacks are gone, but
the external process may still run. The runner keeps every job's truth on the
virtual clock — when it started, how much output it wrote, whether it exited,
was killed or vanished — so a restarted agent can re-attach, and the checkers
can compare what the agent told the model with what really happened.

A job of a :class:`JobSpec` runs ``seconds`` and writes ``output_lines`` lines
evenly over that time; the runner keeps only the last ``retained_lines`` of
them (a read from an older offset is ``lossy``, as dsh's sliding window).
Faults: ``vanishes_at`` (the process disappears with no exit code and its PID
goes to another process), ``ignores_term`` (only KILL stops it) and
``unqueryable_after_crash`` (once its starter crashed, the runner cannot be
asked about it). A completion no waiter ``claim`` ed stays a wake-up until
acknowledged (grok's rule: only a waiter that got the result stops the wake-up).

Example::

    runner = FakeJobRunner(clock, incarnations)
    port = runner.port(incarnation=1, specs={"build": JobSpec(seconds=10)})
    identity = port.start("build", {}, job_id="job-1", owner_session="s", owner_turn="t",
                          call_id="call_1")
    status = await port.wait(identity)     # JobStatus(state='exited', exit_code=0) at t=10
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, final

from fakes._clock import VirtualClock
from fakes._crashdisk import Incarnations
from harness.ports import (
    NEIGHBOUR_SESSION,
    JobIdentity,
    JobRunnerUnavailable,
    JobState,
    JobStatus,
    OutputChunk,
    Signal,
    Wakeup,
    sha256_json,
)
from harness.trace import JobRecord, ReadRecord, SignalRecord

#: First PID the runner hands out; the exact value only has to be stable.
_FIRST_PID = 4100


@dataclass(frozen=True)
class JobSpec:
    """How a job of one tool behaves (see the module docstring).

    >>> JobSpec(seconds=10, output_lines=5).line_interval
    2.0
    """

    seconds: float = 10.0
    output_lines: int = 10
    retained_lines: int | None = None
    exit_code: int = 0
    vanishes_at: float | None = None
    ignores_term: bool = False
    unqueryable_after_crash: bool = False
    # The variables its process is declared to need; not None: the environment the agent
    # hands its process is told to the runner's on_start_env (env:children).
    env: tuple[str, ...] | None = None

    @property
    def line_interval(self) -> float:
        return self.seconds / self.output_lines if self.output_lines else math.inf


@dataclass
class RunnerJob:
    """One job's truth, as the runner keeps it: the trace's record of the job, replaced
    as the job moves on, beside what only the runner needs (its PID, spec and waiters).

    ``record.lines`` is left at 0: how many lines a job wrote depends on the clock, and
    :meth:`FakeJobRunner.record` fills it in when the record is read.
    """

    record: JobRecord
    pid: int
    spec: JobSpec
    # The waiters' events (each incarnation has its own event loop, so its own events).
    waiters: list[asyncio.Event] = field(default_factory=list)

    @property
    def identity(self) -> JobIdentity:
        return JobIdentity(self.record.execution_id, self.pid, self.record.started_at)

    def change(self, **fields: Any) -> None:
        """The record with ``fields`` changed: records are frozen, a job is not."""
        self.record = replace(self.record, **fields)


@final
class FakeJobRunner:
    """The world's job runner; see the module docstring."""

    def __init__(self, clock: VirtualClock, incarnations: Incarnations) -> None:
        self.clock = clock
        self.incarnations = incarnations
        self.jobs: list[RunnerJob] = []
        self._next_pid = _FIRST_PID
        self._impostors: dict[int, JobIdentity] = {}
        # Told the job's tool after each signal a job got (the world's after_signal point).
        self.on_signal: Callable[[str], None] | None = None
        # Told each job whose spec declares its environment, with what the agent handed it.
        self.on_start_env: Callable[[RunnerJob, Mapping[str, str] | None], None] | None = None

    def port(self, incarnation: int, specs: Mapping[str, JobSpec]) -> RunnerPort:
        """The runner as ``incarnation`` holds it: refused once that incarnation is dead."""
        return RunnerPort(self, incarnation, dict(specs))

    def start_neighbour(self) -> RunnerJob:
        """A long job of another session, running from t=0: no cancel here may touch it."""
        return self._launch("shared-index", {}, job_id="job-neighbour",
                            session=NEIGHBOUR_SESSION, turn="", call_id="", incarnation=0,
                            spec=JobSpec(seconds=1e9, output_lines=0))

    # -- the truth, advanced lazily on the clock ---------------------------------
    def _launch(self, tool: str, arguments: Mapping[str, Any], *, job_id: str, session: str,
                turn: str, call_id: str, spec: JobSpec, incarnation: int) -> RunnerJob:
        pid = self._next_pid
        self._next_pid += 1
        fingerprint = sha256_json({"tool": tool, "arguments": dict(arguments)})[:16]
        record = JobRecord(
            execution_id=f"exec-{len(self.jobs) + 1}", tool=tool, job_id=job_id,
            owner_session=session, owner_turn=turn, call_id=call_id, fingerprint=fingerprint,
            started_at=self.clock.now(), incarnation=incarnation, state="running",
            exit_code=None, ended_at=None, lines=0,
            unqueryable_after_crash=spec.unqueryable_after_crash)
        job = RunnerJob(record, pid, spec)
        self.jobs.append(job)
        return job

    def record(self, job: RunnerJob) -> JobRecord:
        """``job``'s record as it stands now, with the lines it has written."""
        return replace(self.refresh(job).record, lines=self.lines_written(job))

    def refresh(self, job: RunnerJob) -> RunnerJob:
        """Bring ``job`` up to the clock: a natural exit or a vanish that is due."""
        if job.record.state != "running":
            return job
        now, spec, start = self.clock.now(), job.spec, job.record.started_at
        if spec.vanishes_at is not None and now >= start + spec.vanishes_at:
            self._end(job, "vanished", None, start + spec.vanishes_at)
            # The PID goes to another process: only the start time tells them apart.
            self._impostors[job.pid] = JobIdentity(
                f"exec-foreign-{job.pid}", job.pid, start + spec.vanishes_at)
        elif now >= start + spec.seconds:
            self._end(job, "exited", spec.exit_code, start + spec.seconds)
        return job

    def _end(self, job: RunnerJob, state: JobState, exit_code: int | None, at: float) -> None:
        job.change(state=state, exit_code=exit_code, ended_at=at)
        for waiter in job.waiters:
            waiter.set()

    def lines_written(self, job: RunnerJob) -> int:
        self.refresh(job)
        ended_at = job.record.ended_at
        end = ended_at if ended_at is not None else self.clock.now()
        elapsed = max(0.0, end - job.record.started_at)
        if not job.spec.output_lines:
            return 0
        return min(job.spec.output_lines, int(elapsed / job.spec.line_interval + 1e-9))

    def next_end(self, job: RunnerJob) -> float:
        """The virtual time the job ends by itself, as it stands."""
        start, spec = job.record.started_at, job.spec
        end = start + spec.seconds
        if spec.vanishes_at is not None:
            end = min(end, start + spec.vanishes_at)
        return end

    def by_identity(self, identity: JobIdentity) -> RunnerJob | None:
        for job in self.jobs:
            if job.identity == identity:
                return self.refresh(job)
        return None

    def queryable(self, job: RunnerJob, incarnation: int) -> bool:
        return not (job.spec.unqueryable_after_crash and incarnation != job.record.incarnation)


def output_line(tool: str, index: int, total: int) -> str:
    """The ``index``-th line (0-based) a job of ``tool`` writes.

    >>> output_line("build", 0, 3)
    'build: step 1/3'
    """
    return f"{tool}: step {index + 1}/{total}"


@final
class RunnerPort:
    """:class:`harness.ports.JobPort` for one incarnation of the agent."""

    def __init__(self, runner: FakeJobRunner, incarnation: int,
                 specs: dict[str, JobSpec]) -> None:
        self._runner = runner
        self._incarnation = incarnation
        self.specs = specs

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools that run as jobs."""
        return tuple(self.specs)

    def _alive(self, what: str) -> None:
        self._runner.incarnations.check(self._incarnation, f"job runner: {what}")

    def _job(self, identity: JobIdentity, what: str) -> RunnerJob:
        self._alive(what)
        job = self._runner.by_identity(identity)
        if job is None:
            raise LookupError(f"no job {identity.execution_id} (pid {identity.pid})")
        if not self._runner.queryable(job, self._incarnation):
            raise JobRunnerUnavailable(f"the runner cannot be asked about "
                                       f"{identity.execution_id} after a restart")
        return job

    def start(self, tool: str, arguments: Mapping[str, Any], *, job_id: str,
              owner_session: str, owner_turn: str, call_id: str,
              env: Mapping[str, str] | None = None) -> JobIdentity:
        self._alive(f"start {tool}")
        spec = self.specs[tool]
        args = json.loads(json.dumps(dict(arguments), sort_keys=True, default=str))
        job = self._runner._launch(tool, args, job_id=job_id, session=owner_session,
                                   turn=owner_turn, call_id=call_id, spec=spec,
                                   incarnation=self._incarnation)
        if spec.env is not None and self._runner.on_start_env is not None:
            self._runner.on_start_env(job, env)
        return job.identity

    def find(self, job_id: str) -> JobIdentity | None:
        self._alive(f"find {job_id}")
        for job in self._runner.jobs:
            if job.record.job_id == job_id:
                if not self._runner.queryable(job, self._incarnation):
                    raise JobRunnerUnavailable(f"the runner cannot be asked about {job_id}")
                return job.identity
        return None

    def process(self, pid: int) -> JobIdentity | None:
        self._alive(f"process {pid}")
        for job in self._runner.jobs:
            if job.pid == pid and self._runner.refresh(job).record.state == "running":
                return job.identity
        return self._runner._impostors.get(pid)

    def status(self, identity: JobIdentity) -> JobStatus:
        job = self._job(identity, f"status {identity.execution_id}")
        return _status(job)

    def read(self, identity: JobIdentity, offset: int) -> OutputChunk:
        job = self._job(identity, f"read {identity.execution_id}")
        written = self._runner.lines_written(job)
        retained = job.spec.retained_lines
        first = max(0, written - retained) if retained is not None else 0
        start = max(offset, first)
        lines = tuple(output_line(job.record.tool, i, job.spec.output_lines)
                      for i in range(start, written))
        dropped = max(0, first - offset)
        job.change(reads=(*job.record.reads, ReadRecord(
            offset, written, dropped > 0, self._runner.clock.now(), self._incarnation)))
        return OutputChunk(lines, written, dropped > 0, dropped)

    def signal(self, identity: JobIdentity, signal: Signal) -> None:
        job = self._job(identity, f"{signal} {identity.execution_id}")
        now = self._runner.clock.now()
        job.change(signals=(*job.record.signals, SignalRecord(signal, now, self._incarnation)))
        if job.record.state == "running" and not (signal == "TERM" and job.spec.ignores_term):
            self._runner._end(job, "killed", -15 if signal == "TERM" else -9, now)
        if self._runner.on_signal is not None:
            self._runner.on_signal(job.record.tool)  # may crash the case here (after_signal)

    async def wait(self, identity: JobIdentity, timeout: float | None = None) -> JobStatus:
        job = self._job(identity, f"wait {identity.execution_id}")
        clock = self._runner.clock
        until = self._runner.next_end(job)
        if timeout is not None:
            until = min(until, clock.now() + timeout)
        if job.record.state == "running" and until > clock.now():
            changed = asyncio.Event()
            job.waiters.append(changed)
            try:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(until - clock.now()):
                        await changed.wait()
            finally:
                job.waiters.remove(changed)
        return self.status(identity)

    def claim(self, identity: JobIdentity) -> None:
        job = self._job(identity, f"claim {identity.execution_id}")
        if job.record.claimed_by is None:
            job.change(claimed_by=self._incarnation)

    def wakeups(self, owner_session: str) -> tuple[Wakeup, ...]:
        self._alive("wakeups")
        return tuple(Wakeup(r.execution_id, r.job_id, r.owner_session, r.exit_code)
                     for j in map(self._runner.refresh, self._runner.jobs)
                     if (r := j.record).owner_session == owner_session
                     and r.state in ("exited", "killed")
                     and r.claimed_by is None and r.acknowledged_by is None
                     and self._runner.queryable(j, self._incarnation))

    def acknowledge(self, execution_id: str) -> None:
        self._alive(f"acknowledge {execution_id}")
        for job in self._runner.jobs:
            record = job.record
            if record.execution_id == execution_id and record.acknowledged_by is None:
                job.change(acknowledged_by=self._incarnation)


def _status(job: RunnerJob) -> JobStatus:
    return JobStatus(job.record.state, job.record.exit_code)
