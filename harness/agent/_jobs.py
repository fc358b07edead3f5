"""Background jobs in the reference agent: durable job records and the §19.4 reconciliation.

Seed 002 §19.4 ("后台任务:活着不等于可恢复"): after a restart the agent's
promises and callbacks are gone while the job's process may still run. So each
job has a durable record (``jobs.jsonl``, one full :class:`JobEntry` per line,
the last line of a job wins) holding what the seed lists: job id, owner session
and turn, command fingerprint, process identity beyond the PID (execution id,
PID and start time), state, output offset, exit code.

A job tool call (:class:`JobTool`, run by the ordinary :class:`ToolRunner`, so
the tool journal brackets it) writes ``starting`` before it asks the runner,
``running`` with the identity after, the output offset as it reads, and
``completed`` with the exit code and output at the end. A cancelled waiter
finishes TERM→KILL and waits for the process to exit (``stopping``, then
``cancelled``); a completion that raced the cancel is recorded, not claimed, so
the runner keeps its wake-up (grok: only a waiter that got the result stops the
wake-up; the result is never lost and never delivered twice).

A run's background budget caps how long a job may run (seed 002 §19.2,
``BackgroundBudget(maxRuntime)``; the task's ``max_job_seconds``, kept in the
session header so recovery knows it before the task is given again). It is
counted from the process's start as the runner recorded it (the identity's
``started_at``), never from a restart: 子预算只能消费父预算,不能自行续杯. A job
still running then is stopped TERM→KILL, its record says which budget it
outran, and the run ends ``budget_limited``. The same budget caps how many jobs
the run may start (``maxJobs``), counted from the durable records of every
incarnation: a job call past it starts nothing (its record says ``refused``). And
it caps how many lines of output a job may write (``maxOutput``), counted from the
job's first line by the runner's own offset, so a restart that re-attaches and
reads on grants no output anew: a job whose output a read shows past it is
stopped TERM→KILL like one out of time, and the run ends ``budget_limited``.

On restart :meth:`JobSupervisor.reconcile` walks the seed's table row by row:

=================  ======================  ========================================
record             runner                  action
=================  ======================  ========================================
running            same process alive      re-attach, read on from ``outputOffset``
running            exited (runner saw it)  read the rest, record the runner's exit code
running            gone / PID reused       ``orphaned``; no exit code is invented
stopping           process alive           go on with TERM→KILL, wait for the exit
completed          reply never written     replay the recorded result, never re-run
no start record    no trace of the job     re-schedule it (the call still needs it)
start recorded     cannot be asked         ``unknown``: the model is told to inspect
=================  ======================  ========================================

Example::

    supervisor = JobSupervisor(port, book, clock, session="run-7")
    tools = {**ports.tools, **supervisor.tools(port.tools)}   # job tools beside the others
    # on restart, before the journal closes what is left open:
    await reconcile_open_jobs(supervisor, log, journal, ports, deliver=append_reply)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final, Literal

from harness.agent._journal import DurableLineFile, Execution, Outcome, ToolJournal
from harness.agent._session_log import SessionLog
from harness.agent._tool_runner import cleaned_environment
from harness.agent._tools import ToolReply
from harness.ports import (
    JOB_COMPLETED_MARKER,
    AgentPorts,
    Clock,
    Disk,
    JobIdentity,
    JobPort,
    JobRunnerUnavailable,
    JobStatus,
    ReplyStatus,
    ToolContext,
    ToolInvocation,
    Wakeup,
    sha256_json,
)

JOBS_FILE: Final = "jobs.jsonl"
#: How often a waiter reads the job's output and records the offset (virtual seconds).
POLL_SECONDS: Final = 10.0
#: How long a TERM is given before KILL (seed 002 §19.4, TERM→KILL escalation).
TERM_GRACE_SECONDS: Final = 5.0
_EPS: Final = 1e-9

JobState = Literal["starting", "running", "stopping", "completed", "cancelled", "orphaned",
                   "unknown", "refused"]
TERMINAL: Final = frozenset({"completed", "cancelled", "orphaned", "unknown", "refused"})


@dataclass(frozen=True)
class JobEntry:
    """A job's whole record at one moment (one line of ``jobs.jsonl``)."""

    job_id: str
    owner_session: str
    owner_turn: str
    call_id: str
    tool: str
    fingerprint: str
    state: JobState
    identity: JobIdentity | None = None
    output_offset: int = 0
    output: tuple[str, ...] = ()
    lost_lines: int = 0
    exit_code: int | None = None
    cancelled: bool = False  # its waiter was cancelled: the model hears "cancelled"
    delivered: bool = False  # the reply carries the result: no wake-up may repeat it
    row: str = ""  # the reconciliation row that settled it, after a restart
    # The runtime budget it outran, when it was stopped for that (seed 002 §19.2,
    # BackgroundBudget(maxRuntime)); written only then, so other records keep their bytes.
    budget_seconds: float | None = None
    # The cap on the run's jobs that kept it from starting (state ``refused``; seed 002
    # §19.2, BackgroundBudget(maxJobs)); written only then.
    job_cap: int | None = None
    # The output budget (lines) it wrote past, when it was stopped for that (seed 002
    # §19.2, BackgroundBudget(maxOutput)); written only then.
    output_budget: int | None = None

    def to_line(self) -> bytes:
        fields = asdict(self)
        fields["output"] = list(self.output)
        for name in ("budget_seconds", "job_cap", "output_budget"):
            if fields[name] is None:
                del fields[name]
        return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    @classmethod
    def from_json(cls, fields: Any) -> JobEntry:
        try:
            identity = fields["identity"]
            return cls(**{**fields, "output": tuple(fields["output"]),
                          "identity": None if identity is None else JobIdentity(**identity)})
        except (TypeError, KeyError) as exc:
            raise ValueError(f"not a job record: {exc}") from exc

    def reply(self) -> dict[str, Any]:
        """What the model is told about this job (its tool reply's content)."""
        base: dict[str, Any] = {"job_id": self.job_id, "state": self.state,
                                "exit_code": self.exit_code, "output": list(self.output),
                                "lossy": self.lost_lines > 0, "lost_lines": self.lost_lines}
        if self.state == "refused":
            return {**base, "status": "not_started", "error": "BUDGET_EXHAUSTED",
                    "message": f"not started: the run's cap of {self.job_cap} background "
                               "jobs is used up"}
        if self.output_budget is not None:
            return {**base, "status": "stopped", "exit_code": None,
                    "message": f"stopped: it wrote {self.output_offset} lines of output, past "
                               f"its output budget of {self.output_budget} lines; its process "
                               "tree was stopped, and it is not run again"}
        if self.budget_seconds is not None:
            return {**base, "status": "stopped", "exit_code": None,
                    "message": f"stopped: it ran out of its runtime budget of "
                               f"{self.budget_seconds:g}s; its process tree was stopped, "
                               "and it is not run again"}
        if self.cancelled or self.state == "cancelled":
            return {**base, "status": "cancelled", "exit_code": None,
                    "message": "cancelled by request; its process tree was stopped"}
        if self.state == "completed":
            return {"status": "ok" if self.exit_code == 0 else "failed", **base}
        why = ("its process is gone (the PID no longer names it); no exit code is known"
               if self.state == "orphaned" else "the job runner cannot be asked about it")
        return {**base, "status": "unknown", "error": "TOOL_OUTCOME_UNKNOWN",
                "message": f"{self.tool} {self.state}: {why}; inspect before running it again"}


class JobBook:
    """The durable job records; the last record of a job is its state."""

    def __init__(self, disk: Disk, path: str, *, root: str = "/") -> None:
        self.file = DurableLineFile(disk, path, root=root)
        self.entries: dict[str, JobEntry] = {}

    @classmethod
    def open(cls, disk: Disk, path: str, *, root: str = "/") -> JobBook:
        book = cls(disk, path, root=root)
        for entry in book.file.load(JobEntry.from_json, expected="a job record"):
            book.entries[entry.job_id] = entry
        return book

    def write(self, entry: JobEntry) -> JobEntry:
        self.file.append(entry.to_line())
        self.entries[entry.job_id] = entry
        return entry

    def for_call(self, turn_id: str, call_id: str) -> JobEntry | None:
        for entry in self.entries.values():
            if (entry.owner_turn, entry.call_id) == (turn_id, call_id):
                return entry
        return None


def job_id_for(execution_id: str) -> str:
    """A job's id, from the tool journal's execution id of the call that started it.

    >>> job_id_for("exec_3")
    'job-exec_3'
    """
    return f"job-{execution_id}"


@dataclass
class JobSupervisor:
    """Runs, follows, stops and reconciles the jobs of one incarnation (see the module doc)."""

    port: JobPort
    book: JobBook
    clock: Clock
    session: str
    #: The call or turn that owned the waiting was cancelled (turn or session target):
    #: a late completion is then recorded and acknowledged, never woken (seed 002 §19.4).
    owner_cancelled: bool = False
    waiting: dict[str, str] = field(default_factory=dict)  # call id → job id
    #: How long a job may run from its process's start (seed 002 §19.2,
    #: BackgroundBudget(maxRuntime)); None: as long as it takes.
    max_runtime: float | None = None
    #: How many jobs the run may start, across restarts (BackgroundBudget(maxJobs)).
    max_jobs: int | None = None
    #: How many lines of output a job may write, from its first line, across restarts
    #: (BackgroundBudget(maxOutput)); None: as many as it writes.
    max_output_lines: int | None = None

    def tools(self, names: tuple[str, ...]) -> dict[str, JobTool]:
        return {name: JobTool(name, self) for name in names}

    # -- one call ---------------------------------------------------------------------------
    async def start_and_wait(self, tool: str, arguments: Mapping[str, Any],
                             context: ToolContext) -> dict[str, Any]:
        call = context.invocation
        job_id = job_id_for(context.execution_id)
        entry = JobEntry(job_id, self.session, call.turn_id, call.call_id, tool,
                         sha256_json({"tool": tool, "arguments": dict(arguments)})[:16],
                         "starting")
        if self.cap_reached(job_id):
            # Past the run's cap on jobs: nothing starts (seed 002 §19.2, BackgroundBudget).
            return self.book.write(replace(entry, state="refused",
                                           job_cap=self.max_jobs)).reply()
        entry = self.book.write(entry)
        # The job's process gets the cleaned environment the tool runner made (seed 000 §5).
        identity = self.port.start(tool, arguments, job_id=entry.job_id,
                                   owner_session=self.session, owner_turn=call.turn_id,
                                   call_id=call.call_id, env=context.env)
        entry = self.book.write(replace(entry, state="running", identity=identity))
        return (await self.follow(entry)).reply()

    async def follow(self, entry: JobEntry) -> JobEntry:
        """Wait for the job, reading its output from the recorded offset on; cancel stops it."""
        identity = entry.identity
        assert identity is not None
        self.waiting[entry.call_id] = entry.job_id
        deadline = self.runtime_deadline(entry)
        try:
            if self.max_output_lines is not None:
                # Read before waiting: a restart whose last incarnation read past the output
                # budget, and crashed before it stopped the job, stops it now, not a poll later.
                entry = self._read(entry)
                if self.output_spent(entry):
                    return await self.stop_over_output(entry)
            while True:
                status = await self.port.wait(identity, self._poll(deadline))
                entry = self._read(entry)
                if not status.alive:
                    return self.settle(entry, status, claim=True)
                if self.output_spent(entry):
                    return await self.stop_over_output(entry)
                if deadline is not None and self.clock.now() >= deadline - _EPS:
                    return await self.stop_over_budget(entry)
        except asyncio.CancelledError:
            await self._stop_cancelled(self.book.write(replace(entry, cancelled=True)))
            raise
        finally:
            self.waiting.pop(entry.call_id, None)

    def runtime_deadline(self, entry: JobEntry) -> float | None:
        """When the job's runtime budget runs out: from its process's start as the runner
        recorded it, so a restart that re-attaches grants no time anew (seed 002 §19.2:
        子预算只能消费父预算,不能自行续杯)."""
        if self.max_runtime is None or entry.identity is None:
            return None
        return entry.identity.started_at + self.max_runtime

    def _poll(self, deadline: float | None) -> float:
        if deadline is None:
            return POLL_SECONDS
        return max(0.0, min(POLL_SECONDS, deadline - self.clock.now()))

    async def stop_over_budget(self, entry: JobEntry) -> JobEntry:
        """The runtime budget ran out: record it, stop the process tree (TERM→KILL), and
        deliver that by the call's reply (claimed: no wake-up repeats it)."""
        if entry.budget_seconds is None:
            assert self.max_runtime is not None
            entry = self.book.write(replace(entry, budget_seconds=self.max_runtime))
        return await self._stop_and_deliver(entry)

    def output_spent(self, entry: JobEntry) -> bool:
        """Whether the job wrote past its output budget: the runner's offset counts every
        line from the first, whichever incarnation read it (no restart buys output anew)."""
        return self.max_output_lines is not None and \
            entry.output_offset > self.max_output_lines

    async def stop_over_output(self, entry: JobEntry) -> JobEntry:
        """The output budget is spent: record it before the stop (so a restart finishes
        the stop), then TERM→KILL, delivered by the call's reply (claimed: no wake-up)."""
        if entry.output_budget is None:
            assert self.max_output_lines is not None
            entry = self.book.write(replace(entry, output_budget=self.max_output_lines))
        return await self._stop_and_deliver(entry)

    async def _stop_and_deliver(self, entry: JobEntry) -> JobEntry:
        """Stop a job over a budget already recorded, delivered by the call's reply and
        claimed, so no wake-up repeats it."""
        identity = entry.identity
        assert identity is not None
        entry = self.book.write(replace(await self.stop(entry), delivered=True))
        self.port.claim(identity)
        return entry

    def cap_reached(self, job_id: str) -> bool:
        """Whether starting ``job_id`` would pass the run's cap on jobs."""
        return self.max_jobs is not None and self.jobs_started(job_id) >= self.max_jobs

    def jobs_started(self, job_id: str) -> int:
        """The jobs this session started, or began to, in every incarnation (the durable
        records), ``job_id`` itself left out: starting it again after a restart (its start
        never reached the runner) is still the same job, and a restart buys no fresh cap."""
        return sum(1 for entry in self.book.entries.values()
                   if entry.owner_session == self.session and entry.state != "refused"
                   and entry.job_id != job_id)

    def budget_spent(self) -> str | None:
        """Why the run stops ``budget_limited``: a job of this session outran its runtime
        budget (read from the durable records, so a restart stops the same way)."""
        for entry in self.book.entries.values():
            if entry.owner_session != self.session:
                continue
            if entry.budget_seconds is not None:
                return (f"the background job {entry.job_id} ({entry.tool}) ran out of its "
                        f"runtime budget of {entry.budget_seconds:g}s")
            if entry.output_budget is not None:
                return (f"the background job {entry.job_id} ({entry.tool}) wrote past its "
                        f"output budget of {entry.output_budget} lines")
            if entry.state == "refused":
                return f"the run's cap of {entry.job_cap} background jobs is used up"
        return None

    def _read(self, entry: JobEntry) -> JobEntry:
        """Read on from ``output_offset``; the new offset is recorded before it is used."""
        assert entry.identity is not None
        chunk = self.port.read(entry.identity, entry.output_offset)
        if chunk.next_offset == entry.output_offset:
            return entry
        return self.book.write(replace(entry, output=entry.output + chunk.lines,
                                       output_offset=chunk.next_offset,
                                       lost_lines=entry.lost_lines + chunk.dropped))

    def settle(self, entry: JobEntry, status: JobStatus, *, claim: bool) -> JobEntry:
        """Record how the job ended; a waiter that delivers the result claims it (no wake-up)."""
        identity = entry.identity
        assert identity is not None
        if status.state == "vanished":
            return self.book.write(replace(entry, state="orphaned", exit_code=None))
        state: JobState = "completed" if status.state == "exited" else "cancelled"
        delivered = claim and not entry.cancelled
        entry = self.book.write(replace(entry, state=state, exit_code=status.exit_code,
                                        delivered=delivered))
        if delivered:
            self.port.claim(identity)
        return entry

    async def _stop_cancelled(self, entry: JobEntry) -> None:
        """The waiter was cancelled: stop the process tree, record a completion that raced it."""
        assert entry.identity is not None
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self.stop(entry))

    async def stop(self, entry: JobEntry) -> JobEntry:
        """TERM, a grace period, KILL; wait until the process is gone (the stopping row)."""
        identity = entry.identity
        assert identity is not None
        status = self.port.status(identity)
        if status.alive:
            entry = self.book.write(replace(entry, state="stopping"))
            self.port.signal(identity, "TERM")
            status = await self.port.wait(identity, TERM_GRACE_SECONDS)
            if status.alive:
                self.port.signal(identity, "KILL")
                status = await self.port.wait(identity)
        entry = self._read(entry)
        # The waiter did not get this result: no claim, so the runner keeps the wake-up.
        entry = self.settle(entry, status, claim=False)
        if entry.state == "completed" and self.owner_cancelled:
            # A late completion of a cancelled owner: recorded, never woken (§19.4).
            self.port.acknowledge(identity.execution_id)
        return entry

    async def stop_unwatched(self) -> None:
        """Stop every job of this session that no waiter follows (a session cancel)."""
        for entry in list(self.book.entries.values()):
            if entry.state in ("running", "stopping") and entry.job_id not in \
                    self.waiting.values() and entry.owner_session == self.session:
                with contextlib.suppress(JobRunnerUnavailable, LookupError):
                    await self.stop(entry)

    # -- wake-ups -------------------------------------------------------------------------
    def wakeups(self) -> tuple[Wakeup, ...]:
        """Completions no waiter received, for this session: each reaches the model once.

        A completion whose reply already carried it (the claim was lost to a crash or
        to a runner that could not be asked) is acknowledged here, never woken.
        """
        due = []
        for wakeup in self.port.wakeups(self.session):
            entry = self.book.entries.get(wakeup.job_id)
            if entry is not None and (entry.delivered or entry.state == "cancelled"):
                self.port.acknowledge(wakeup.execution_id)  # told already, or stopped by us
            elif wakeup.exit_code is not None:
                due.append(wakeup)
        return tuple(due)

    def wakeup_text(self, wakeup: Wakeup) -> str:
        entry = self.book.entries.get(wakeup.job_id)
        output = list(entry.output) if entry is not None else []
        return (f"{JOB_COMPLETED_MARKER} {wakeup.execution_id}: job {wakeup.job_id} finished "
                f"with exit code {wakeup.exit_code}; output {json.dumps(output)}")

    # -- after a restart (seed 002 §19.4, the reconciliation table) -----------------------
    async def reconcile(self, entry: JobEntry | None, call: ToolContext) -> JobEntry:
        """Settle the job of a call left open by a crash; the returned entry is terminal."""
        if entry is None:
            return await self._reschedule(call)
        if entry.state in TERMINAL:
            if entry.delivered and entry.identity:
                with contextlib.suppress(JobRunnerUnavailable):
                    self.port.claim(entry.identity)  # the replayed reply delivers it
            return self._mark(entry, "replayed")  # replay the record, never re-run
        try:
            return await self._reconcile_live(entry, call)
        except JobRunnerUnavailable:
            return self.book.write(replace(entry, state="unknown", row="unknown"))

    async def _reconcile_live(self, entry: JobEntry, call: ToolContext) -> JobEntry:
        identity = entry.identity or self.port.find(entry.job_id)
        if identity is None:
            return await self._reschedule(call)  # the start never reached the runner
        entry = replace(entry, identity=identity)
        if entry.budget_seconds is not None:
            # Stopped for its budget when the crash came: finish that stop (TERM→KILL).
            return self._mark(await self.stop_over_budget(entry), "stopping")
        if entry.output_budget is not None:
            # Stopped for its output budget when the crash came: finish that stop.
            return self._mark(await self.stop_over_output(entry), "stopping")
        if self.port.process(identity.pid) != identity and not self._exited(identity):
            # The PID is gone or names another process now (start time differs).
            return self.book.write(replace(self._read_quietly(entry), state="orphaned",
                                           exit_code=None, row="orphaned"))
        if entry.state == "stopping" or entry.cancelled or self.owner_cancelled:
            # A cancel was accepted before the crash: finish it, TERM→KILL (stopping row).
            return self._mark(await self.stop(replace(entry, cancelled=True)), "stopping")
        return self._mark(await self.follow(entry), "reattached")

    def _exited(self, identity: JobIdentity) -> bool:
        """The runner saw the process exit (an exit code it reports, not one made up)."""
        return self.port.status(identity).state in ("exited", "killed")

    def _read_quietly(self, entry: JobEntry) -> JobEntry:
        with contextlib.suppress(LookupError, JobRunnerUnavailable):
            return self._read(entry)
        return entry

    async def _reschedule(self, call: ToolContext) -> JobEntry:
        """No start reached the runner: the call still needs its job, so it runs now."""
        invocation = call.invocation
        await self.start_and_wait(invocation.tool, invocation.arguments, call)
        found = self.book.for_call(invocation.turn_id, invocation.call_id)
        assert found is not None
        return self._mark(found, "rescheduled")

    def _mark(self, entry: JobEntry, row: str) -> JobEntry:
        if entry.row == row:
            return entry
        return self.book.write(replace(entry, row=row))


async def reconcile_open_jobs(supervisor: JobSupervisor, log: SessionLog, journal: ToolJournal,
                              ports: AgentPorts, deliver: Callable[[ToolReply], None]) -> None:
    """The replies owed to job calls a crash left without one, row by row (seed 002 §19.4).

    A call whose start the journal never recorded is left to the journal (it
    never ran: ``not_started``); every other job call gets its reply here, and
    its journal execution a result, before the journal closes what remains.
    """
    replied = {reply.reply.key for reply in log.replies()}
    for assistant in log.assistants():
        for call in assistant.calls:
            key = (assistant.turn_id, call.call_id)
            execution = journal.find(*key)
            if key in replied or call.name not in supervisor.port.tools or execution is None \
                    or execution.state == "intent":
                continue
            invocation = ToolInvocation(assistant.turn_id, call.call_id, call.name,
                                        call.arguments)
            context = ToolContext(invocation, execution.execution_id, ports.run_id,
                                  ports.incarnation, ports.clock, env=cleaned_environment())
            try:
                entry = await supervisor.reconcile(supervisor.book.for_call(*key), context)
            except asyncio.CancelledError:
                # Cancelled while it re-attached: the call still gets its (cancelled) reply.
                cut = supervisor.book.for_call(*key)
                if cut is not None:
                    _close(journal, execution, deliver, replace(cut, cancelled=True))
                raise
            _close(journal, execution, deliver, entry)


def _close(journal: ToolJournal, execution: Execution, deliver: Callable[[ToolReply], None],
           entry: JobEntry) -> None:
    """Record the job call's result in the journal, then hand its reply to the log."""
    content = entry.reply()
    if execution.outcome is None:
        outcome: Outcome = "unknown_after_restart" if content["status"] == "unknown" \
            else "returned"
        journal.record_result(execution.execution_id, outcome, content)
    deliver(ToolReply(entry.owner_turn, entry.call_id, _REPLY_STATUS[content["status"]],
                      content))


_REPLY_STATUS: Final[dict[str, ReplyStatus]] = {
    "ok": "ok", "failed": "error", "cancelled": "cancelled", "unknown": "unknown",
    "stopped": "error", "not_started": "error"}


class JobTool:
    """A job as a tool of the :class:`ToolRunner`: the call waits for the job."""

    concurrency_safe = False
    idempotent = False

    def __init__(self, name: str, supervisor: JobSupervisor) -> None:
        self.name = name
        self._supervisor = supervisor

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        return await self._supervisor.start_and_wait(self.name, arguments, context)
