"""The world's goal service and scripted verifier (seed 002 §19.2-§19.3)."""

from __future__ import annotations

import pytest

from fakes import (
    DeadIncarnationError,
    GoalEdit,
    GoalService,
    Incarnations,
    ScriptedVerifier,
    VerifierRule,
    VirtualClock,
)
from harness.ports import CompletionProof, Goal, GoalBudget
from harness.trace import ProofRecord

GOAL = Goal("notes-1.4", 1, "Publish the notes", ("every PR listed",), GoalBudget(tokens=100))


def _service(*rules: VerifierRule, edits: tuple[GoalEdit, ...] = (),
             applied: dict[str, int] | None = None) -> tuple[GoalService, VirtualClock,
                                                           Incarnations]:
    clock, lives = VirtualClock(), Incarnations()
    service = GoalService(GOAL, ScriptedVerifier(rules or (VerifierRule("pass"),)), clock=clock,
                          incarnations=lives, applied=lambda: dict(applied or {}),
                          position=lambda: (0, 0), edits=edits)
    return service, clock, lives


def test_an_edit_lands_at_the_first_call_at_or_after_its_time() -> None:
    service, clock, _ = _service(edits=(GoalEdit(30, acceptance=("every PR listed", "links")),))
    port = service.port(1)
    assert port.read().revision == 1
    clock.advance(29.5)
    assert port.read().revision == 1
    clock.advance(0.5)
    edited = port.read()
    assert (edited.revision, edited.acceptance) == (2, ("every PR listed", "links"))
    assert edited.objective == GOAL.objective
    assert [e.kind for e in service.events] == ["created", "edit"]


def test_every_acquire_raises_the_epoch_and_names_the_one_it_replaced() -> None:
    service, _, lives = _service()
    first = service.port(1).acquire()
    lives.crash()
    lives.restart()
    second = service.port(2).acquire()
    assert (first.epoch, first.took_over, second.epoch, second.took_over) == (1, None, 2, 1)
    assert second.holder == 2


def test_a_dead_incarnation_is_refused() -> None:
    service, _, lives = _service()
    lives.crash()
    with pytest.raises(DeadIncarnationError):
        service.port(1).read()


def _proof(revision: int) -> CompletionProof:
    return CompletionProof(GOAL.goal_id, revision, 1, (), (), "rule", "verifier")


def test_complete_is_a_compare_and_swap_on_revision_and_lease() -> None:
    service, clock, _ = _service(edits=(GoalEdit(10, objective="Publish the 1.4.1 notes"),))
    port = service.port(1)
    lease = port.acquire()
    assert not port.complete(lease.epoch + 1, _proof(1)).ok  # not the lease's epoch
    clock.advance(10)
    stale = port.complete(lease.epoch, _proof(1))
    assert (stale.ok, stale.goal.revision) == (False, 2)
    assert stale.reason == "revision 1 is stale: the goal is at revision 2"
    done = port.complete(lease.epoch, _proof(2))
    # The service keeps the proof as the trace does: its verdicts, not their evidence.
    assert (done.ok, done.goal.status) == (True, "complete")
    assert service.proof == ProofRecord.of(_proof(2))


def test_an_edit_after_the_proof_reopens_the_goal() -> None:
    service, clock, _ = _service(edits=(GoalEdit(10, objective="Also the 1.4.1 notes"),))
    port = service.port(1)
    port.complete(port.acquire().epoch, _proof(1))
    clock.advance(10)
    assert (port.read().status, service.proof) == ("active", None)


def test_the_verifier_judges_by_revision_and_ledger_first_rule_first() -> None:
    rules = (VerifierRule("unavailable", revision=3),
             VerifierRule("fail", gaps=("link 404",), applied={"fix": 0}),
             VerifierRule("pass", checks=("pytest -q", "linkcheck")))
    verifier = ScriptedVerifier(rules)
    failed = verifier.judge_goal(GOAL, 1, {})
    assert (failed.outcome, failed.gaps) == ("fail", ("link 404",))
    assert [(c.verdict, c.evidence) for c in failed.criteria] == [("fail", "link 404")]
    assert [c.exit_code for c in failed.checks] == [1]
    passed = verifier.judge_goal(GOAL, 2, {"fix": 1})
    assert [(c.command, c.exit_code) for c in passed.checks] == [("pytest -q", 0),
                                                                   ("linkcheck", 0)]
    assert [c.verdict for c in passed.criteria] == ["pass"]
    down = verifier.judge_goal(Goal("g", 3, "o", ("a",)), 1, {"fix": 1})
    assert (down.outcome, down.checks, down.criteria) == ("unavailable", (), ())


def test_no_matching_rule_is_a_fail_that_says_so() -> None:
    verdict = ScriptedVerifier((VerifierRule("pass", revision=2),)).judge_goal(GOAL, 1, {})
    assert (verdict.outcome, verdict.gaps) == ("fail", ("no verifier rule matched this state",))


def test_rounds_are_counted_per_revision_across_incarnations() -> None:
    service, _, lives = _service()
    service.port(1).verify(GOAL, 1)
    lives.crash()
    lives.restart()
    again = service.port(2).verify(GOAL, 2)
    assert again.round == 2


def test_a_cancel_is_a_compare_and_swap_and_nothing_changes_a_cancelled_goal() -> None:
    service, clock, _ = _service(edits=(GoalEdit(10, objective="Also the 1.4.1 notes"),))
    port = service.port(1)
    epoch = port.acquire().epoch
    assert not port.set_status(epoch + 1, 1, "cancelled", "by request").ok  # not the lease's
    assert port.set_status(epoch, 1, "cancelled", "by request").ok
    refused = port.complete(epoch, _proof(1))
    assert (refused.ok, refused.reason) == (
        False, "the goal is cancelled: nothing changes it any more (seed 002 §19.4)")
    assert not port.set_status(epoch, 1, "active", "resume").ok
    clock.advance(10)
    assert (port.read().revision, port.read().status) == (2, "cancelled")  # an edit: still
    assert [e.status for e in service.events if e.kind == "status"] == ["active", "cancelled",
                                                                        "cancelled"]


def test_a_declared_action_renews_the_lease_only_while_it_holds() -> None:
    clock, lives = VirtualClock(), Incarnations()
    service = GoalService(GOAL, ScriptedVerifier((VerifierRule("pass"),)), clock=clock,
                          incarnations=lives, applied=dict, position=lambda: (0, 0),
                          lease_seconds=120)
    port = service.port(1)
    lease = port.acquire()
    assert lease.expires_at == 120
    clock.advance(100)
    port.declare(lease.epoch, port.read(), "turn")
    assert service.lease is not None
    assert service.lease.expires_at == 220  # renewed in time
    clock.advance(150)
    port.declare(lease.epoch, port.read(), "tools")
    assert service.lease.expires_at == 220  # lapsed at 220: a late declare revives nothing
    proof = CompletionProof.from_verification(port.verify(port.read(), lease.epoch))
    refused = port.complete(lease.epoch, proof)
    assert not refused.ok
    assert "expired at 220s" in refused.reason
    again = port.acquire()
    assert (again.epoch, again.took_over, again.expires_at) == (2, 1, 370)
    assert port.complete(again.epoch, proof).ok
