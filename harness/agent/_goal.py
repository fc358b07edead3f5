"""The reference agent's goal discipline for long tasks (seed 002 §19.2-§19.3).

Used when the world offers a goal port (``AgentPorts.goals``); the loop calls
it at narrow hooks and is unchanged otherwise. What it does, and where each
rule comes from:

- **Two-step recovery** (§19.3 "恢复长任务分两步"): :meth:`GoalKeeper.start`
  first rebuilds the goal from the trusted log (the last ``goal`` or
  ``recovery`` record, never a summary), then takes the execution lease anew
  (the epoch goes up on every recovery) and re-reads the goal service: a
  revision the user bumped meanwhile is adopted and the queued auto-continue
  of the old revision or epoch is discarded.
- **Restart policy** (§19.3 table, "进程重启后"): ``continue`` (codex) resumes an
  active goal; ``pause`` (grok-build, dsh) keeps the goal but takes authority
  back: the goal is set ``paused`` and the run stops ``paused``.
- **Stale auto-continue** (§19.3 "已排队的自动续跑请求带着旧 revision,启动前发现不
  匹配就丢弃"): :meth:`before_turn` compares the queued continuation's revision
  and epoch with the service's before any turn starts.
- **Declared actions**: every turn and every tool batch is declared to the
  service with the epoch and goal it runs under.
- **Recovery records** (§19.3 "恢复记录要在状态完整的节点写入"): :meth:`boundary`
  at the five safe points — before an LLM request, before side-effecting tools,
  after results are logged, after compaction, at turn end — with the goal
  revision and the next action.
- **Completion** (§19.2 "complete 状态本身不是证据"): a final answer is not
  ``complete``; :meth:`conclude` asks the verifier. A pass becomes a
  :class:`CompletionProof` bound to goal id + revision, stored by
  compare-and-swap; a fail becomes a rework turn with the gaps; the same gap
  fingerprint again after a rework ends ``paused`` (NoProgressPaused); an
  unavailable verifier ends ``infra_paused``, never complete (no FailOpenAchieved).
- **Cancel** (§19.4 "goal: disarm 自动续跑"): :meth:`cancel` sets the goal
  ``cancelled`` at the service by compare-and-swap, a terminal status: no turn,
  verifier round or completion follows it, in this incarnation or after a restart.
- **The checks that prove the goal stay as they are** (§19.2 防止"把测试改绿" ④: 测试目录可
  设为敏感路径,高风险任务需人工批准): a call naming a path the goal protects is not
  run (:meth:`needs_approval`), and the goal is set ``blocked`` (§19.2: blocked, 缺少输入/
  权限/外部条件, 否, 条件变化后再评估) until the user approves: :meth:`block_if_asked`,
  a function of the logged calls, so a restart cut between the two decides the same.
- **The run's stop is the goal's status** (§19.2's stop table: 不要把"本轮停止"写成"目标完成",
  也不要用一个 error 覆盖所有可恢复状态): a run that stops ``usage_limited``,
  ``infra_paused``, ``budget_limited``, ``blocked`` or ``paused`` with the goal still
  active writes that status onto it (:meth:`park`), before the stop is logged, so the next
  start (or an idle auto-continue) waits for the limit, the infrastructure or the user.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harness.agent._lease import ExecutionLease
from harness.agent._log_records import GoalRecord, RecoveryRecord, VerificationRecord
from harness.agent._session_log import SessionLog, SessionView
from harness.ports import (
    TERMINAL_GOAL_STATUSES,
    WAITING_GOAL_STATUSES,
    Clock,
    CompletionProof,
    Goal,
    GoalAction,
    GoalPort,
    GoalStatus,
    Lease,
    StopState,
    ToolInvocation,
    Verification,
    named_path,
)

#: The safe boundaries of seed 002 §19.3 at which a recovery record is written.
Boundary = Literal["before_request", "before_tools", "after_results", "after_compaction",
                   "turn_end"]


@dataclass(frozen=True)
class GoalStop:
    """A stop the goal discipline decides (the loop turns it into its own ``Stop``)."""

    state: StopState
    reason: str
    infra_failure: bool = False


def gap_fingerprint(gaps: tuple[str, ...]) -> str:
    """The same gaps in any order give the same fingerprint (seed 002 §19.2 gap 指纹).

    >>> gap_fingerprint(("b", "a")) == gap_fingerprint(("a", "b"))
    True
    """
    canonical = json.dumps(sorted(g.strip().lower() for g in gaps), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def goal_text(goal: Goal) -> str:
    """The goal as each request carries it, read afresh from the service every turn."""
    criteria = "\n".join(f"- {c}" for c in goal.acceptance)
    return (f"Goal {goal.goal_id} (revision {goal.revision}): {goal.objective}\n"
            f"Acceptance criteria:\n{criteria}")


class GoalKeeper:
    """The goal, lease and completion proof of one incarnation; see the module docstring."""

    def __init__(self, port: GoalPort, log: SessionLog, clock: Clock, incarnation: int,
                 next_turn_id: Callable[[], str], *, cap_rounds: bool = True,
                 keep_protected: bool = True) -> None:
        self.port = port
        self.cap_rounds = cap_rounds  # off only to reproduce the uncapped-rounds bug
        self.keep_protected = keep_protected  # off only to reproduce tests "made green"
        self.log = log
        self.clock = clock
        self.incarnation = incarnation
        self._next_turn_id = next_turn_id
        self.lease = ExecutionLease(0, incarnation, "goal_service")
        # Until when the lease holds (virtual time), and for how long a renewal extends it.
        self._lease_until = 0.0
        self._lease_seconds = 0.0
        self.goal: Goal | None = None
        # The tokens of the attempts read so far: asked every turn, so each is read once.
        self._spent: tuple[SessionView | None, int, int] = (None, 0, 0)

    # -- recovery: state from the log, authority anew ------------------------------------
    def start(self, cancelled: str | None = None) -> GoalStop | None:
        """Take the lease, adopt the service's goal; ``cancelled``: a goal cancel accepted
        before the lease was held (before a restart, or as this process started)."""
        logged = self._logged_goal()
        taken = self._take_lease()
        self.log.append("lease", self._last_turn(), epoch=taken.epoch, holder=taken.holder,
                        tookOver=taken.took_over)
        current = self.port.read()
        self._adopt(current, logged)
        if cancelled is not None:
            return self.cancel(cancelled)
        if current.status == "cancelled":
            return GoalStop("cancelled", "the goal was cancelled; a cancelled goal is never "
                            "resumed (seed 002 §19.4)")
        if current.status == "complete":
            return GoalStop("complete", f"goal {current.goal_id} revision {current.revision} "
                            "is complete with its proof")
        if current.status != "active":
            return GoalStop(_stop_of(current.status), f"the goal is {current.status}; it "
                            "resumes only when the user resumes it (seed 002 §19.2)",
                            current.status == "infra_paused")
        if taken.took_over is not None and current.restart_policy == "pause":
            return self._pause(f"restart took execution authority back (restart policy "
                               f"pause, epoch {taken.took_over} -> {taken.epoch}); the goal "
                               "stays active until the user resumes it (seed 002 §19.3)")
        return None

    def _take_lease(self) -> Lease:
        """Acquire the lease (a new epoch) and note until when it holds unless renewed."""
        taken = self.port.acquire()
        self.lease = ExecutionLease(taken.epoch, taken.holder, "goal_service")
        self._lease_seconds = taken.expires_at - self.clock.now()
        self._lease_until = taken.expires_at
        if self._lease_seconds <= 0:
            # A port that states no end time in the future: there is nothing to renew
            # against, and taking the lease again before every action would only churn epochs.
            self._lease_seconds = self._lease_until = math.inf
        return taken

    def _hold_lease(self) -> None:
        """Take the lease anew when it lapsed, before acting again (seed 002 §19.3).

        "推荐单独保存一份带过期时间的执行授权": authority has an end time, and each declared
        turn or tool batch renews it. A lease that ran out while this process waited (a
        long tool call, a long Retry-After) is no authority any more: another runner may
        hold the goal now. So the agent acquires again (a new epoch, which voids work begun
        under the old one), re-reads the goal, and only then declares its next action.
        """
        if self.clock.now() < self._lease_until:
            return
        lapsed = self.lease.epoch
        taken = self._take_lease()
        self.log.append("lease", self._last_turn(), epoch=taken.epoch, holder=taken.holder,
                        tookOver=taken.took_over, lapsed=lapsed)
        current = self.port.read()
        if current.identity() != self._goal().identity():
            self._adopt(current, self.goal)

    def _declare(self, goal: Goal, action: GoalAction) -> None:
        """Declare the next action under a lease that holds, which renews it."""
        self._hold_lease()
        self.port.declare(self.lease.epoch, goal, action)
        self._lease_until = self.clock.now() + self._lease_seconds

    def _adopt(self, current: Goal, logged: Goal | None) -> None:
        """Take the service's revision; a newer one than the log's voids the queued work."""
        self.goal = current
        if logged is not None and logged.identity() == current.identity():
            return
        source = "service" if logged is None else "user_edit"
        self.log.append("goal", self._last_turn(), goal=current.to_json(), source=source,
                        epoch=self.lease.epoch)
        if logged is not None:
            self.log.append("user", self._next_turn_id(), source="goal",
                            text=f"The goal was edited.\n{goal_text(current)}")

    def _logged_goal(self) -> Goal | None:
        for record in reversed(self.log.records):
            if record.kind == "goal":
                return Goal.from_json(dict(GoalRecord.from_body(record.body).goal))
            if record.kind == "recovery":
                return Goal.from_json(dict(RecoveryRecord.from_body(record.body).goal))
        return None

    # -- before each turn and tool batch ---------------------------------------------------
    def before_turn(self) -> GoalStop | None:
        """Check the queued auto-continue against the service, then declare the turn."""
        self._hold_lease()
        goal = self._goal()
        current = self.port.read()
        queued = self._queued()
        stale = queued is not None and (queued.goal["revision"] != current.revision
                                        or queued.epoch != self.lease.epoch)
        if stale and queued is not None:
            self.log.append("goal", self._last_turn(), goal=current.to_json(),
                            source="continuation_discarded", epoch=self.lease.epoch,
                            discarded={"revision": queued.goal["revision"],
                                       "epoch": queued.epoch})
        if current.revision != goal.revision:
            self._adopt(current, goal)
        if current.status != "active":
            return GoalStop(_stop_of(current.status), f"the goal is {current.status}")
        spent = self._over_budget(current)
        if spent:
            return self._set(current, "budget_limited", spent)
        self._declare(current, "turn")
        return None

    def before_tools(self) -> None:
        self._declare(self._goal(), "tools")

    def _queued(self) -> RecoveryRecord | None:
        """The auto-continue the last turn queued, if nothing else came after it."""
        for record in reversed(self.log.records):
            recovery = RecoveryRecord.from_body(record.body) if record.kind == "recovery" else None
            if recovery is not None and recovery.boundary == "turn_end":
                return recovery if recovery.next_action == "continue" else None
            if record.kind in ("turn_start", "goal"):
                return None
        return None

    def cancel(self, reason: str) -> GoalStop:
        """Set the goal ``cancelled`` (once); the run then stops ``cancelled``.

        Needs the lease (:meth:`start` first); a goal already cancelled is left alone,
        so a repeated or replayed cancel changes nothing.
        """
        current = self.port.read()
        if current.status not in TERMINAL_GOAL_STATUSES:
            return self._set(current, "cancelled", reason)
        return GoalStop(_stop_of(current.status), f"the goal is {current.status}")

    def _over_budget(self, goal: Goal) -> str | None:
        budget = goal.budget
        tokens = self._tokens_spent()
        if budget.tokens is not None and tokens >= budget.tokens:
            return f"the goal's token budget of {budget.tokens} is spent ({tokens} used)"
        if budget.seconds is not None and self.clock.now() >= budget.seconds:
            return f"the goal's time budget of {budget.seconds:g} s is spent"
        return None

    def _tokens_spent(self) -> int:
        """Input and output tokens of every attempt the session log records."""
        view, read, tokens = self._spent
        if view is not self.log.view:  # a reloaded log: read from its start
            view, read, tokens = self.log.view, 0, 0
        for attempt in view.attempts[read:]:
            if attempt.usage is not None:
                tokens += attempt.usage.input_tokens + attempt.usage.output_tokens
        self._spent = (view, len(view.attempts), tokens)
        return tokens

    # -- the checks that prove the goal ---------------------------------------------------
    def needs_approval(self, call: ToolInvocation, *, reads_only: bool = False) -> str | None:
        """Why ``call`` may not run without the user's approval: it names a path the goal
        protects; ``None`` when it may run.

        Reading a protected file needs no approval: a tool that says it changes nothing
        (``reads_only``, :func:`harness.ports.reads_only`) may name one. A tool that says
        nothing may change something, so its call waits.
        """
        goal = self._goal()
        path = named_path(call.arguments)
        pattern = None if reads_only or not self.keep_protected else goal.protects(path)
        if pattern is None:
            return None
        return (f"{path} holds the checks that prove goal {goal.goal_id} (protected: "
                f"{pattern}); changing it needs the user's approval, and the goal is blocked "
                "until they give it (seed 002 §19.2, 防止\"把测试改绿\")")

    def block_if_asked(self, calls: Iterable[ToolInvocation],
                       reads_only: Callable[[ToolInvocation], bool]) -> GoalStop | None:
        """Set the goal ``blocked`` when the model asked to change a protected path."""
        reasons = [reason for call in calls
                   if (reason := self.needs_approval(call, reads_only=reads_only(call)))]
        if not reasons:
            return None
        return self._set(self._goal(), "blocked", reasons[0])

    # -- the stop ------------------------------------------------------------------------
    def park(self, state: StopState, reason: str) -> None:
        """Write the run's stop onto a goal it leaves active, when the stop waits for
        something to change; a stop the goal discipline decided was written already."""
        if self.goal is None or self.lease.epoch == 0 or state not in WAITING_GOAL_STATUSES:
            return
        current = self.port.read()
        if current.status == "active":
            self._set(current, state, reason)

    # -- recovery records ---------------------------------------------------------------
    def boundary(self, boundary: Boundary, turn_id: str, next_action: str) -> None:
        """Write a recovery record at a safe boundary, straight from the trusted records."""
        verification = self.log.last("verification")
        last = None if verification is None else VerificationRecord.from_body(verification.body)
        self.log.append(
            "recovery", turn_id, boundary=boundary, nextAction=next_action,
            goal=self._goal().to_json(), epoch=self.lease.epoch,
            turns=self.log.count("turn_start"),
            lastVerification=None if last is None else {
                "round": last.round, "outcome": last.outcome, "fingerprint": last.fingerprint})

    def after_compaction(self, turn_id: str) -> None:
        """Re-read the goal from the service after a compaction, then write the boundary.

        Seed 002 §19.3: "压缩前后都从 Goal 服务重新读取 objective、验收条件 …; 摘要只引用
        goalRevision" — the summary never carries the goal; a revision the user bumped
        while the compaction ran is adopted here.
        """
        goal = self._goal()
        current = self.port.read()
        if current.identity() != goal.identity():
            self._adopt(current, goal)
        self.boundary("after_compaction", turn_id, "request")

    # -- completion ----------------------------------------------------------------------
    def conclude(self) -> GoalStop | None:
        """The model says it is done: verify, then complete with a proof, rework, or pause."""
        goal = self._goal()
        current = self.port.read()
        if current.revision != goal.revision:
            self._adopt(current, goal)
            return None  # the answer was for a goal that no longer stands
        spent = self._rounds_spent(current)
        if spent:  # rounds spent before a restart stay spent
            return self._set(current, "budget_limited", spent)
        verification = self.port.verify(current, self.lease.epoch)
        fingerprint = gap_fingerprint(verification.gaps)
        self._record(verification, fingerprint)
        if verification.outcome == "unavailable":
            return self._set(current, "infra_paused", "the verifier is unavailable: the goal "
                             "is not complete without it (seed 002 §19.2, no fail-open)", True)
        if verification.outcome == "fail":
            return self._rework(current, verification, fingerprint)
        return self._complete(current, verification)

    def _record(self, v: Verification, fingerprint: str) -> None:
        self.log.append("verification", self._last_turn(), goalId=v.goal_id, revision=v.revision,
                        round=v.round, outcome=v.outcome, gaps=list(v.gaps),
                        fingerprint=fingerprint, judge=v.judge, epoch=self.lease.epoch)

    def _rework(self, goal: Goal, v: Verification, fingerprint: str) -> GoalStop | None:
        if self._seen_after_rework(goal.revision, fingerprint):
            return self._pause(f"no progress: the verifier named the same gaps again after a "
                               f"rework ({'; '.join(v.gaps)}) (seed 002 §19.2 NoProgressPaused)")
        spent = self._rounds_spent(goal)
        if spent:
            return self._set(goal, "budget_limited", spent)
        gaps = "\n".join(f"- {gap}" for gap in v.gaps)
        self.log.append("user", self._next_turn_id(), source="verifier",
                        text=f"Verification failed (round {v.round}). Gaps:\n{gaps}")
        return None

    def _seen_after_rework(self, revision: int, fingerprint: str) -> bool:
        """Whether an earlier round of this revision had these gaps, with a turn since."""
        records = self.log.records
        for index, record in enumerate(records[:-1]):
            seen = VerificationRecord.from_body(record.body) \
                if record.kind == "verification" else None
            if seen is not None and seen.revision == revision \
                    and seen.fingerprint == fingerprint \
                    and any(r.kind == "turn_start" for r in records[index + 1:]):
                return True
        return False

    def _rounds_spent(self, goal: Goal) -> str | None:
        """Why no further verifier round may start: the goal's round budget is used up."""
        budget, used = goal.budget.rounds, self._rounds_used()
        if not self.cap_rounds or budget is None or used < budget:
            return None
        return (f"the goal's budget of {budget} verifier round(s) is spent without a pass "
                "(seed 002 §19.3 round budgets)")

    def _rounds_used(self) -> int:
        """Verifier rounds so far; one asked again after a restart, no turn between, is one."""
        used, turn_since = 0, True
        for record in self.log.records:
            if record.kind == "turn_start":
                turn_since = True
            elif record.kind == "verification" and turn_since:
                used, turn_since = used + 1, False
        return used

    def _complete(self, goal: Goal, v: Verification) -> GoalStop | None:
        proof = CompletionProof.from_verification(v)
        self._declare(goal, "complete")
        answer = self.port.complete(self.lease.epoch, proof)
        if not answer.ok and answer.goal.revision == goal.revision:
            # The revision stands, so the lease does not: another epoch holds the authority.
            return GoalStop("paused", f"the goal service refused the completion: "
                            f"{answer.reason}; this incarnation no longer holds the lease")
        if not answer.ok:
            self._adopt(answer.goal, goal)  # edited since: the proof no longer stands
            return None
        self.log.append("goal", self._last_turn(), goal=answer.goal.to_json(), source="complete",
                        epoch=self.lease.epoch, proof=_proof_json(proof))
        return GoalStop("complete", f"verified: proof for goal {goal.goal_id} revision "
                        f"{goal.revision} (round {v.round}, {v.judge_kind} {v.judge})")

    # -- helpers ---------------------------------------------------------------------------
    def _pause(self, reason: str) -> GoalStop:
        return self._set(self._goal(), "paused", reason)

    def _set(self, goal: Goal, status: GoalStatus, reason: str, infra: bool = False) -> GoalStop:
        self._declare(goal, "status")
        self.port.set_status(self.lease.epoch, goal.revision, status, reason)
        return GoalStop(_stop_of(status), reason, infra)

    def _goal(self) -> Goal:
        assert self.goal is not None, "start() first"
        return self.goal

    def _last_turn(self) -> str:
        return self.log.records[-1].turn_id if self.log.records else ""


def _stop_of(status: GoalStatus) -> StopState:
    return "paused" if status == "active" else status


def _proof_json(proof: CompletionProof) -> dict[str, Any]:
    return {
        "goalId": proof.goal_id, "revision": proof.revision, "round": proof.verification_round,
        "checks": [{"command": c.command, "exitCode": c.exit_code, "output": c.output_ref}
                   for c in proof.checks],
        "criteria": [{"criterion": c.criterion, "verdict": c.verdict, "evidence": c.evidence}
                     for c in proof.criteria],
        "judge": {"kind": proof.judge_kind, "name": proof.judge},
    }
