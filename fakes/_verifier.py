"""A scripted verifier: passes, fails with gaps, or is unavailable (seed 002 §19.2).

Like the scripted model it is reactive: each round is judged from what it is
asked (the goal revision) and what the world holds (side effects in the ledger
per tool), never from a round counter, so a restarted agent that asks again
gets the same verdict for the same state. The first rule that matches decides;
when none matches the verdict is ``fail`` with the gap "no rule matched".

A pass carries one :class:`CheckRun` per rule-declared check (exit code 0) and a
``pass`` verdict per acceptance criterion; a fail gives the checks exit code 1
and marks every criterion ``fail`` with the gaps as evidence.

Example::

    verifier = ScriptedVerifier((VerifierRule("fail", gaps=("link 404",), applied={"fix": 0}),
                                 VerifierRule("pass")))
    verifier.judge(goal, round=1, applied={"fix": 1}).outcome   # 'pass'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.ports import CheckRun, CriterionVerdict, Goal, Verification, VerifierOutcome


@dataclass(frozen=True)
class VerifierRule:
    """One rule: its verdict, the gaps a fail names, and when it applies."""

    verdict: VerifierOutcome
    gaps: tuple[str, ...] = ()
    revision: int | None = None
    applied: Mapping[str, int] = field(default_factory=dict)
    checks: tuple[str, ...] = ("pytest -q",)

    def matches(self, revision: int, applied: Mapping[str, int]) -> bool:
        if self.revision is not None and self.revision != revision:
            return False
        return all(applied.get(tool, 0) == n for tool, n in self.applied.items())


_NO_RULE = VerifierRule("fail", gaps=("no verifier rule matched this state",))


@dataclass(frozen=True)
class ScriptedVerifier:
    """The verifier of one case; see the module docstring."""

    rules: tuple[VerifierRule, ...]
    judge: str = "scripted-verifier"

    def judge_goal(self, goal: Goal, round_: int, applied: Mapping[str, int]) -> Verification:
        """The verdict of round ``round_`` on ``goal`` with the ledger at ``applied``."""
        rule = next((r for r in self.rules if r.matches(goal.revision, applied)), _NO_RULE)
        base = Verification(goal.goal_id, goal.revision, round_, rule.verdict, judge=self.judge)
        if rule.verdict == "unavailable":
            return base
        exit_code = 0 if rule.verdict == "pass" else 1
        checks = tuple(CheckRun(command, exit_code, f"verifier/r{goal.revision}/{round_}/{i}")
                       for i, command in enumerate(rule.checks, 1))
        evidence = "; ".join(rule.gaps) or f"checks exited {exit_code}"
        criteria = tuple(CriterionVerdict(c, "pass" if rule.verdict == "pass" else "fail", evidence)
                         for c in goal.acceptance)
        return Verification(goal.goal_id, goal.revision, round_, rule.verdict, checks, criteria,
                            rule.gaps, "rule", self.judge)
