"""The ``goal`` and ``verifier`` blocks: a long task's goal and its scripted verifier.

Seed 002 §19.3 (goal, revision, execution lease, restart policy) and §19.2
(completion proof, verifier). The runner builds :class:`fakes.GoalService` and
:class:`fakes.ScriptedVerifier` from them::

    >>> g = GoalDeclaration(id="notes-1.4", objective="Publish the notes",
    ...                     acceptance=["every PR listed"])
    >>> g.restart_policy, g.fake_goal().revision
    ('continue', 1)
"""

from __future__ import annotations

from posixpath import normpath
from typing import Annotated, Self

from pydantic import Field, model_validator

from fakes import GoalEdit, ScriptedVerifier, VerifierRule
from harness.ports import Goal, GoalBudget, RestartPolicy, VerifierOutcome
from harness.scenario._base import ScenarioModel
from harness.scenario._faults import Count, Seconds
from harness.scenario._names import TOOL_NAME_PATTERN
from harness.scenario._problems import Problem, raise_if_any

Text = Annotated[str, Field(min_length=1, max_length=10_000)]
GoalId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
ToolName = Annotated[str, Field(pattern=TOOL_NAME_PATTERN)]
PathPattern = Annotated[str, Field(min_length=1, max_length=1_000)]


class GoalBudgetDeclaration(ScenarioModel):
    """The goal's own budget (seed 002 §19.2 GoalBudget); spent, the run ends budget_limited."""

    tokens: Annotated[int, Field(ge=1, le=10_000_000_000)] | None = None
    """Billed tokens (input and output) the goal may spend."""
    seconds: Seconds | None = None
    """Virtual seconds from the start the goal may take."""
    rounds: Count | None = None
    """Verifier rounds the goal may use; when they are spent without a pass, the run ends
    budget_limited instead of another rework."""


class GoalEditDeclaration(ScenarioModel):
    """A user edit of the goal at a point in virtual time: the revision goes up by one."""

    at_seconds: Annotated[float, Field(ge=0, le=1_000_000)]
    """Virtual time of the edit; it lands at the first request, tool call or goal-service call
    at or after it."""
    objective: Text | None = None
    """The new objective; absent: unchanged."""
    acceptance: Annotated[list[Text], Field(min_length=1)] | None = None
    """The new acceptance criteria; absent: unchanged."""

    @model_validator(mode="after")
    def _changes_something(self) -> Self:
        if self.objective is None and self.acceptance is None:
            raise_if_any([Problem((), "an edit that changes nothing",
                                  expected="'objective', 'acceptance' or both")])
        return self


class GoalDeclaration(ScenarioModel):
    """The goal of a long task, kept by the world's goal service across every crash."""

    id: GoalId
    """The goal id, such as release-notes-1.4."""
    objective: Text
    """What the task must achieve."""
    acceptance: Annotated[list[Text], Field(min_length=1, max_length=50)]
    """Acceptance criteria; the verifier judges each."""
    budget: GoalBudgetDeclaration = GoalBudgetDeclaration()
    """The goal's budget; absent: only the scenario's budget applies."""
    restart_policy: RestartPolicy = "continue"
    """After a restart: continue (codex) or pause (grok-build, dsh) an active goal."""
    edits: list[GoalEditDeclaration] = []  # noqa: RUF012
    """Scripted user edits, each bumping the revision."""
    lease_seconds: Seconds | None = None
    """How long the execution lease holds without a declared action renewing it; a lapsed
    lease must be acquired again before the next action (I5:lease). Absent: 600 s, and
    no I5:lease verdict."""
    protected: Annotated[list[PathPattern], Field(max_length=50)] = []  # noqa: RUF012
    """Paths holding the checks that prove the goal, as shell patterns relative to the
    workspace (``*`` also crosses ``/``), such as tests/*: a tool call's ``path`` that
    matches one may not be changed without the user's approval (I5:protected). Absent:
    nothing protected, and no I5:protected verdict."""

    @model_validator(mode="after")
    def _protected_paths_are_plain(self) -> Self:
        raise_if_any([Problem(("protected", index), wrong[0], value=pattern,
                              got=repr(pattern), expected=wrong[1])
                      for index, pattern in enumerate(self.protected)
                      if (wrong := _unplain(pattern)) is not None])
        return self

    def fake_goal(self) -> Goal:
        """Revision 1 of the goal, as the goal service starts with it."""
        return Goal(self.id, 1, self.objective, tuple(self.acceptance),
                    GoalBudget(self.budget.tokens, self.budget.seconds, self.budget.rounds),
                    self.restart_policy, protected=tuple(self.protected))

    def fake_edits(self) -> tuple[GoalEdit, ...]:
        return tuple(GoalEdit(e.at_seconds, e.objective,
                              tuple(e.acceptance) if e.acceptance is not None else None)
                     for e in self.edits)


class VerifierCondition(ScenarioModel):
    """When a verifier rule applies: the goal revision asked about, the ledger's state."""

    revision: Count | None = None
    """Only for this goal revision."""
    applied: dict[ToolName, Annotated[int, Field(ge=0, le=1_000_000)]] | None = None
    """Side effects the ledger holds per tool, such as {fix: 1}: what the checks would see."""


class VerifierRuleDeclaration(ScenarioModel):
    """One rule of the scripted verifier; the first that matches judges the round."""

    when: VerifierCondition | None = None
    """Only in this state; absent: always."""
    verdict: VerifierOutcome
    """pass, fail (with gaps) or unavailable (the verifier is down)."""
    gaps: list[Text] = []  # noqa: RUF012
    """What a fail names as missing; the same gaps twice after a rework mean no progress."""
    checks: Annotated[list[Text], Field(min_length=1)] = ["pytest -q"]  # noqa: RUF012
    """The commands the verifier reports as run (exit 0 on pass, 1 on fail)."""

    @model_validator(mode="after")
    def _gaps_fit_verdict(self) -> Self:
        if self.verdict == "fail" and not self.gaps:
            raise_if_any([Problem(("gaps",), "a fail without gaps gives the rework nothing to do",
                                  expected="gaps: [\"what is missing\", ...]")])
        if self.verdict != "fail" and self.gaps:
            raise_if_any([Problem(("gaps",), f"a {self.verdict} verdict names no gaps",
                                  expected="gaps only with verdict: fail")])
        return self

    def fake_rule(self) -> VerifierRule:
        when = self.when or VerifierCondition()
        return VerifierRule(self.verdict, tuple(self.gaps), when.revision, dict(when.applied or {}),
                            tuple(self.checks))


def _unplain(pattern: str) -> tuple[str, str] | None:
    """What is wrong with a protected path as written, and what to write instead; ``None``
    when it is written as :func:`harness.ports.named_path` writes a call's path (relative,
    ``/`` between parts, no ``.`` or ``..`` part, no empty part, nothing around it).

    >>> _unplain("tests/*") is None
    True
    >>> _unplain("./tests//*")[1], _unplain("tests/")[1], _unplain("/src/*.py")[1]
    ("'tests/*'", "'tests/*'", "'src/*.py'")
    >>> _unplain("../tests/*")[1]
    "a path below the workspace, such as 'tests/*'"
    """
    if pattern != pattern.strip():
        return "spaces around a protected path match no call's path", repr(pattern.strip())
    if "\\" in pattern:
        return ("a protected path is compared with '/' between its parts (a backslash is a "
                "character of a name here)"), repr(pattern.replace("\\", "/"))
    plain = normpath(pattern.lstrip("/"))
    if plain in (".", "..") or plain.startswith("../"):
        return ("a protected path must lie below the workspace",
                "a path below the workspace, such as 'tests/*'")
    if pattern.endswith("/"):
        return "a folder matches no call's path; its files do", repr(f"{plain}/*")
    if plain != pattern:
        return "a protected path is compared with a call's path as written plainly", repr(plain)
    return None


def fake_verifier(rules: list[VerifierRuleDeclaration]) -> ScriptedVerifier:
    return ScriptedVerifier(tuple(rule.fake_rule() for rule in rules))


def goal_problems(goal: GoalDeclaration | None,
                  verifier: list[VerifierRuleDeclaration]) -> list[Problem]:
    """A verifier needs a goal and the other way round; a rule's revision must exist."""
    if goal is None:
        return [Problem(("verifier",), "a verifier judges a goal, and none is declared",
                        expected="a 'goal' block beside 'verifier'")] if verifier else []
    if not verifier:
        return [Problem(("goal",), "a goal without a verifier can never be proven complete",
                        expected="a 'verifier' list, such as [{verdict: pass}]")]
    revisions = 1 + len(goal.edits)
    return [Problem(("verifier", index, "when", "revision"), "revision is never reached",
                    value=rule.when.revision, got=str(rule.when.revision),
                    expected=f"1 to {revisions} (1 plus one per edit)")
            for index, rule in enumerate(verifier)
            if rule.when is not None and rule.when.revision is not None
            and rule.when.revision > revisions]
