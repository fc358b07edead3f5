"""The goal port: a long task's goal, its execution lease and its verifier (seed 002 §19.2-§19.3).

Optional for an agent (``AgentPorts.goals`` is ``None`` when a scenario declares
no goal); an agent that never uses it is judged ``unknown`` on goals, not failed.
The world's goal service implements it (:class:`fakes.GoalService`); the
reference agent (:mod:`harness.agent._goal`) uses it. Both sides import these
types from here, never each other.

- :class:`Goal`: id, revision, objective, acceptance criteria, budget and the
  restart policy. The user edits it (the revision goes up); the agent changes
  only its status, by compare-and-swap on the revision (dsh's GoalRef CAS).
  ``cancelled`` (a goal cancel, seed 002 §19.4) is terminal: no status change or
  completion follows it.
- :class:`Lease`: the execution lease. Every :meth:`GoalPort.acquire` takes it
  with an epoch one higher; authority from an older epoch is void ("恢复后只接受
  新版本号,旧进程的监视任务和自动续跑请求全部作废").
- :meth:`GoalPort.declare`: the agent names the epoch and goal it is about to
  act under, so the world can judge that no action ran under a stale one.
- :class:`Verification` and :class:`CompletionProof`: what the verifier found,
  and the proof a ``complete`` is bound to (goal id + revision, checks run with
  their exit codes, a verdict per criterion, who judged).

Example::

    lease = ports.goals.acquire()
    goal = ports.goals.read()
    ports.goals.declare(lease.epoch, goal, "turn")
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, Protocol, get_args

GoalStatus = Literal["active", "complete", "paused", "blocked", "infra_paused",
                     "usage_limited", "budget_limited", "cancelled"]
#: Statuses nothing leaves: no status change or completion follows them (seed 002 §19.4:
#: a cancelled goal is never woken again).
TERMINAL_GOAL_STATUSES: tuple[GoalStatus, ...] = ("complete", "cancelled")
#: The statuses of seed 002 §19.2's stop table that leave a goal unfinished and wait for
#: something to change (the user, the infrastructure, the account's limit, the budget):
#: a run that stops so writes it onto the goal, or the next start takes it for active.
WAITING_GOAL_STATUSES: tuple[GoalStatus, ...] = ("paused", "blocked", "infra_paused",
                                                 "usage_limited", "budget_limited")
#: codex resumes an active goal after a restart; grok-build and dsh take authority back
#: and wait for the user (seed 002 §19.3, "进程重启后").
RestartPolicy = Literal["continue", "pause"]
RESTART_POLICIES: tuple[RestartPolicy, ...] = get_args(RestartPolicy)
VerifierOutcome = Literal["pass", "fail", "unavailable"]
VERIFIER_OUTCOMES: tuple[VerifierOutcome, ...] = get_args(VerifierOutcome)
CriterionJudgement = Literal["pass", "waived", "fail"]
JudgeKind = Literal["rule", "agent", "human"]
#: What an agent declares it is about to do under a lease.
GoalAction = Literal["turn", "tools", "complete", "status"]
#: What one call of the goal service (or a user's edit) did, as its event log names it.
GoalEventKind = Literal["created", "edit", "acquire", "declare", "verify", "complete", "status"]


@dataclass(frozen=True)
class GoalBudget:
    """The goal's own budget (seed 002 §19.2 GoalBudget; §19.3 "token/time/cost/round
    budgets"): tokens, virtual seconds and verifier rounds."""

    tokens: int | None = None
    seconds: float | None = None
    rounds: int | None = None


@dataclass(frozen=True)
class Goal:
    """One revision of a goal, as the goal service holds it."""

    goal_id: str
    revision: int
    objective: str
    acceptance: tuple[str, ...]
    budget: GoalBudget = GoalBudget()
    restart_policy: RestartPolicy = "continue"
    status: GoalStatus = "active"
    #: Paths (shell patterns, ``*`` crossing ``/``) holding the checks that prove the goal:
    #: changing one needs the user's approval (seed 002 §19.2 防止"把测试改绿" ④).
    protected: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        """The fields that must be the same across restarts and compactions (I5).

        ``protected`` is named only when the goal protects something, so a goal without
        it reads as it always did.

        >>> Goal("g", 2, "ship", ("tests pass",)).identity()["revision"]
        2
        """
        identity: dict[str, Any] = {
            "goalId": self.goal_id,
            "revision": self.revision,
            "objective": self.objective,
            "acceptance": list(self.acceptance),
            "budget": {"tokens": self.budget.tokens, "seconds": self.budget.seconds,
                       "rounds": self.budget.rounds},
            "restartPolicy": self.restart_policy,
        }
        if self.protected:
            identity["protected"] = list(self.protected)
        return identity

    def protects(self, path: str | None) -> str | None:
        """The pattern of :attr:`protected` that ``path`` matches, or ``None``.

        >>> Goal("g", 1, "fix login", ("tests pass",), protected=("tests/*",)).protects(
        ...     "tests/unit/test_login.py")
        'tests/*'
        """
        return protecting_pattern(path, self.protected)

    def to_json(self) -> dict[str, Any]:
        return {**self.identity(), "status": self.status}

    @classmethod
    def from_json(cls, fields: dict[str, Any]) -> Goal:
        budget = fields["budget"]
        return cls(str(fields["goalId"]), int(fields["revision"]), str(fields["objective"]),
                   tuple(str(c) for c in fields["acceptance"]),
                   GoalBudget(budget["tokens"], budget["seconds"], budget.get("rounds")),
                   fields["restartPolicy"], fields.get("status", "active"),
                   tuple(str(p) for p in fields.get("protected", ())))


def protecting_pattern(path: str | None, patterns: tuple[str, ...]) -> str | None:
    """The first of ``patterns`` (shell patterns, ``*`` crossing ``/``) that ``path``
    matches: one reading for the agent that guards a goal's checks and the check that
    judges it (I5:protected).

    >>> protecting_pattern("tests/a/test_b.py", ("docs/*", "tests/*"))
    'tests/*'
    """
    if path is None:
        return None
    return next((p for p in patterns if fnmatchcase(path, p)), None)


@dataclass(frozen=True)
class Lease:
    """The execution lease: who may act on the goal, under which epoch, until when.

    ``took_over`` is the epoch this lease replaced (``None``: nobody held one
    before), which is how a restarted agent knows it is recovering.
    """

    epoch: int
    holder: int
    goal_id: str
    revision: int
    expires_at: float
    took_over: int | None = None


@dataclass(frozen=True)
class CheckRun:
    """One check the verifier ran: command, exit code, where its output is kept."""

    command: str
    exit_code: int
    output_ref: str


@dataclass(frozen=True)
class CriterionVerdict:
    """The verdict on one acceptance criterion, with a reference to its evidence."""

    criterion: str
    verdict: CriterionJudgement
    evidence: str


@dataclass(frozen=True)
class Verification:
    """One verifier round for one goal revision (seed 002 §19.2 "验证后返工")."""

    goal_id: str
    revision: int
    round: int
    outcome: VerifierOutcome
    checks: tuple[CheckRun, ...] = ()
    criteria: tuple[CriterionVerdict, ...] = ()
    gaps: tuple[str, ...] = ()
    judge_kind: JudgeKind = "rule"
    judge: str = "verifier"


@dataclass(frozen=True)
class CompletionProof:
    """Why the goal is complete, bound to the revision it judged (seed 002 §19.2 完成依据)."""

    goal_id: str
    revision: int
    verification_round: int
    checks: tuple[CheckRun, ...]
    criteria: tuple[CriterionVerdict, ...]
    judge_kind: JudgeKind
    judge: str

    @classmethod
    def from_verification(cls, verification: Verification) -> CompletionProof:
        v = verification
        return cls(v.goal_id, v.revision, v.round, v.checks, v.criteria, v.judge_kind, v.judge)


@dataclass(frozen=True)
class GoalAnswer:
    """The goal service's answer to a compare-and-swap: done, or why not, and the goal now."""

    ok: bool
    goal: Goal
    reason: str = ""


class GoalPort(Protocol):
    """The goal service as one incarnation of the agent sees it."""

    def read(self) -> Goal:
        """The goal's current revision."""
        ...

    def current_lease(self) -> Lease | None:
        """The lease as the service holds it now (whoever holds it)."""
        ...

    def acquire(self) -> Lease:
        """Take the execution lease for this incarnation, with an epoch one higher."""
        ...

    def declare(self, epoch: int, goal: Goal, action: GoalAction) -> None:
        """Say which epoch and goal revision the next action is taken under."""
        ...

    def verify(self, goal: Goal, epoch: int) -> Verification:
        """Ask the verifier about ``goal``'s revision (it may be unavailable)."""
        ...

    def complete(self, epoch: int, proof: CompletionProof) -> GoalAnswer:
        """Mark the goal complete, only if ``proof.revision`` is still the current one."""
        ...

    def set_status(self, epoch: int, revision: int, status: GoalStatus, reason: str) -> GoalAnswer:
        """Change the goal's status, only if ``revision`` is still the current one."""
        ...
