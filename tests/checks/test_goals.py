"""The goal checks (I5, I5:proof) judge from the goal service's record, and say unknown honestly."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.agent import BudgetPolicy, ReferenceAgent
from harness.checks import check_trace
from harness.checks._goals import (
    check_goal_proof,
    check_i5,
    check_round_budget,
    check_same_gap,
    expected_stop_state,
)
from harness.ports import Agent, AgentFactory, AgentPorts
from harness.runner import Case, CrashSpec, run_trace
from harness.scenario import load_scenario
from harness.trace import Trace

GOALS = Path(__file__).resolve().parents[2] / "scenarios" / "goals"


def _trace(name: str, crash: CrashSpec | None = None,
           factory: AgentFactory | None = None) -> Trace:
    path = GOALS / f"{name}.yaml"
    base = Case(name, path, load_scenario(path).seed)
    case = base if crash is None else replace(base, crash=crash)
    return run_trace(case, agent_factory=factory)


@pytest.fixture(scope="module")
def edited() -> Trace:
    return _trace("edited-goal-is-reverified")


def test_the_reference_agent_passes_both_goal_checks(edited: Trace) -> None:
    i5, proof = check_i5(edited), check_goal_proof(edited)
    assert (i5.status, proof.status) == ("pass", "pass")
    assert i5.message.endswith("epochs [1], revisions 1 to 2")
    assert "revision 2: verifier round 2 passed" in proof.message


def _without_goal_port(ports: AgentPorts) -> Agent:
    """The reference agent as an agent without a goal port would run: it does the work."""
    return ReferenceAgent(replace(ports, goals=None))


def test_an_agent_without_the_goal_port_is_unknown_with_the_reason() -> None:
    trace = _trace("verifier-outage-is-not-complete", factory=_without_goal_port)
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "complete"  # it never asked the verifier
    verdicts = {v.invariant: v for v in check_trace(trace)}
    for name in ("I5", "I5:proof"):
        assert verdicts[name].status == "unknown"
        assert verdicts[name].message == ("the agent never called the goal port "
                                          "(AgentPorts.goals): an agent without one is not "
                                          "judged on goals")
    assert verdicts["I4"].status == "unknown"
    assert not [v for v in verdicts.values() if v.status == "fail"]


def test_a_goal_edited_after_the_proof_fails_the_proof(edited: Trace) -> None:
    goal = edited.goal
    assert goal is not None
    third = json.dumps({**json.loads(goal.revisions[-1]), "revision": 3}, sort_keys=True)
    later = replace(goal, revisions=(*goal.revisions, third),
                    acceptance=(*goal.acceptance, goal.acceptance[-1]))
    verdict = check_goal_proof(replace(edited, goal=later))
    assert verdict.status == "fail"
    assert verdict.message == ("the proof is for release-notes-1.4 revision 2, but the goal is "
                               "release-notes-1.4 at revision 3: edited after the proof")


def test_complete_without_a_completion_in_the_service_fails(edited: Trace) -> None:
    goal = edited.goal
    assert goal is not None
    unproven = replace(goal, final_status="active",
                       events=tuple(e for e in goal.events if e.kind != "complete"))
    verdict = check_goal_proof(replace(edited, goal=unproven))
    assert verdict.status == "fail"
    assert verdict.message.startswith("the run ended complete, but the goal service holds no "
                                      "completion for revision 2")


def test_a_goal_named_with_other_fields_than_its_revision_fails_i5(edited: Trace) -> None:
    goal = edited.goal
    assert goal is not None
    first = next(e for e in goal.events if e.kind == "declare")
    fields = {**json.loads(first.declared or "{}"), "budget": {"seconds": None, "tokens": None}}
    changed = replace(first, declared=json.dumps(fields, sort_keys=True, separators=(",", ":")))
    events = tuple(changed if e.seq == first.seq else e for e in goal.events)
    verdict = check_i5(replace(edited, goal=replace(goal, events=events)))
    assert verdict.status == "fail"
    assert verdict.message.startswith(f"goal event #{first.seq} (declare, incarnation 1) named ")
    assert "budget={'seconds': None, 'tokens': None}" in verdict.message


def test_the_pause_policy_expects_paused_only_after_a_takeover_of_an_active_goal() -> None:
    quiet = _trace("restart-pauses-the-goal")
    assert expected_stop_state(quiet) == "complete"
    crashed = _trace("restart-pauses-the-goal",
                     CrashSpec("session:fsync#12", "after", "unsynced_lost"))
    assert expected_stop_state(crashed) == "paused"
    assert crashed.outcome is not None
    assert crashed.outcome.stop_state == "paused"


def test_a_failed_goal_check_is_explained_with_its_fix() -> None:
    from harness._report_text import diagnosis
    from harness.mutants import MUTANTS
    from harness.mutants._run import run_kill

    mutant = next(m for m in MUTANTS if m.name == "I5-continues-stale-auto-continue")
    lines = diagnosis(run_kill(mutant.kills[0], mutant.factory))
    assert lines == [
        "the goal did not survive: turn 2 (request #2, incarnation 1, at 60s) started under "
        "goal revision 1, but the goal was at revision 2: a stale auto-continue. Fix: re-read "
        "the goal before every auto-continue and drop one whose revision is not the current "
        "one (seed 002 §19.3)."]


# ------------------------------------------------------------------- L3:same-gap


class _RoundInGaps:
    """The goal port of an agent that stamps each round into its gaps (never the same twice)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def verify(self, goal: Any, epoch: int) -> Any:
        verdict = self.inner.verify(goal, epoch)
        return replace(verdict, gaps=tuple(f"{g} (round {verdict.round})" for g in verdict.gaps))


def _stamps_rounds(ports: AgentPorts) -> Agent:
    return ReferenceAgent(replace(ports, goals=_RoundInGaps(ports.goals)))


def test_the_same_gaps_around_a_rework_pause_the_reference_agent() -> None:
    found = check_same_gap(_trace("same-gap-twice-pauses"))
    assert found is not None
    assert (found.status, found.message) == (
        "pass", "the verifier named the same gaps in goal events #6 and #10, around a rework: "
        "no further rework, and the run paused (no progress)")


def test_another_rework_after_the_same_gaps_twice_fails() -> None:
    found = check_same_gap(_trace("same-gap-twice-pauses", factory=_stamps_rounds))
    assert found is not None
    assert found.status == "fail"
    assert found.message.startswith("request #5 started turn 5 at 0s, after the verifier named "
                                    "the same gaps twice (goal event #10)")
    assert "and the run ended budget_limited, not paused (no progress)" in found.evidence[1]


def test_other_gaps_each_round_are_progress(tmp_path: Path) -> None:
    text = (GOALS / "same-gap-twice-pauses.yaml").read_text(encoding="utf-8").replace(
        '''verifier:
  - verdict: fail
    gaps: ["test_checkout failed 3 of 20 runs"]''', '''verifier:
  - when: {applied: {edit: 1}}
    verdict: fail
    gaps: ["test_checkout failed 3 of 20 runs"]
  - when: {applied: {edit: 2}}
    verdict: fail
    gaps: ["test_checkout failed 1 of 20 runs"]
  - verdict: pass''').replace("stop_state: paused", "stop_state: complete")
    path = tmp_path / "progress.yaml"
    path.write_text(text, encoding="utf-8")
    trace = run_trace(Case("progress", path, 54))
    found = check_same_gap(trace)
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "complete"
    assert found is not None
    assert (found.status, found.message) == (
        "pass", "1 rework(s), each answered by other gaps: progress every round")


def test_a_scenario_without_two_failed_rounds_has_no_same_gap_verdict(edited: Trace) -> None:
    assert check_same_gap(edited) is None


# ------------------------------------------------------------------- budget:rounds


def test_the_reference_agent_stops_budget_limited_once_its_rounds_are_spent() -> None:
    found = check_round_budget(_trace("verifier-rounds-run-out"))
    assert found is not None
    assert (found.status, found.message) == (
        "pass", "2 verifier round(s) without a pass, then no rework and the run stopped "
        "budget_limited")


def test_a_round_past_the_budget_fails() -> None:
    def uncapped(ports: AgentPorts) -> Agent:
        return ReferenceAgent(ports, budget_policy=BudgetPolicy(cap_verifier_rounds=False))

    found = check_round_budget(_trace("verifier-rounds-run-out", factory=uncapped))
    assert found is not None
    assert found.status == "fail"
    assert found.message.startswith("verifier round 3 (goal event #")
    assert found.message.endswith("came past the goal's budget of 2 round(s) (seed 002 §19.3 "
                                  "round budgets)")


def _with_rounds(tmp_path: Path, rounds: int) -> Trace:
    text = (GOALS / "verifier-rounds-run-out.yaml").read_text(encoding="utf-8")
    path = tmp_path / "rounds.yaml"
    path.write_text(text.replace("budget: {rounds: 2}", f"budget: {{rounds: {rounds}}}").replace(
        "stop_state: budget_limited", "stop_state: paused"), encoding="utf-8")
    return run_trace(Case("rounds", path, 56))


def test_a_budget_never_spent_is_unknown_and_no_budget_no_verdict(edited: Trace,
                                                                  tmp_path: Path) -> None:
    assert check_round_budget(edited) is None
    found = check_round_budget(_with_rounds(tmp_path, 4))
    assert found is not None
    assert (found.status, found.message) == (
        "unknown", "3 verifier round(s) of a budget of 4, the last fail: the budget was never "
        "spent")


def test_the_last_round_repeating_the_gaps_may_pause_instead(tmp_path: Path) -> None:
    trace = _with_rounds(tmp_path, 3)
    assert trace.outcome is not None
    assert trace.outcome.stop_state == "paused"
    found = check_round_budget(trace)
    assert found is not None
    assert found.status == "pass"
