"""The reference agent loop (DESIGN L1-L7): the model of what recovering correctly means.

:class:`ReferenceAgent` implements :class:`harness.ports.Agent`. Its durable
state lives under ``ports.state_dir``: the tool journal (``journal.jsonl``,
J1-J4) and the trusted session log (``session.jsonl``, :mod:`._session_log`).
Run metrics go to a :class:`MetricsSink` that may drop records (J6).

One turn (seed 002 §19.1 and §19.5; seed 000 §1):

1. ``turn_start`` is written; the request is built from the trusted transcript
   (:func:`build_request`), so a restarted agent sends what a fresh one would;
2. the stream client makes the call, drawing on the one shared :class:`Budget`
   (S8) and writing its retry events into the session log (S7);
3. every attempt is written with its usage (L6), then the complete assistant
   message with its attempt id (S2). Only now may tools run (L1);
4. the calls run through the :class:`ToolRunner` (journal first, parallel only
   when every tool is concurrency-safe, one failure never aborts the others:
   L2); the replies are written in the model's order; the guards (L3, L4)
   look at the transcript and may add a reminder or stop the run;
5. ``turn_end`` is written; a message without tool calls ends the run.

Long runs (:mod:`._compaction`, :mod:`._breaker`, :mod:`._budget_tree`): a context
overflow compacts the history and sends the turn's request once more; a prompt
near the window compacts in the background while the tools run, and the next
request waits for it; a circuit breaker spaces the attempts through an outage;
tokens, cost and tool time are spent only from the one goal budget.

A truncated message (S6) is recorded with its cut calls, each of which gets a
structured error reply and none of which runs (I7); the next request therefore
differs, so it is never a blind re-sample. Stop states (L5) come from
:func:`failure_stop`; a session-log write failure stops every further side
effect and ends ``infra_paused`` (J6). The stop record is written last, through
the epoch check (L7).

Long tasks (seed 002 §19.2-§19.3): when the ports offer a goal service, a
:class:`GoalKeeper` takes the execution lease before the first turn, checks the
queued auto-continue before each one, writes recovery records at the safe
boundaries and turns a final answer into a verified completion (:mod:`._goal`).
Work that must not outlive its incarnation checks :attr:`ReferenceAgent.lease`.

Example::

    agent = ReferenceAgent(ports)           # ReferenceAgent is an AgentFactory
    outcome = await agent.run(Task("Append 'hi' to the notes.", tools=(ToolSpec("append"),)))
    outcome.stop_state                      # 'complete'
"""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar, final

from harness._errors import DiskError
from harness._redact import redact
from harness.agent._breaker import BreakerConfig, BreakerState, CircuitBreaker
from harness.agent._budget import Budget
from harness.agent._budget_tree import BudgetPolicy, SubBudget, goal_budget
from harness.agent._cancel import (
    CANCELS_FILE,
    CancelLog,
    CancelRouter,
    RunHandles,
    reference_router,
)
from harness.agent._classify import (
    AUTH_STATUSES,
    USAGE_MARKERS,
    USAGE_STATUSES,
    ProviderError,
    is_infra_failure,
    retried_a_rate_limit,
    route_failure,
)
from harness.agent._compaction import (
    CompactionConfig,
    CompactionTicket,
    Compactor,
    close_interrupted,
    compacted_entries,
    is_overflow,
    recent_turns,
)
from harness.agent._defaults import StreamConfig
from harness.agent._dialects import build_request
from harness.agent._discipline import Discipline
from harness.agent._goal import Boundary, GoalKeeper, GoalStop, goal_text
from harness.agent._guards import (
    FINGERPRINT_REMINDER,
    REPETITION_REMINDER,
    TRUNCATED_ARGUMENTS,
    GuardHistory,
    GuardLimits,
    RecoveryCounters,
    argument_repairs,
)
from harness.agent._hooks import run_after_tool_hooks
from harness.agent._jobs import JOBS_FILE, JobBook, JobSupervisor, reconcile_open_jobs
from harness.agent._journal import ToolJournal
from harness.agent._lease import ExecutionLease, StaleLeaseError
from harness.agent._log_records import (
    BreakerRecord,
    GuardRecord,
    SessionHeader,
    StopRecord,
    TurnEndRecord,
    VerificationRecord,
)
from harness.agent._messages import AssistantMessage, ToolCall
from harness.agent._metrics import MemoryMetrics, MetricsSink
from harness.agent._output_spill import OUTPUTS_DIR, OutputSpill
from harness.agent._requests import Ordered, model_order, reply_text
from harness.agent._retry_log import RetryEvent
from harness.agent._session_log import (
    AssistantEntry,
    Entry,
    ReplyEntry,
    SessionLog,
    SessionRecord,
    StaleEpochError,
    UserEntry,
    calls_to_json,
    decode_retry,
    usage_to_json,
)
from harness.agent._stream_client import AttemptRecord, CompletionResult, StreamClient
from harness.agent._tool_runner import ToolRunner, cleaned_environment
from harness.agent._tools import ToolReply, not_started_reply
from harness.agent._transcript import AssistantTurn, Transcript, UserMessage, repair_transcript
from harness.ports import (
    WITHHELD_FINISHES,
    AgentOutcome,
    AgentPorts,
    CancelAck,
    CancelRequest,
    GoalPort,
    IdSource,
    RecoveryReport,
    StopState,
    Task,
    ToolCallView,
    ToolContext,
    ToolInvocation,
    TranscriptMessage,
    Usage,
    reads_only,
)

T = TypeVar("T")

SESSION_FILE = "session.jsonl"
JOURNAL_FILE = "journal.jsonl"
COMPACTION_FILE = "compaction.jsonl"


@dataclass(frozen=True)
class Stop:
    """Why the loop ends: a stop state (L5), its reason, and whether infra failed (I4)."""

    state: StopState
    reason: str
    infra_failure: bool = False


def turn_id_for(seed: int, number: int) -> str:
    """The id of turn ``number`` (1-based): seed and counter, never random.

    >>> turn_id_for(7, 1) == turn_id_for(7, 1) != turn_id_for(7, 2)
    True
    """
    return IdSource(seed, "turn", start=number - 1).next()


def route_seed(seed: int, incarnation: int, model: str) -> int:
    """The seed of a backup model's client: its attempt ids never meet the primary's.

    >>> route_seed(7, 1, "b") != incarnation_seed(7, 1)
    True
    """
    digest = hashlib.sha256(f"{seed}:incarnation:{incarnation}:route:{model}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def incarnation_seed(seed: int, incarnation: int) -> int:
    """A seed per incarnation, so a restarted client never reissues an attempt id.

    >>> incarnation_seed(7, 1) != incarnation_seed(7, 2)
    True
    """
    digest = hashlib.sha256(f"{seed}:incarnation:{incarnation}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def failure_stop(result: CompletionResult, budget: Budget, now: float) -> Stop:
    """The stop state for a call the stream client gave up on (L5; seed 002 §19.2).

    deadline or attempt budget → ``budget_limited``; 401/403 → ``blocked``;
    429 cap, quota, Retry-After above the cap → ``usage_limited``; transient
    transport failures, 5xx, 529, TLS → ``infra_paused``; anything else (400,
    404, 422, context overflow) → ``failed``.
    """
    error = result.error or ProviderError("budget_exhausted", result.stop_reason)
    infra = is_infra_failure(error)
    reason = f"{result.stop_reason} (last error: {error.kind} {error.message})"
    if _budget_ran_out(result, error, budget, now):
        return Stop("budget_limited", reason, infra)
    status = error.effective_status
    if status in AUTH_STATUSES:
        return Stop("blocked", reason)
    if status in USAGE_STATUSES or error.mentions(USAGE_MARKERS):
        return Stop("usage_limited", reason)
    return Stop("infra_paused" if infra else "failed", reason, infra)


def _budget_ran_out(
    result: CompletionResult, error: ProviderError, budget: Budget, now: float
) -> bool:
    if error.kind in ("deadline_exceeded", "budget_exhausted"):
        return True
    # The client stops before a wait that would pass the deadline; say so plainly.
    return result.stop_reason.startswith("waiting") or budget.exhausted_reason(now) is not None


class _SessionRetryLog:
    """The stream client's :class:`RetryLog`, written into the session log (S7)."""

    def __init__(self, log: SessionLog) -> None:
        self.log = log
        self.turn_id = ""

    def record(self, event: RetryEvent) -> None:
        self.log.append("retry", self.turn_id, event=event.to_json())


@dataclass
class _RunState:
    """What one ``run`` of one incarnation works with."""

    task: Task
    budget: Budget
    client: StreamClient
    retry_log: _SessionRetryLog
    runner: ToolRunner
    compactor: Compactor
    breaker: CircuitBreaker
    # The backup model's own client (its own attempt ids, no breaker), when the task names one.
    backup: StreamClient | None = None
    background: asyncio.Future[bool] | None = None  # a compaction under way (seed 000 §3.2)

    @property
    def backup_model(self) -> str:
        """The backup model's name (only asked for when the task names one)."""
        assert self.task.backup_model is not None
        return self.task.backup_model


@dataclass(frozen=True)
class _ToolCallCap:
    """The run's cap on tool calls (seed 002 §19.2, ToolBudget(maxCalls)) and what is left."""

    cap: int
    left: int

    @property
    def reason(self) -> str:
        return f"the tool call cap of {self.cap} is used up"

    @property
    def reply(self) -> str:
        return f"not run: {self.reason}"


#: A system prompt computed for each request (a release that stamps a volatile value).
SystemPrompt = Callable[[AgentPorts], str]


@final
class ReferenceAgent:
    """The reference agent core; see the module docstring.

    ``limits`` caps the loop's own recovery classes; ``metrics`` receives the
    droppable metrics stream (in memory by default, as :attr:`metrics`).
    ``system`` is the system prompt, fixed or computed per request;
    ``cache_breakpoints`` marks Anthropic prompt-cache boundaries (tools, system,
    newest message), as a task with ``Task.cache_breakpoints`` asks too.
    ``compaction``, ``breaker`` and ``budget_policy`` set the long-run behaviour
    (:mod:`._compaction`, :mod:`._breaker`, :mod:`._budget_tree`).
    ``discipline`` holds the rules no number expresses (:class:`Discipline`: writes of one
    path queued, the backup model only after a route failure, a goal's protected paths
    kept, a stop that waits written onto the goal), each on unless a mutant turns it off.
    """

    def __init__(
        self,
        ports: AgentPorts,
        *,
        config: StreamConfig | None = None,
        limits: GuardLimits | None = None,
        metrics: MetricsSink | None = None,
        system: str | SystemPrompt | None = None,
        cache_breakpoints: bool = False,
        job_supervisor: type[JobSupervisor] = JobSupervisor,
        compaction: CompactionConfig | None = None,
        breaker: BreakerConfig | None = None,
        budget_policy: BudgetPolicy | None = None,
        discipline: Discipline | None = None,
    ) -> None:
        self.ports = ports
        self.discipline = discipline or Discipline()
        self.system = system
        self.cache_breakpoints = cache_breakpoints
        self.config = config or StreamConfig()
        self.limits = limits or GuardLimits()
        self.metrics: MetricsSink = metrics or MemoryMetrics()
        self.compaction = compaction or CompactionConfig()
        self.breaker = breaker or BreakerConfig()
        self.budget_policy = budget_policy or BudgetPolicy()
        state_dir = posixpath.normpath(ports.state_dir)
        self._root = posixpath.dirname(state_dir) or "/"
        self._session_path = posixpath.join(state_dir, SESSION_FILE)
        self._journal_path = posixpath.join(state_dir, JOURNAL_FILE)
        self._compaction_path = posixpath.join(state_dir, COMPACTION_FILE)
        self._compactions: SessionLog | None = None
        self._log: SessionLog | None = None
        self._journal: ToolJournal | None = None
        self._guard_history: GuardHistory | None = None
        self._attempts: dict[str, Usage | None] = {}
        self._epoch: int | None = None  # the session epoch this run started in (L7)
        # Background jobs and cancellation by target (seed 002 §19.4).
        self._job_supervisor = job_supervisor
        self._jobs: JobSupervisor | None = None
        self._handles = RunHandles(ports.run_id)
        self.cancels: CancelRouter = reference_router(self._handles,
                                                      goals=ports.goals is not None)
        self._secret_arguments: dict[str, tuple[str, ...]] = {}  # by tool, kept out of logs
        self._calls_before_this_incarnation = 0  # tool calls not counted against the cap
        self._keeper: GoalKeeper | None = None  # the goal discipline, with a goal port

    # -- recovery (J4, J5, S7, I11) ----------------------------------------------------

    async def recover(self) -> RecoveryReport:
        """Load both logs, close interrupted calls and turns; a second call changes nothing.

        Raises ``JournalCorruptError`` for a damaged log and ``DiskError`` when a
        terminal record cannot be written.
        """
        log, journal = self._open()
        if self._jobs is not None:
            # Seed 002 §19.4: jobs outlive the crash; settle each open job call by the
            # reconciliation table before the journal closes what is left as unknown.
            await reconcile_open_jobs(self._jobs, log, journal, self.ports, self._append_reply)
        recovered = journal.recover()
        repaired = self._patch_dangling(log, journal)
        # A compaction a crash cut short never counts (seed 000 §3.2).
        close_interrupted(self.compactions)
        for turn_id in log.open_turns():
            # Seed 002 §19.1 ③ (dsh): a started turn gets a definite end event.
            log.append("turn_end", turn_id, reason="interrupted_before_restart")
        return RecoveryReport(
            not_started=tuple(
                r.execution.call_id
                for r in recovered
                if r.outcome == "interrupted_before_execution"
            ),
            unknown=tuple(
                r.execution.call_id for r in recovered if r.outcome == "unknown_after_restart"
            ),
            repaired_replies=tuple(reply.call_id for reply in repaired),
        )

    def _open_log(self, path: str) -> SessionLog:
        ports = self.ports
        return SessionLog.open(ports.disk, path, run_id=ports.run_id,
                               incarnation=ports.incarnation, clock=ports.clock, root=self._root)

    def _open(self) -> tuple[SessionLog, ToolJournal]:
        ports = self.ports
        self._log = self._open_log(self._session_path)
        self._journal = ToolJournal.open(
            ports.disk,
            self._journal_path,
            run_id=ports.run_id,
            clock=ports.clock,
            seed=ports.seed,
            root=self._root,
        )
        self._compactions = self._open_log(self._compaction_path)
        self._attempts = {a.attempt_id: a.usage for a in self._log.attempts()}
        if ports.jobs is not None:
            book = JobBook.open(ports.disk, posixpath.join(ports.state_dir, JOBS_FILE),
                                root=self._root)
            self._jobs = self._job_supervisor(ports.jobs, book, ports.clock, ports.run_id)
            self._jobs.owner_cancelled = self._handles.stop_reason is not None
            header = self._log.header
            if header is not None:  # the budget, known at recovery (seed 002 §19.2)
                budget = SessionHeader.from_body(header.body)
                self._jobs.max_runtime, self._jobs.max_jobs = budget.max_job_seconds, \
                    budget.max_jobs
                self._jobs.max_output_lines = budget.max_job_output_lines
            self._handles.jobs = self._jobs
        self._handles.restore(CancelLog.open(
            ports.disk, posixpath.join(ports.state_dir, CANCELS_FILE), root=self._root),
            self.cancels)
        return self._log, self._journal

    def _patch_dangling(self, log: SessionLog, journal: ToolJournal) -> list[ToolReply]:
        """J5's synthetic replies, unless the session is collected as training data: then a
        made-up reply would become a sample, so the calls stay unanswered and the run stops
        at its start (:meth:`_unsettled_stop`; seed 002 §19.1 ①, 训练数据收集模式则拒绝修补)."""
        if _collects_training_data(log):
            return []
        return self._repair_dangling(log, journal)

    def _repair_dangling(self, log: SessionLog, journal: ToolJournal) -> list[ToolReply]:
        """One synthetic reply per call without one, by turn id and call id (J5)."""
        replies = repair_transcript(_as_transcript(log.entries()), journal.find)
        for reply in replies:
            self._append_reply(reply)
        return replies

    # -- the run -------------------------------------------------------------------------

    async def run(self, task: Task) -> AgentOutcome:
        """Recover (once per incarnation), then take turns until a stop state."""
        self._handles.run_task = asyncio.current_task()
        try:
            if self._log is None:
                await self.recover()
            log = self.log
            if log.stop_record() is not None:
                return self._outcome_from_log()
            stop = await self._loop(self._prepare(task))
            if self._keeper is not None and self.discipline.park_goal_on_stop:
                self._keeper.park(stop.state, stop.reason)
        except DiskError as exc:
            stop = Stop("infra_paused", f"the session log cannot be written: {exc}", True)
        except asyncio.CancelledError:
            if self._handles.stop_reason is None:
                self._finish(Stop("cancelled", "the run was cancelled"))
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()  # the cancel was our own, asked for by target
            stop = Stop("cancelled", self._handles.stop_reason)
            self._settle_goal_cancel()
        finally:
            self._handles.run_task = None
        if self._handles.stops_owned_jobs and self._jobs is not None:
            await self._jobs.stop_unwatched()  # every job of this session, none of another's
        return self._finish(stop)

    def _settle_goal_cancel(self) -> None:
        """A goal cancel that stopped the run before the lease was taken (during recovery)
        still reaches the goal service: take the lease, then set the goal cancelled."""
        reason = self._handles.goal_cancelled
        if reason is None or self.ports.goals is None or self._log is None:
            return
        keeper = self._keeper or self._goal_keeper(self.ports.goals, self._log)
        if keeper.lease.epoch == 0:
            keeper.start(reason)
        else:
            keeper.cancel(reason)

    def cancel(self, request: CancelRequest) -> CancelAck:
        """The cancel hook: cancel what ``request`` names, at most once (seed 002 §19.4)."""
        return self.cancels.cancel(request)

    @property
    def log(self) -> SessionLog:
        return _recovered(self._log)

    @property
    def compactions(self) -> SessionLog:
        """Compaction's own records (:mod:`._compaction`), beside the session log."""
        return _recovered(self._compactions)

    @property
    def journal(self) -> ToolJournal:
        return _recovered(self._journal)

    @property
    def counters(self) -> RecoveryCounters:
        """The recovery classes used so far (L4), rebuilt from the session log."""
        log = self.log
        guards = log.of_kind("guard")
        return RecoveryCounters(
            transport_retry=sum(1 for e in log.retry_events() if e.kind == "retry_scheduled"),
            argument_repair=argument_repairs(log.assistants()),
            verification_rework=sum(  # seed 002 §19.2 验证后返工
                1 for v in log.of_kind("verification")
                if VerificationRecord.from_body(v.body).outcome == "fail"),
            repetition=sum(1 for g in guards
                           if GuardRecord.from_body(g.body).counter == "repetition"),
        )

    def _prepare(self, task: Task) -> _RunState:
        log, ports, policy = self.log, self.ports, self.budget_policy
        if log.header is None:
            self._start_session(task)
        budget = self._restore_budget(task)
        retry_log = _SessionRetryLog(log)
        breaker = self._restore_breaker()
        client = StreamClient(
            ports.http,
            dialect=ports.dialect,
            endpoint=ports.endpoint,
            config=self.config,
            clock=ports.clock,
            seed=incarnation_seed(ports.seed, ports.incarnation),
            retry_log=retry_log,
            budget=budget,
            breaker=breaker,
        )
        if policy.count_rate_limits_durably:
            client.rate_limits_in_a_row = _rate_limits_in_a_row(log)
        timeouts = {t.name: t.timeout_seconds for t in task.tools if t.timeout_seconds}
        tools = dict(ports.tools)
        if self._jobs is not None and ports.jobs is not None:
            tools.update(self._jobs.tools(ports.jobs.tools))
            self._jobs.max_runtime, self._jobs.max_jobs = task.max_job_seconds, task.max_jobs
            self._jobs.max_output_lines = task.max_job_output_lines
        self._secret_arguments = {t.name: t.secret_arguments for t in task.tools}
        self._calls_before_this_incarnation = 0 if policy.count_tool_calls_durably \
            else self.journal.started_calls()
        runner = ToolRunner(
            self.journal,
            tools,
            clock=ports.clock,
            incarnation=ports.incarnation,
            timeouts=timeouts,
            budget=SubBudget(budget, "tool", within_deadline=policy.tool_timeouts_within_deadline),
            queue_by_path=self.discipline.queue_writes_by_path,
            lost_replies_unknown=self.discipline.lost_replies_unknown,
            spill=self._output_spill(task),
        )
        compactor = Compactor(log, self.compactions, self.compaction, ports.clock,
                              incarnation=ports.incarnation, on_compacted=self._after_compaction)
        self._epoch = log.epoch
        backup = None if task.backup_model is None else StreamClient(
            ports.http, dialect=ports.dialect, endpoint=ports.endpoint, config=self.config,
            clock=ports.clock, seed=route_seed(ports.seed, ports.incarnation, task.backup_model),
            retry_log=retry_log, budget=budget)
        self._handles.client, self._handles.runner = client, runner
        if ports.goals is not None:
            self._goal_keeper(ports.goals, log)
        return _RunState(task, budget, client, retry_log, runner, compactor, breaker, backup)

    def _output_spill(self, task: Task) -> OutputSpill | None:
        """Where long tool results are kept, at the task's limit if lower than the agent's."""
        limit = self.budget_policy.inline_tool_result_chars
        if limit is None:
            return None
        if task.max_tool_result_chars is not None:
            limit = min(limit, task.max_tool_result_chars)
        ports = self.ports
        folder = posixpath.join(posixpath.normpath(ports.state_dir), OUTPUTS_DIR)
        return OutputSpill(ports.disk, folder, self._root, limit)

    def _goal_keeper(self, port: GoalPort, log: SessionLog) -> GoalKeeper:
        """The goal discipline of this incarnation, reachable by the goal cancel handler."""
        ports = self.ports
        keeper = GoalKeeper(port, log, ports.clock, ports.incarnation, self._next_turn_id,
                            cap_rounds=self.budget_policy.cap_verifier_rounds,
                            keep_protected=self.discipline.keep_protected_paths)
        self._keeper = self._handles.keeper = keeper
        return keeper

    def _restore_breaker(self) -> CircuitBreaker:
        """The circuit breaker, still open if the log says a previous incarnation opened it."""
        log = self.log

        def persist(state: BreakerState, until: float | None) -> None:
            log.append("breaker", log.records[-1].turn_id, state=state, until=until)

        breaker = CircuitBreaker(self.breaker, self.ports.clock, on_change=persist)
        changes = log.of_kind("breaker")
        last = BreakerRecord.from_body(changes[-1].body) if changes else None
        if last is not None and last.state == "open":
            assert last.until is not None  # an open breaker is written with its end
            breaker.restore(last.until)
        return breaker

    @property
    def lease(self) -> ExecutionLease:
        """The execution lease of this incarnation (seed 002 §19.3).

        With a goal port, the epoch the goal service granted; without one, the
        incarnation number, which every restart raises. Work that may outlive
        its incarnation (a watcher, a compaction) keeps the epoch it began
        under and calls :meth:`ExecutionLease.guard` before it writes.
        """
        if self._keeper is not None:
            return self._keeper.lease
        return ExecutionLease(self.ports.incarnation, self.ports.incarnation)

    def _next_turn_id(self) -> str:
        return self._turn_id(self.log.count("turn_start") + 1)

    def _boundary(self, boundary: Boundary, turn_id: str, next_action: str) -> None:
        """A recovery record at a safe boundary, when there is a goal (seed 002 §19.3)."""
        if self._keeper is not None:
            self._keeper.boundary(boundary, turn_id, next_action)

    def _start_session(self, task: Task) -> None:
        ports = self.ports
        self.log.append(
            "session",
            "",
            epoch=1,
            seed=ports.seed,
            dialect=ports.dialect,
            task=_task_json(task),
            deadline=ports.clock.now() + task.deadline_seconds,
        )
        self.log.append("user", self._turn_id(1), text=task.prompt, source="task")

    def _restore_budget(self, task: Task) -> Budget:
        """The shared budget as the log left it: a restart buys no time or attempts (S7)."""
        header = self.log.header
        assert header is not None
        fallback = goal_budget(
            task,
            deadline=SessionHeader.from_body(header.body).deadline,
            attempts_used=len(self.log.attempt_ids()) + self._unrecorded_first_requests(),
            policy=self.budget_policy,
        )
        if task.backup_model is not None:
            fallback.attempts_used += self._unrecorded_backup_request()
        budget = Budget.restore(self.log.retry_events(), fallback)
        for usage in self._attempts.values():
            budget.charge(usage)  # tokens and cost spent before a restart stay spent
        return budget

    def _unrecorded_first_requests(self) -> int:
        """Turns whose first request may have gone out without a record of it (S8).

        ``turn_start`` is the last record made before a turn's first request is
        sent; a crash right after the send leaves no ``attempt`` or ``retry``
        line of that turn. Such a turn counts one attempt spent, so a restart
        never buys back an attempt the provider saw (at worst one is counted
        that a crash just before the send kept from going out).
        """
        log = self.log
        recorded = {r.turn_id for r in log.records if r.kind in ("attempt", "retry")}
        return sum(1 for r in log.of_kind("turn_start") if r.turn_id not in recorded)

    def _unrecorded_backup_request(self) -> int:
        """One attempt for a switch to the backup with nothing recorded after it (S8): the
        backup's first request may have gone out before a crash, as a turn's first may."""
        for record in reversed(self.log.records):
            if record.kind in ("attempt", "retry"):
                return 0
            if record.kind == "route":
                return 1
        return 0

    async def _loop(self, state: _RunState) -> Stop:
        # Authority first: a restart takes the lease anew before it may act (seed 002 §19.3).
        stop = _from_goal(self._keeper.start(self._handles.goal_cancelled)) \
            if self._keeper is not None else None
        stop = stop or self._resume_guards() or self._unsettled_stop()
        if stop is not None:
            return stop
        try:
            while True:
                stop = self._cancelled()
                if stop is None:
                    self._deliver_wakeups()
                    stop = self._conclusion() or self._before_turn(state)
                if stop is None:
                    stop = await self._turn(state)
                if stop is not None:
                    return stop
        finally:
            _drop(state.background)  # its result belongs to a run that has ended
            state.background = None

    def _cancelled(self) -> Stop | None:
        """A turn or session cancel stops the run at this boundary (seed 002 §19.4)."""
        reason = self._handles.stop_reason
        return Stop("cancelled", reason) if reason is not None else None

    def _deliver_wakeups(self) -> None:
        """Each job completion no waiter received reaches the model once (seed 002 §19.4).

        The message is written before the runner's wake-up is acknowledged, and not
        written again when a crash fell between the two.
        """
        wakeups = self._jobs.wakeups() if self._jobs is not None else ()
        if not wakeups:
            return  # most turns: the transcript is not read
        assert self._jobs is not None
        told = {e.text.split(":", 1)[0] for e in self.log.entries()
                if isinstance(e, UserEntry) and e.source == "job"}
        for wakeup in wakeups:
            text = self._jobs.wakeup_text(wakeup)
            if text.split(":", 1)[0] not in told:
                next_turn = self._turn_id(self.log.count("turn_start") + 1)
                self.log.append("user", next_turn, text=text, source="job")
            self._jobs.port.acknowledge(wakeup.execution_id)

    def _conclusion(self) -> Stop | None:
        """A stop the transcript already implies: the last message is an answer."""
        last = self.log.last_entry()
        if not isinstance(last, AssistantEntry) or last.calls:
            return None
        if last.finish == "stop" and self._keeper is not None:
            # Seed 002 §19.2: a final answer is a claim; the verifier decides.
            return _from_goal(self._keeper.conclude())
        if last.finish == "stop":
            return Stop("complete", "the model answered without tool calls")
        if last.finish == "length":
            return Stop("failed", "the answer was cut at the output limit after its continuation")
        return Stop("failed", f"the model ended with finish {last.finish!r}")

    def _before_turn(self, state: _RunState) -> Stop | None:
        turns = self.log.count("turn_start")
        if turns >= state.task.max_turns:
            return Stop("budget_limited", f"turn cap of {state.task.max_turns} reached (L3)")
        exhausted = state.budget.exhausted_reason(self.ports.clock.now())
        if exhausted:
            return Stop("budget_limited", exhausted)
        # A job stopped at its runtime budget: the run may not buy more (seed 002 §19.2).
        spent = self._jobs.budget_spent() if self._jobs is not None else None
        if spent:
            return Stop("budget_limited", spent)
        return _from_goal(self._keeper.before_turn()) if self._keeper is not None else None

    # -- one turn ------------------------------------------------------------------------

    def _system_prompt(self) -> str | None:
        """The system prompt of the next request; a callable is asked anew for each one."""
        system = self.system if self.system is None or isinstance(self.system, str) \
            else self.system(self.ports)
        if self._keeper is None or self._keeper.goal is None:
            return system
        # Seed 002 §19.3: the goal is read from the goal service each turn, never from history.
        goal = goal_text(self._keeper.goal)
        return goal if system is None else f"{system}\n\n{goal}"

    async def _turn(self, state: _RunState) -> Stop | None:
        await self._compaction_done(state)
        number = self.log.count("turn_start") + 1
        turn_id = self._turn_id(number)
        self.log.append("turn_start", turn_id, turn=number)
        self._boundary("before_request", turn_id, "request")
        state.retry_log.turn_id = turn_id
        started = self.ports.clock.now()
        result = await self._request(state, turn_id)
        stop = await self._settle(state, turn_id, result)
        self.metrics.emit(
            {
                "kind": "turn",
                "runId": self.ports.run_id,
                "turnId": turn_id,
                "seconds": self.ports.clock.now() - started,
            }
        )
        reason = stop.state if stop is not None else "continue"
        self.log.append("turn_end", turn_id, reason=reason)
        # The queued auto-continue, carrying the goal revision and the epoch (seed 002 §19.3).
        self._boundary("turn_end", turn_id, "continue" if stop is None else "stop")
        return stop

    async def _settle(
        self, state: _RunState, turn_id: str, result: CompletionResult
    ) -> Stop | None:
        if result.outcome == "failed" or result.message is None:
            return failure_stop(result, state.budget, self.ports.clock.now())
        if result.rejected_tool_calls and _collects_training_data(self.log):
            return _cut_stop(result.rejected_tool_calls)
        if result.rejected_tool_calls:
            return self._reject_truncated(turn_id, result.message, result.rejected_tool_calls)
        if result.message.finish in WITHHELD_FINISHES:
            # Seed 002 §19.1 ②: a refused or filtered answer is no answer; whatever calls it
            # carries never run. Kept as text only, so _conclusion ends the run on its finish.
            self._commit(turn_id, result.message, ())
            return None
        entry = self._commit(turn_id, result.message, result.message.tool_calls)
        if not entry.calls:
            return None  # an answer: _conclusion decides how the run ends
        return await self._act(state, entry)

    def _commit(
        self,
        turn_id: str,
        message: AssistantMessage,
        calls: tuple[ToolCall, ...],
        *,
        rejected: bool = False,
    ) -> AssistantEntry:
        """Write the complete assistant message durably, before any of its tools runs (L1)."""
        self.log.append(
            "assistant",
            turn_id,
            attemptId=message.attempt_id,
            continuationOf=message.continuation_of,
            text=message.text,
            finish=message.finish,
            rejected=rejected,
            calls=calls_to_json(calls, self._secret_arguments),
        )
        return AssistantEntry(
            turn_id,
            message.attempt_id,
            message.text,
            message.finish,
            calls,
            rejected,
            message.continuation_of,
        )

    def _reject_truncated(
        self, turn_id: str, message: AssistantMessage, cut: tuple[ToolCall, ...]
    ) -> Stop | None:
        """S6: record the cut calls, answer each with a structured error; none runs (I7)."""
        entry = self._commit(turn_id, message, cut, rejected=True)
        for call in entry.calls:
            content = {"error": "ARGUMENTS_TRUNCATED", "message": TRUNCATED_ARGUMENTS}
            self._append_reply(ToolReply(turn_id, call.call_id, "error", content))
        return self._repair_cap()

    @property
    def _guards(self) -> GuardHistory:
        """The guards over the current session log (a reloaded log is read anew)."""
        log = self.log
        if self._guard_history is None or self._guard_history.log is not log:
            self._guard_history = GuardHistory(log)
        return self._guard_history

    def _repair_cap(self) -> Stop | None:
        repairs = self._guards.argument_repairs()
        if repairs <= self.limits.max_argument_repairs:
            return None
        reason = f"argument repair limit of {self.limits.max_argument_repairs} passed (L4)"
        return self._guard_stop("argument_repair", reason)

    # -- the request, and compaction (seed 000 §3.2; seed 002 §19.1, §19.3) -------------

    def _body(self, state: _RunState) -> dict[str, Any]:
        """The request, built from the trusted log as compaction left it for the model."""
        entries = compacted_entries(self.log, self.compactions)
        task = state.task
        if state.backup is not None and self._on_backup():
            task = replace(task, model=state.backup_model)
        marks = self.cache_breakpoints or state.task.cache_breakpoints
        return build_request(self.ports.dialect, task, entries,
                             system=self._system_prompt(), cache_breakpoints=marks)

    async def _complete(self, state: _RunState) -> CompletionResult:
        """One request to the model; the task's output ceiling lets a cut answer ask for more."""
        on_backup = state.backup is not None and self._on_backup()
        client = state.backup if state.backup is not None and on_backup else state.client
        self._handles.client = client
        return await client.complete(self._body(state), output_ceiling=state.task.output_ceiling,
                                     backup_waiting=state.backup is not None and not on_backup)

    async def _request(self, state: _RunState, turn_id: str) -> CompletionResult:
        """Send the turn's request; after a context overflow, compact and send it once more;
        when the model's route is down past its retries, send it to the backup model."""
        self._skip_open_route(state, turn_id)
        result = await self._complete(state)
        self._record_attempts(turn_id, result)
        compactor = state.compactor
        while is_overflow(result.error) and compactor.overflow_retries_left(turn_id):
            keep = recent_turns(self.log, self.compaction.keep_recent_turns)
            ticket = compactor.begin("context_overflow", turn_id, keep)
            if ticket is None or not compactor.commit(ticket, await compactor.summarise(ticket)):
                break  # nothing left to compact: the same input is never sent again
            result = await self._complete(state)
            self._record_attempts(turn_id, result)
        if self._switches(state, result):
            assert result.error is not None
            self._take_backup(state, turn_id, f"{result.stop_reason} (last error: "
                              f"{result.error.kind} {result.error.message})")
            result = await self._complete(state)
            self._record_attempts(turn_id, result)
        return result

    # -- the backup model (seed 002 §19.2: 切备用线路) ------------------------------------

    def _on_backup(self) -> bool:
        """Whether the request in hand goes to the backup model: a switch was recorded
        since the model's last answer. A restart keeps it, so the primary's retries are
        not spent again on the same request (seed 002 §19.2: 次数相乘); the next request
        after an answer tries the primary again, unless its breaker is open."""
        for record in reversed(self.log.records):
            if record.kind == "assistant":
                return False
            if record.kind == "route":
                return True
        return False

    def _skip_open_route(self, state: _RunState, turn_id: str) -> None:
        """While the primary's breaker is open, its cooldown is not waited for: the backup
        answers (a half-open probe goes to the primary once the cooldown has passed)."""
        if state.backup is None or self._on_backup() or state.breaker.state != "open":
            return
        self._take_backup(state, turn_id, "the circuit breaker is open on the primary model")

    def _switches(self, state: _RunState, result: CompletionResult) -> bool:
        """Whether a failed call goes on to the backup: only when the primary's route failed
        (5xx, 529, a stall, a reset: :func:`route_failure`), never after a client error, and
        only while the shared budget has room (the backup draws on the same one, S8)."""
        error = result.error
        if state.backup is None or result.outcome != "failed" or error is None \
                or self._on_backup():
            return False
        if not route_failure(error) and self.discipline.backup_only_on_route_failures:
            return False
        return not _budget_ran_out(result, error, state.budget, self.ports.clock.now())

    def _take_backup(self, state: _RunState, turn_id: str, reason: str) -> None:
        """Record the switch durably before the backup's first request goes out."""
        self.log.append("route", turn_id, model=state.backup_model, reason=reason)

    def _start_compaction(self, state: _RunState, turn_id: str) -> None:
        """Compact in the background while the turn's tools run, once the prompt fills up."""
        # The newest attempt that reported usage; older ones are not read (a long run's many).
        usage = next((u for u in reversed(self._attempts.values()) if u is not None), None)
        last = usage.input_tokens if usage is not None else None
        compactor = state.compactor
        if state.background is not None or not compactor.should_compact(
                last, state.task.context_window):
            return
        keep = recent_turns(self.log, self.compaction.keep_recent_turns)
        ticket = compactor.begin("threshold", turn_id, keep)
        if ticket is not None:
            state.background = asyncio.ensure_future(self._compact(compactor, ticket))

    @staticmethod
    async def _compact(compactor: Compactor, ticket: CompactionTicket) -> bool:
        return compactor.commit(ticket, await compactor.summarise(ticket))

    async def _compaction_done(self, state: _RunState) -> None:
        """The next request waits for a compaction under way, so it sends the result."""
        background, state.background = state.background, None
        if background is not None:
            await background

    def _after_compaction(self, ticket: CompactionTicket) -> None:
        """Hook: the goal is re-read from its durable record after compaction (seed 002 §19.3).

        "压缩前后都从 Goal 服务重新读取 objective、验收条件、当前阶段、预算和下一步". The task
        prompt is never compacted (user entries are kept whole), so the objective the
        model reads is always the one in the session log, never a summary's copy. A
        goal record with revisions re-reads and re-injects itself here.
        """
        self.metrics.emit({"kind": "compaction", "runId": self.ports.run_id,
                           "compactionId": ticket.compaction_id, "reason": ticket.reason,
                           "cleared": len(ticket.cleared)})
        if self._keeper is not None:
            self._keeper.after_compaction(ticket.turn_id)

    # -- tools (L1, L2) and guards (L3, L4) ----------------------------------------------

    async def _act(self, state: _RunState, entry: AssistantEntry) -> Stop | None:
        if self._guards.repetition_decision(self.limits) == "stop":
            self._answer_unrun(entry, "the same calls were asked for three turns in a row")
            return self._guard_stop("repetition", "identical tool calls kept repeating (L3)")
        if self._keeper is not None and any(c.runnable for c in entry.calls):
            self._boundary("before_tools", entry.turn_id, "tools")
            self._keeper.before_tools()
        self._start_compaction(state, entry.turn_id)
        cap = self._tool_call_cap(state.task)
        cut = cap is not None and sum(c.runnable for c in entry.calls) > cap.left
        replies = await self._run_calls(state, entry, cap)
        for reply in replies:
            self._append_reply(reply)
        await run_after_tool_hooks(state.runner.tools, state.task, replies, self._hook_context,
                                   slack=self.limits.hook_depth_slack)
        self._boundary("after_results", entry.turn_id, "guards")
        if state.runner.halted is not None:
            reason = f"the tool journal cannot be written: {state.runner.halted}"
            return Stop("infra_paused", reason, True)  # J6: no further side effect
        if cap is not None and cut:
            return Stop("budget_limited", cap.reason)
        return self._after_tools(entry)

    def _hook_context(self, call: ToolInvocation) -> ToolContext:
        """What a hook's run knows: it has no journal record, so its id is its call's."""
        ports = self.ports
        return ToolContext(call, call.call_id, ports.run_id, ports.incarnation, ports.clock,
                           env=cleaned_environment())

    def _tool_call_cap(self, task: Task) -> _ToolCallCap | None:
        """The calls this run may still start, counted from the durable journal, so a
        restart never buys more (seed 002 §19.2: 子预算只能消费父预算,不能自行续杯)."""
        cap = task.max_tool_calls
        if cap is None or not self.budget_policy.cap_tool_calls:
            return None
        used = self.journal.started_calls() - self._calls_before_this_incarnation
        return _ToolCallCap(cap, max(0, cap - used))

    async def _run_calls(self, state: _RunState, entry: AssistantEntry,
                         cap: _ToolCallCap | None = None) -> list[ToolReply]:
        """Run the runnable calls, in the model's order up to ``cap``; replies come back in
        the model's order (L2), a call past the cap answered without running."""
        invocations = _invocations(entry)
        waiting = self._waiting_for_approval(invocations)
        runnable = [c for c in invocations if c.call_id not in waiting]
        allowed = len(runnable) if cap is None else cap.left
        try:
            ran = iter([*await state.runner.run_batch(runnable[:allowed]),
                        *(not_started_reply(c, cap.reply) for c in runnable[allowed:]
                          if cap is not None)])
        except asyncio.CancelledError:
            # Seed 002 §19.5: on abort, calls that never started get a synthetic reply.
            self._patch_dangling(self.log, self.journal)
            raise
        return [
            (waiting[c.call_id] if c.call_id in waiting else next(ran)) if c.runnable
            else _invalid_arguments(entry.turn_id, c) for c in entry.calls
        ]

    def _waiting_for_approval(self, calls: list[ToolInvocation]) -> dict[str, ToolReply]:
        """The calls that name a path the goal protects, each answered without running."""
        keeper = self._keeper
        if keeper is None:
            return {}
        return {call.call_id: not_started_reply(call, f"not run: {reason}") for call in calls
                if (reason := keeper.needs_approval(call, reads_only=self._reads_only(call)))
                is not None}

    def _reads_only(self, call: ToolInvocation) -> bool:
        """Whether the tool ``call`` names says it changes nothing."""
        return reads_only(self.ports.tools.get(call.tool))

    def _after_tools(self, entry: AssistantEntry) -> Stop | None:
        stop = _from_goal(self._keeper.block_if_asked(_invocations(entry), self._reads_only)) \
            if self._keeper is not None else None
        stop = stop or self._repair_cap()
        if stop is not None:
            return stop
        errors = self._guards.fingerprint_decision(entry.turn_id, self.limits)
        if errors == "stop":
            reason = "the same error came back without new evidence (L3)"
            return self._guard_stop("error_fingerprint", reason)
        if errors == "remind":
            self._remind(entry.turn_id, "error_fingerprint", FINGERPRINT_REMINDER)
        elif self._guards.repetition_decision(self.limits) == "remind":
            self._remind(entry.turn_id, "repetition", REPETITION_REMINDER)
        return None

    def _resume_guards(self) -> Stop | None:
        """What the guards decided for the last turn, if a crash cut the turn short (L3).

        A guard ``stop`` stays a stop though its stop record was lost; a reminder
        whose user message was lost is written again; a turn cut before its
        guards ran is judged now. The guards are pure functions of the log, so
        this is the decision the dead incarnation made or was about to make;
        without it, a call that kept failing without new evidence runs again.
        """
        log = self.log
        starts = log.of_kind("turn_start")
        if not starts:
            return None
        turn_id = starts[-1].turn_id
        guards = [g for g in log.of_kind("guard") if g.turn_id == turn_id]
        if guards:
            return self._resume_guard(guards[-1])
        ends = [e for e in log.of_kind("turn_end") if e.turn_id == turn_id]
        end = TurnEndRecord.from_body(ends[-1].body) if ends else None
        if end is None or end.reason != "interrupted_before_restart":
            return None  # the turn ended normally: its guards ran and said "ok"
        entry = next((a for a in reversed(log.assistants()) if a.turn_id == turn_id), None)
        if entry is None or not entry.calls or entry.rejected:
            return None
        return self._after_tools(entry)

    def _resume_guard(self, guard: SessionRecord) -> Stop | None:
        log, fields = self.log, GuardRecord.from_body(guard.body)
        if fields.action == "stop":
            return Stop("failed", fields.reason)
        after = log.records[log.records.index(guard) + 1 :]
        if not any(r.kind == "user" for r in after):
            next_turn = self._turn_id(log.count("turn_start") + 1)
            log.append("user", next_turn, text=fields.reason, source="guard")
        return None

    def _unsettled_stop(self) -> Stop | None:
        """Truncation level 4 for a session collected as training data: a call a crash left
        without its result gets no placeholder (:meth:`_patch_dangling`), so the run stops
        here and says which calls a person must settle (seed 002 §19.1 ①: 工具结果未知 →
        停止并把原因暴露给用户)."""
        log = self.log
        if not _collects_training_data(log):
            return None
        dangling = _as_transcript(log.entries()).dangling()
        if not dangling:
            return None
        said = "; ".join(f"call {c.call_id} of {c.tool}: {self._unsettled_outcome(c)}"
                         for c in dangling)
        return Stop("blocked", f"{said}. The session is collected as training data, so no "
                    "placeholder reply stands in for a result: settle these calls and resume "
                    "(truncation level 4)")

    def _unsettled_outcome(self, call: ToolInvocation) -> str:
        execution = self.journal.find(call.turn_id, call.call_id)
        outcome = execution.outcome if execution is not None else None
        return _UNSETTLED_WORDS.get(outcome or "", "it was never recorded as started")

    def _answer_unrun(self, entry: AssistantEntry, why: str) -> None:
        for call in entry.calls:
            invocation = ToolInvocation(entry.turn_id, call.call_id, call.name, call.arguments)
            self._append_reply(not_started_reply(invocation, f"not run: {why}"))

    def _remind(self, turn_id: str, counter: str, text: str) -> None:
        """A reminder the next request carries (a different input, not a re-sample)."""
        self.log.append("guard", turn_id, counter=counter, action="remind", reason=text)
        next_turn = self._turn_id(self.log.count("turn_start") + 1)
        self.log.append("user", next_turn, text=text, source="guard")

    def _guard_stop(self, counter: str, reason: str) -> Stop:
        turn_id = self.log.records[-1].turn_id
        self.log.append("guard", turn_id, counter=counter, action="stop", reason=reason)
        return Stop("failed", reason)

    # -- records -------------------------------------------------------------------------

    def _append_reply(self, reply: ToolReply) -> None:
        execution = self._journal.find(*reply.key) if self._journal is not None else None
        self.log.append(
            "tool_reply",
            reply.turn_id,
            callId=reply.call_id,
            executionId=execution.execution_id if execution is not None else None,
            status=reply.status,
            # A tool's result may quote secrets too (an outbox lists what was sent): J3.
            content=redact(reply.content, self._marked_anywhere()),
            synthetic=reply.synthetic,
        )

    def _marked_anywhere(self) -> set[str]:
        return {name for names in self._secret_arguments.values() for name in names}

    def _record_attempts(self, turn_id: str, result: CompletionResult) -> None:
        """Each attempt once, failed ones included (L6); in memory first, then durably."""
        for attempt in result.attempts:
            self._attempts[attempt.attempt_id] = attempt.usage
        for attempt in result.attempts:
            self.log.append("attempt", turn_id, **_attempt_json(attempt))
            self.metrics.emit(
                {
                    "kind": "attempt",
                    "runId": self.ports.run_id,
                    "turnId": turn_id,
                    "attemptId": attempt.attempt_id,
                    "status": attempt.status,
                    "usage": usage_to_json(attempt.usage),
                    "latency": attempt.ended_at - attempt.started_at,
                }
            )

    def _turn_id(self, number: int) -> str:
        return turn_id_for(self.ports.seed, number)

    # -- the end -------------------------------------------------------------------------

    def _finish(self, stop: Stop) -> AgentOutcome:
        """Persist the stop record through the epoch check (L7), then report."""
        if self._log is not None and self._log.header is not None:
            try:
                self._write_stop(stop)
            except (StaleEpochError, StaleLeaseError):
                pass  # the run belongs to an epoch that is gone: its stop is not ours to write
            except DiskError as exc:
                # The trusted log does not say how the run ended: never report success.
                stop = Stop("infra_paused", f"{stop.reason}; stop record not written: {exc}", True)
        return self._outcome(stop)

    def _write_stop(self, stop: Stop) -> None:
        log = self.log
        turn_id = log.records[-1].turn_id if log.records else ""
        started = self._epoch if self._epoch is not None else log.epoch
        log.write_back(
            started,
            "stop",
            turn_id,
            stopState=stop.state,
            reason=stop.reason,
            infraFailure=stop.infra_failure,
            turns=log.count("turn_start"),
            epoch=log.epoch,
        )

    def _outcome_from_log(self) -> AgentOutcome:
        record = self.log.stop_record()
        assert record is not None
        stop = StopRecord.from_body(record.body)
        return self._outcome(Stop(stop.stop_state, stop.reason, stop.infra_failure))

    def _context_tokens(self, usages: list[Usage]) -> int | None:
        """The last request's input (L6); unknown when a crash lost its turn's attempt record.

        A turn whose request went out but whose attempt line never became durable
        leaves the size of the context it sent unknown; an older turn's is not it.
        """
        log = self._log
        starts = log.of_kind("turn_start") if log is not None else []
        if log is not None and starts and not any(
                r.kind == "attempt" and r.turn_id == starts[-1].turn_id for r in log.records):
            return None
        return usages[-1].input_tokens if usages else None

    def _outcome(self, stop: Stop) -> AgentOutcome:
        entries = self._log.entries() if self._log is not None else []
        ids = self._log.attempt_ids() if self._log is not None else []
        ids += [attempt_id for attempt_id in self._attempts if attempt_id not in ids]
        usages = [u for u in self._attempts.values() if u is not None]
        turns = self._log.count("turn_start") if self._log is not None else 0
        return AgentOutcome(
            stop_state=stop.state,
            reason=stop.reason,
            transcript=tuple(_message(e) for e in model_order(entries)),
            billed_usage=Usage.total(usages),
            context_tokens=self._context_tokens(usages),
            turns=turns,
            infra_failure=stop.infra_failure,
            attempt_ids=tuple(ids),
        )


# What a call a crash left without its reply is, by its journal outcome, for a person.
_UNSETTLED_WORDS: Final = {
    "interrupted_before_execution": "it never started",
    "unknown_after_restart": "its outcome is unknown after the restart",
    "returned": "it returned, but its result was lost with the crash",
}


def _collects_training_data(log: SessionLog) -> bool:
    """Whether the session's task said it is collected as training data (read from the log,
    so recovery, which runs before the task is given again, knows it too)."""
    header = log.header
    return header is not None and SessionHeader.from_body(header.body).training_data


def _cut_stop(cut: tuple[ToolCall, ...]) -> Stop:
    """Truncation level 4 for a session collected as training data: a call cut at the output
    limit that no raised limit saved gets no error reply standing in for it; the cut answer
    is not committed and the run stops with the reason (seed 002 §19.1 ①)."""
    names = ", ".join(sorted({c.name for c in cut}))
    return Stop("blocked", f"the answer was cut at the output limit inside a call of {names}; "
                "the session is collected as training data, so no error reply stands in for "
                "the cut call and the run stops (truncation level 4)")


def _rate_limits_in_a_row(log: SessionLog) -> int:
    """The 429s the log's last requests met in a row: a crash between them leaves them
    counted, so a restart never buys a fresh run of rate limits (S5).

    Two records tell it, and a crash may have cut either short: a ``retry`` line per 429
    retried, written before its wait, and the ``attempt`` lines a call writes as it ends,
    the last 429 (the one that reached the cap) among them. The larger count stands; an
    answer, or any other failure, ends the run.
    """
    retried, attempted = 0, 0
    retries_broken = attempts_broken = False
    for record in reversed(log.records):
        if record.kind == "assistant":
            break
        if record.kind == "attempt" and not attempts_broken:
            attempts_broken = not _rate_limited(record)
            attempted += not attempts_broken
        elif record.kind == "retry" and not retries_broken:
            event = decode_retry(record)
            if event.kind == "retry_scheduled":
                retries_broken = not retried_a_rate_limit(event.reason)
                retried += not retries_broken
    return max(retried, attempted)


def _rate_limited(attempt: SessionRecord) -> bool:
    error = attempt.body.get("error")
    if not error:
        return False
    return ProviderError(error["kind"], error["message"], error["status"], error["type"],
                         error["code"]).effective_status == 429


def _invocations(entry: AssistantEntry) -> list[ToolInvocation]:
    """The calls of ``entry`` whose arguments parsed, as the tool runner takes them."""
    return [ToolInvocation(entry.turn_id, c.call_id, c.name, c.arguments)
            for c in entry.calls if c.runnable]


def _from_goal(stop: GoalStop | None) -> Stop | None:
    return None if stop is None else Stop(stop.state, stop.reason, stop.infra_failure)


def _drop(background: asyncio.Future[bool] | None) -> None:
    """Cancel a compaction still under way; read a finished one's error so none goes unseen."""
    if background is None:
        return
    if background.done() and not background.cancelled():
        background.exception()
    background.cancel()


def _invalid_arguments(turn_id: str, call: ToolCall) -> ToolReply:
    content = {"error": "INVALID_ARGUMENTS", "message": f"{call.arguments_error}; not run"}
    return ToolReply(turn_id, call.call_id, "error", content)


def _as_transcript(entries: list[Entry]) -> Transcript:
    converted: list[UserMessage | AssistantTurn | ToolReply] = []
    for entry in entries:
        if isinstance(entry, UserEntry):
            converted.append(UserMessage(entry.text))
        elif isinstance(entry, ReplyEntry):
            converted.append(entry.reply)
        else:
            calls = tuple(
                ToolInvocation(entry.turn_id, c.call_id, c.name, c.arguments) for c in entry.calls
            )
            converted.append(AssistantTurn(entry.turn_id, calls, entry.text))
    return Transcript(tuple(converted))


def _message(entry: Ordered) -> TranscriptMessage:
    if isinstance(entry, UserEntry):
        return TranscriptMessage("user", entry.turn_id, entry.text)
    if isinstance(entry, ToolReply):
        return TranscriptMessage(
            "tool",
            entry.turn_id,
            reply_text(entry),
            call_id=entry.call_id,
            status=entry.status,
            synthetic=entry.synthetic,
        )
    calls = tuple(ToolCallView(c.call_id, c.name, dict(c.arguments)) for c in entry.calls)
    return TranscriptMessage(
        "assistant", entry.turn_id, entry.text, calls, attempt_id=entry.attempt_id
    )


def _attempt_json(attempt: AttemptRecord) -> dict[str, Any]:
    error = attempt.error
    return {
        "attemptId": attempt.attempt_id,
        "attemptKind": attempt.kind,
        "status": attempt.status,
        "usage": usage_to_json(attempt.usage),
        "startedAt": attempt.started_at,
        "endedAt": attempt.ended_at,
        "error": None
        if error is None
        else {
            "kind": error.kind,
            "status": error.status,
            "message": error.message,
            "type": error.error_type,
            "code": error.error_code,
        },
    }


def _task_json(task: Task) -> dict[str, Any]:
    return {
        "prompt": task.prompt,
        "model": task.model,
        "tools": [spec.name for spec in task.tools],
        "maxTurns": task.max_turns,
        "deadlineSeconds": task.deadline_seconds,
        "maxAttempts": task.max_attempts,
        "maxOutputTokens": task.max_output_tokens,
        **({"backupModel": task.backup_model} if task.backup_model is not None else {}),
        # Only when set: every other session's header keeps its bytes.
        **({"trainingData": True} if task.training_data else {}),
        **({"maxJobSeconds": task.max_job_seconds} if task.max_job_seconds is not None
           else {}),
        **({"maxJobs": task.max_jobs} if task.max_jobs is not None else {}),
        **({"maxJobOutputLines": task.max_job_output_lines}
           if task.max_job_output_lines is not None else {}),
    }


def _recovered(value: T | None) -> T:
    """What recovery made (the session log, the journal …): asked for only after it."""
    assert value is not None, "recover() first"
    return value
