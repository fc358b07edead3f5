"""The goal service's record, turned into the trace's plain records (seed 002 §19.2-§19.3)."""

from __future__ import annotations

import json

from fakes import GoalEvent, GoalService
from harness.ports import CompletionProof, Goal
from harness.trace import GoalEventRecord, GoalTrace, ProofRecord


def goal_trace(service: GoalService | None) -> GoalTrace | None:
    """What the checkers read of the goal service; ``None`` for a scenario without a goal."""
    if service is None:
        return None
    first = service.revisions[0]
    return GoalTrace(
        goal_id=first.goal_id,
        restart_policy=first.restart_policy,
        acceptance=tuple(goal.acceptance for goal in service.revisions),
        revisions=tuple(identity_json(goal) for goal in service.revisions),
        events=tuple(_event(e) for e in service.events),
        final_status=service.status,
        used=service.used,
    )


def identity_json(goal: Goal) -> str:
    """A goal's identity fields as canonical JSON, compared field for field by I5."""
    return json.dumps(goal.identity(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _event(e: GoalEvent) -> GoalEventRecord:
    verification = e.verification
    return GoalEventRecord(
        seq=e.seq, kind=e.kind, incarnation=e.incarnation, at=e.at,
        requests_before=e.requests_before, invocations_before=e.invocations_before,
        revision=e.revision, epoch=e.epoch, holder=e.holder, status=e.status, action=e.action,
        declared=None if e.declared is None else identity_json(e.declared),
        declared_revision=None if e.declared is None else e.declared.revision,
        declared_epoch=e.declared_epoch,
        verdict=None if verification is None else verification.outcome,
        gaps=() if verification is None else verification.gaps,
        proof=None if e.proof is None else _proof(e.proof), ok=e.ok, reason=e.reason,
    )


def _proof(proof: CompletionProof) -> ProofRecord:
    return ProofRecord(proof.goal_id, proof.revision, proof.verification_round,
                       tuple((c.command, c.exit_code) for c in proof.checks),
                       tuple((c.criterion, c.verdict) for c in proof.criteria),
                       proof.judge_kind, proof.judge)
