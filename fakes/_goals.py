"""The world's goal service: the durable goal, the execution lease, the verifier (seed 002 §19.3).

It lives in the world, like codex's state DB or the "unique execution lease
record" the seed asks a multi-process service to keep ("若自建多进程服务,还需要
数据库 CAS 或唯一的执行授权记录"), so it survives every crash of the agent. The
user is scripted too: an edit at a point in virtual time bumps the revision
(applied at the first world interaction at or after that time, so its place
among requests and tool calls is well defined).

Every call is written to :attr:`GoalService.events` with the world's position
(requests and tool invocations so far): the checkers judge from it that no
action ran under a stale epoch or revision (I5) and that a ``complete`` rests on
a verifier pass for the final revision.

Example::

    service = GoalService(goal, ScriptedVerifier((VerifierRule("pass"),)), clock=clock,
                          incarnations=lives, applied=dict, position=lambda: (0, 0))
    port = service.port(incarnation=1)
    lease = port.acquire()
    port.declare(lease.epoch, port.read(), "turn")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from fakes._crashdisk import Incarnations
from fakes._verifier import ScriptedVerifier
from harness.ports import (
    Clock,
    CompletionProof,
    Goal,
    GoalAction,
    GoalAnswer,
    GoalEventKind,
    GoalStatus,
    Lease,
    Verification,
)
from harness.trace import GoalEventRecord, ProofRecord, goal_identity_json

#: The user's own incarnation number in the event log (the agent's start at 1).
USER = 0
LEASE_SECONDS = 600.0


@dataclass(frozen=True)
class GoalEdit:
    """A scripted user edit: at virtual time ``at``, a new objective and/or criteria."""

    at: float
    objective: str | None = None
    acceptance: tuple[str, ...] | None = None


class GoalService:
    """The goal, its revisions, the lease and the verifier; see the module docstring."""

    def __init__(self, goal: Goal, verifier: ScriptedVerifier, *, clock: Clock,
                 incarnations: Incarnations, applied: Callable[[], Mapping[str, int]],
                 position: Callable[[], tuple[int, int]], edits: tuple[GoalEdit, ...] = (),
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self.revisions: list[Goal] = [replace(goal, revision=1, status="active")]
        self.status: GoalStatus = "active"
        self.lease: Lease | None = None
        # The proof the goal stands complete on, as the trace keeps it (and logs it).
        self.proof: ProofRecord | None = None
        self.events: list[GoalEventRecord] = []
        self.used = False  # an agent called the service at least once
        self._verifier = verifier
        self._clock = clock
        self._incarnations = incarnations
        self._applied = applied
        self._position = position
        self._edits = sorted(edits, key=lambda e: e.at)
        self._rounds: dict[int, int] = {}
        self._lease_seconds = lease_seconds
        self._log("created", USER)

    @property
    def goal(self) -> Goal:
        return replace(self.revisions[-1], status=self.status)

    def port(self, incarnation: int) -> GoalServicePort:
        """The service as ``incarnation`` of the agent reaches it."""
        return GoalServicePort(self, incarnation)

    def tick(self) -> None:
        """Apply every user edit that is due (at or before now)."""
        while self._edits and self._edits[0].at <= self._clock.now():
            edit = self._edits.pop(0)
            last = self.revisions[-1]
            self.revisions.append(replace(
                last, revision=last.revision + 1,
                objective=edit.objective if edit.objective is not None else last.objective,
                acceptance=edit.acceptance if edit.acceptance is not None else last.acceptance))
            # Seed 002 §19.2: "目标被编辑后 revision 改变,旧完成依据自动失效"; a cancelled
            # goal stays cancelled (§19.4: it is never woken again).
            self.proof = None
            self.status = "cancelled" if self.status == "cancelled" else "active"
            self._log("edit", USER)

    # -- what an incarnation may do ------------------------------------------------
    def enter(self, incarnation: int, what: str) -> None:
        self._incarnations.check(incarnation, f"goal service: {what}")
        self.used = True
        self.tick()

    def acquire(self, incarnation: int) -> Lease:
        old = self.lease
        goal = self.goal
        self.lease = Lease(1 if old is None else old.epoch + 1, incarnation, goal.goal_id,
                           goal.revision, self._clock.now() + self._lease_seconds,
                           None if old is None else old.epoch)
        self._log("acquire", incarnation)
        return self.lease

    def declare(self, incarnation: int, epoch: int, goal: Goal, action: GoalAction) -> None:
        lease = self.lease
        # A declared action renews the holder's lease, unless it already lapsed: authority
        # that ran out is taken again with acquire (a new epoch), never revived.
        if lease is not None and lease.epoch == epoch and lease.holder == incarnation \
                and self._clock.now() < lease.expires_at:
            self.lease = replace(lease, expires_at=self._clock.now() + self._lease_seconds)
        self._log("declare", incarnation, action=action, declared=goal, declared_epoch=epoch)

    def verify(self, incarnation: int, goal: Goal) -> Verification:
        round_ = self._rounds[goal.revision] = self._rounds.get(goal.revision, 0) + 1
        verdict = self._verifier.judge_goal(goal, round_, self._applied())
        self._log("verify", incarnation, declared=goal, verification=verdict)
        return verdict

    def complete(self, incarnation: int, epoch: int, proof: CompletionProof) -> GoalAnswer:
        refusal = self._refusal(incarnation, epoch, proof.revision)
        # What the agent sent, as the trace keeps it: its checks' and criteria's verdicts,
        # without the references to their evidence.
        received = ProofRecord.of(proof)
        if refusal is None:
            self.status, self.proof = "complete", received
        self._log("complete", incarnation, declared_epoch=epoch, proof=received,
                  ok=refusal is None, reason=refusal or "")
        return GoalAnswer(refusal is None, self.goal, refusal or "")

    def set_status(self, incarnation: int, epoch: int, revision: int, status: GoalStatus,
                   reason: str) -> GoalAnswer:
        refusal = self._refusal(incarnation, epoch, revision)
        if refusal is None:
            self.status = status
        self._log("status", incarnation, declared_epoch=epoch, ok=refusal is None,
                  reason=refusal or reason)
        return GoalAnswer(refusal is None, self.goal, refusal or "")

    def _refusal(self, incarnation: int, epoch: int, revision: int) -> str | None:
        """Why a compare-and-swap is refused: a cancelled goal, a stale revision, a lease not
        held."""
        lease, current = self.lease, self.revisions[-1].revision
        if self.status == "cancelled":
            return "the goal is cancelled: nothing changes it any more (seed 002 §19.4)"
        if revision != current:
            return f"revision {revision} is stale: the goal is at revision {current}"
        if lease is None or lease.epoch != epoch or lease.holder != incarnation:
            held = "no lease" if lease is None else f"epoch {lease.epoch} (incarnation " \
                f"{lease.holder})"
            return f"epoch {epoch} does not hold the lease: the service holds {held}"
        if self._clock.now() >= lease.expires_at:
            return (f"epoch {epoch}'s lease expired at {lease.expires_at:g}s: acquire it again "
                    "(seed 002 §19.3)")
        return None

    def _log(self, kind: GoalEventKind, incarnation: int, *, declared: Goal | None = None,
             verification: Verification | None = None, proof: ProofRecord | None = None,
             **fields: object) -> None:
        # Kept as the trace keeps it: the goals the agent named as their identity's JSON,
        # a verifier round as its verdict and gaps.
        requests, invocations = self._position()
        lease = self.lease
        self.events.append(GoalEventRecord(
            len(self.events) + 1, kind, incarnation, self._clock.now(), requests, invocations,
            self.revisions[-1].revision, lease.epoch if lease else 0,
            lease.holder if lease else 0, self.status,
            declared=None if declared is None else goal_identity_json(declared),
            declared_revision=None if declared is None else declared.revision,
            verdict=None if verification is None else verification.outcome,
            gaps=() if verification is None else verification.gaps,
            proof=proof,
            **fields))  # type: ignore[arg-type]


class GoalServicePort:
    """:class:`harness.ports.GoalPort` for one incarnation: a dead one is refused."""

    def __init__(self, service: GoalService, incarnation: int) -> None:
        self._service = service
        self._incarnation = incarnation

    def read(self) -> Goal:
        self._service.enter(self._incarnation, "read")
        return self._service.goal

    def current_lease(self) -> Lease | None:
        self._service.enter(self._incarnation, "current_lease")
        return self._service.lease

    def acquire(self) -> Lease:
        self._service.enter(self._incarnation, "acquire")
        return self._service.acquire(self._incarnation)

    def declare(self, epoch: int, goal: Goal, action: GoalAction) -> None:
        self._service.enter(self._incarnation, f"declare {action}")
        self._service.declare(self._incarnation, epoch, goal, action)

    def verify(self, goal: Goal, epoch: int) -> Verification:  # noqa: ARG002 - judged by goal
        self._service.enter(self._incarnation, "verify")
        return self._service.verify(self._incarnation, goal)

    def complete(self, epoch: int, proof: CompletionProof) -> GoalAnswer:
        self._service.enter(self._incarnation, "complete")
        return self._service.complete(self._incarnation, epoch, proof)

    def set_status(self, epoch: int, revision: int, status: GoalStatus, reason: str) -> GoalAnswer:
        self._service.enter(self._incarnation, f"status {status}")
        return self._service.set_status(self._incarnation, epoch, revision, status, reason)
