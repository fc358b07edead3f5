"""Goal checks (DESIGN I5; seed 002 §19.2-§19.3), judged from the world's goal service.

The world keeps the goal, its revisions and the execution lease, and logs every
call the agent made to it among the requests and tool invocations (see
:class:`harness.trace.GoalEventRecord`). So these checks need nothing from the
agent but its calls of the goal port; an agent that never calls it (a plain
``main(prompt)``, or one without a goal port) is ``unknown`` with the reason.

- ``I5``: the goal the agent acts under is field-for-field a revision the
  service holds (id, revision, objective, acceptance, budget, restart policy);
  every turn starts under the current revision, and every turn and side effect
  under the lease epoch its incarnation holds — no stale auto-continue, no
  action under an epoch a recovery replaced.
- ``I5:proof``: a ``complete`` rests on a completion proof for the final
  revision, naming every acceptance criterion as passed or waived, backed by a
  verifier pass the world really gave for that revision (no self-judging, no
  fail-open on a verifier outage).
- ``L3:same-gap`` (§19.2 "相同 gap 指纹连续出现则进入 NoProgressPaused"): when two
  verifier rounds of one revision, with a rework turn between them and no round
  between, named the same gaps, no rework turn follows and the run ends
  ``paused``. A round asked again after a restart with no turn between is the
  same round replayed, not a new one.
- ``budget:rounds`` (§19.3 "token/time/cost/round budgets"): no verifier round
  past the goal's round budget; once the budget is spent without a pass, no
  rework turn follows and the run ends ``budget_limited``.

Example::

    verdict = check_i5(trace)
    verdict.status   # 'pass', 'fail' or 'unknown'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import pairwise

from harness.checks._goal_actions import GoalAction, goal_actions
from harness.checks._verdict import Verdict, VerdictStatus
from harness.trace import GoalEventRecord, GoalTrace, ProofRecord, RequestRecord, Trace

_MAX_EVIDENCE = 12
PROOF = "I5:proof"
SAME_GAP = "L3:same-gap"
ROUNDS = "budget:rounds"


def _verdict(invariant: str, status: VerdictStatus, message: str,
             evidence: Iterable[str] = ()) -> Verdict:
    return Verdict(invariant, status, message, tuple(evidence)[:_MAX_EVIDENCE])


def _unjudgeable(invariant: str, trace: Trace) -> Verdict | None:
    if trace.goal is None:
        return _verdict(invariant, "unknown", "the scenario declares no goal")
    if not trace.goal.used:
        return _verdict(invariant, "unknown", "the agent never called the goal port "
                        "(AgentPorts.goals): an agent without one is not judged on goals")
    return None


def _stale(action: GoalAction) -> str | None:
    """Why ``action`` ran without current authority, or ``None``."""
    before = action.events_before
    declares = [e for e in before if e.kind == "declare" and e.incarnation == action.incarnation]
    if not declares:
        return f"{action.what} ran without declaring an epoch and goal revision"
    declared, now = declares[-1], before[-1]
    if declared.declared_epoch != now.epoch or now.holder != action.incarnation:
        return (f"{action.what} ran under epoch {declared.declared_epoch}, but the lease was "
                f"at epoch {now.epoch} held by incarnation {now.holder}")
    if action.is_turn and declared.declared_revision != now.revision:
        return (f"{action.what} started under goal revision {declared.declared_revision}, but "
                f"the goal was at revision {now.revision}: a stale auto-continue")
    return None


def _mismatched_fields(goal: GoalTrace) -> Iterator[str]:
    for e in goal.events:
        if e.declared is None or e.declared_revision is None:
            continue
        index = e.declared_revision - 1
        held = goal.revisions[index] if 0 <= index < len(goal.revisions) else None
        if e.declared != held:
            yield (f"goal event #{e.seq} ({e.kind}, incarnation {e.incarnation}) named "
                   f"{_fields(e.declared)}, but revision {e.declared_revision} is "
                   f"{_fields(held) if held else 'unknown to the service'}")


def _fields(identity: str) -> str:
    fields = json.loads(identity)
    return ", ".join(f"{k}={v!r}" for k, v in sorted(fields.items()) if k != "goalId")


def check_i5(trace: Trace) -> Verdict:
    """Goal fields are stable across restarts; no action under a stale revision or epoch."""
    unjudgeable = _unjudgeable("I5", trace)
    if unjudgeable:
        return unjudgeable
    goal = trace.goal
    assert goal is not None
    problems = list(_mismatched_fields(goal))
    actions = list(goal_actions(trace, goal))
    problems += [why for why in map(_stale, actions) if why]
    if problems:
        return _verdict("I5", "fail", problems[0], [*problems, *_timeline(goal)])
    epochs = sorted({e.epoch for e in goal.events if e.kind == "acquire"})
    return _verdict("I5", "pass", f"{len(actions)} turn starts and side effects each under the "
                    f"current epoch and revision; epochs {epochs}, revisions 1 to "
                    f"{goal.final_revision}", _timeline(goal))


def _timeline(goal: GoalTrace) -> list[str]:
    return [f"goal #{e.seq} {e.kind}{' ' + e.action if e.action else ''} incarnation "
            f"{e.incarnation} at {e.at:g}s: revision {e.revision}, epoch {e.epoch}"
            + (f", declared r{e.declared_revision}/e{e.declared_epoch}"
               if e.declared_revision is not None and e.kind == "declare" else "")
            for e in goal.events if e.kind in ("edit", "acquire", "declare", "complete")]


# ------------------------------------------------------------------- completion proof


def check_goal_proof(trace: Trace) -> Verdict:
    """``complete`` rests on a verified proof bound to the final goal revision."""
    unjudgeable = _unjudgeable(PROOF, trace)
    if unjudgeable:
        return unjudgeable
    goal = trace.goal
    assert goal is not None
    stop = trace.outcome.stop_state if trace.outcome else None
    rounds = [f"verifier round on revision {e.declared_revision}: {e.verdict}"
              + (f" (gaps: {'; '.join(e.gaps)})" if e.gaps else "")
              for e in goal.events if e.kind == "verify"]
    if goal.final_status != "complete" and stop != "complete":
        return _verdict(PROOF, "pass", f"no completion claimed: the run stopped {stop!r} and "
                        f"the goal is {goal.final_status!r} at revision {goal.final_revision}",
                        rounds)
    if goal.final_status != "complete":
        return _verdict(PROOF, "fail", f"the run ended complete, but the goal service holds no "
                        f"completion for revision {goal.final_revision}: complete without a "
                        "proof (seed 002 §19.2: complete 状态本身不是证据)", rounds)
    completes = [e for e in goal.events if e.kind == "complete" and e.ok]
    problem = _proof_problem(goal, completes[-1]) if completes else "no accepted proof"
    if problem:
        return _verdict(PROOF, "fail", problem, rounds)
    proof = completes[-1].proof
    assert proof is not None
    return _verdict(PROOF, "pass", f"complete with a proof for goal {proof.goal_id} revision "
                    f"{proof.revision}: verifier round {proof.verification_round} passed, "
                    f"{len(proof.checks)} checks, {len(proof.criteria)} criteria, judged by "
                    f"{proof.judge_kind} {proof.judge}", rounds)


def _proof_problem(goal: GoalTrace, complete: GoalEventRecord) -> str | None:
    proof = complete.proof
    if proof is None:
        return "the completion carries no proof"
    if proof.goal_id != goal.goal_id or proof.revision != goal.final_revision:
        return (f"the proof is for {proof.goal_id} revision {proof.revision}, but the goal is "
                f"{goal.goal_id} at revision {goal.final_revision}: edited after the proof")
    missing = _unproven(proof, goal.acceptance[proof.revision - 1])
    if missing:
        return f"the proof passes no verdict on {missing}"
    backed = [e for e in goal.events if e.kind == "verify" and e.seq < complete.seq
              and e.declared_revision == proof.revision and e.verdict == "pass"]
    if not backed:
        outages = any(e.kind == "verify" and e.verdict == "unavailable" for e in goal.events)
        why = " (the verifier was unavailable: a fail-open completion)" if outages else ""
        return (f"no verifier pass on revision {proof.revision} backs the proof{why}; its "
                f"judge {proof.judge_kind} {proof.judge!r} never passed it in the world")
    if not proof.judge or any(code != 0 for _, code in proof.checks):
        return "the proof names no judge, or a check it lists did not exit 0"
    return None


def _unproven(proof: ProofRecord, acceptance: tuple[str, ...]) -> list[str]:
    judged = {criterion for criterion, verdict in proof.criteria if verdict in ("pass", "waived")}
    return [criterion for criterion in acceptance if criterion not in judged]


# ------------------------------------------------------------------- same gap twice


def check_same_gap(trace: Trace) -> Verdict | None:
    """The same gaps in two rounds around a rework: no more rework, the run ends paused."""
    goal = trace.goal
    if goal is None:
        return None
    unjudgeable = _unjudgeable(SAME_GAP, trace)
    if unjudgeable:
        return unjudgeable
    pairs = list(_reworked_pairs(trace, goal))
    if not pairs:
        return None  # never two failed rounds of one revision around a rework
    repeated = next(((first, second) for first, second in pairs
                     if _same_gaps_end_at(trace, goal, second)), None)
    rounds = [f"goal event #{e.seq}: verifier round on revision {e.declared_revision} at "
              f"{e.at:g}s: {e.verdict} ({'; '.join(e.gaps)})"
              for e in goal.events if e.kind == "verify" and e.incarnation > 0]
    if repeated is None:
        return _verdict(SAME_GAP, "pass", f"{len(pairs)} rework(s), each answered by other "
                        "gaps: progress every round", rounds)
    problems = _after_no_progress(trace, repeated[1])
    if problems:
        return _verdict(SAME_GAP, "fail", problems[0], [*problems, *rounds])
    return _verdict(SAME_GAP, "pass", f"the verifier named the same gaps in goal events "
                    f"#{repeated[0].seq} and #{repeated[1].seq}, around a rework: no further "
                    "rework, and the run paused (no progress)", rounds)


def _gap_set(event: GoalEventRecord) -> frozenset[str]:
    return frozenset(gap.strip().lower() for gap in event.gaps)


def _last_turn(trace: Trace, requests_before: int) -> int:
    """The furthest conversation turn any request reached before a goal event."""
    return max((r.turn for r in trace.requests
                if r.index <= requests_before and r.delivery != "refused"), default=0)


def _rounds(trace: Trace, goal: GoalTrace) -> list[GoalEventRecord]:
    """The agent's verifier rounds; one asked again with no new turn since is the same round."""
    rounds: list[GoalEventRecord] = []
    for event in goal.events:
        if event.kind == "verify" and event.incarnation > 0 and (
                not rounds or _last_turn(trace, event.requests_before) >
                _last_turn(trace, rounds[-1].requests_before)):
            rounds.append(event)
    return rounds


def _reworked_pairs(trace: Trace, goal: GoalTrace
                    ) -> Iterator[tuple[GoalEventRecord, GoalEventRecord]]:
    """Consecutive failed rounds of one revision (a rework turn lies between any two)."""
    for first, second in pairwise(_rounds(trace, goal)):
        if first.verdict == second.verdict == "fail" and \
                first.declared_revision == second.declared_revision:
            yield first, second


def _rework_after(trace: Trace, event: GoalEventRecord) -> RequestRecord | None:
    """The first request of a new conversation turn after ``event``, if any."""
    turn = _last_turn(trace, event.requests_before)
    return next((r for r in trace.requests if r.index > event.requests_before
                 and r.delivery != "refused" and r.turn > turn), None)


def _after_no_progress(trace: Trace, second: GoalEventRecord) -> list[str]:
    problems = []
    rework = _rework_after(trace, second)
    if rework is not None:
        problems.append(f"request #{rework.index} started turn {rework.turn} at "
                        f"{rework.started_at:g}s, after the verifier named the same gaps "
                        f"twice (goal event #{second.seq}): no progress means pause, not "
                        "another rework (seed 002 §19.2 NoProgressPaused)")
    stop = trace.outcome.stop_state if trace.outcome is not None else None
    if stop != "paused":
        problems.append(f"the verifier named the same gaps twice around a rework, and the run "
                        f"ended {stop}, not paused (no progress)")
    return problems


# ------------------------------------------------------------------- verifier-round budget


def check_round_budget(trace: Trace) -> Verdict | None:
    """No verifier round past the goal's round budget; spent without a pass, the run stops."""
    goal = trace.goal
    budget = _round_budget(goal) if goal is not None else None
    if goal is None or budget is None:
        return None
    unjudgeable = _unjudgeable(ROUNDS, trace)
    if unjudgeable:
        return unjudgeable
    rounds = _rounds(trace, goal)
    lines = [f"round {n} (goal event #{e.seq}, revision {e.declared_revision}, at {e.at:g}s): "
             f"{e.verdict}" for n, e in enumerate(rounds, 1)]
    if len(rounds) > budget:
        past = rounds[budget]
        return _verdict(ROUNDS, "fail", f"verifier round {budget + 1} (goal event #{past.seq}) "
                        f"came past the goal's budget of {budget} round(s) (seed 002 §19.3 "
                        "round budgets)", lines)
    if len(rounds) < budget or rounds[-1].verdict == "pass":
        return _verdict(ROUNDS, "unknown", f"{len(rounds)} verifier round(s) of a budget of "
                        f"{budget}, the last {rounds[-1].verdict if rounds else 'none'}: the "
                        "budget was never spent", lines)
    problems = _after_rounds_spent(trace, rounds[-1], budget)
    if problems:
        return _verdict(ROUNDS, "fail", problems[0], [*problems, *lines])
    return _verdict(ROUNDS, "pass", f"{budget} verifier round(s) without a pass, then no "
                    "rework and the run stopped budget_limited", lines)


def _round_budget(goal: GoalTrace) -> int | None:
    rounds = json.loads(goal.revisions[-1])["budget"].get("rounds")
    return rounds if isinstance(rounds, int) else None


def _same_gaps_end_at(trace: Trace, goal: GoalTrace, event: GoalEventRecord) -> bool:
    return any(second is event and _gap_set(first) == _gap_set(second)
               for first, second in _reworked_pairs(trace, goal))


def _after_rounds_spent(trace: Trace, last: GoalEventRecord, budget: int) -> list[str]:
    goal, problems = trace.goal, []
    rework = _rework_after(trace, last)
    if rework is not None:
        problems.append(f"request #{rework.index} started turn {rework.turn} at "
                        f"{rework.started_at:g}s, after the last of {budget} verifier round(s) "
                        "failed: a rework no round may verify")
    stop = trace.outcome.stop_state if trace.outcome is not None else None
    # The same gaps in the last two rounds: pausing for no progress stops it as well.
    no_progress = goal is not None and _same_gaps_end_at(trace, goal, last)
    if stop != "budget_limited" and not (no_progress and stop == "paused"):
        problems.append(f"the goal's {budget} verifier round(s) are spent without a pass, and "
                        f"the run ended {stop}, not budget_limited")
    return problems


# ------------------------------------------------------------------- the expected stop


def expected_stop_state(trace: Trace) -> str | None:
    """The stop I4 expects: ``paused`` when a pause-policy goal's run restarted while active.

    Seed 002 §19.3: grok-build and dsh keep an active goal after a restart but take
    execution authority back; the scenario's ``expect.stop_state`` is what a run
    without such a restart ends in. ``None`` (I4 cannot judge) for a goal scenario
    whose agent never called the goal port: its stop hangs on a verifier it never asked.
    """
    expected, goal = trace.expect.stop_state, trace.goal
    if goal is not None and not goal.used:
        return None
    if goal is None or goal.restart_policy != "pause":
        return expected
    took_over = any(e.kind == "acquire" and e.epoch > 1 and e.status == "active"
                    for e in goal.events)
    return "paused" if took_over else expected


def goal_verdicts(trace: Trace) -> list[Verdict]:
    """The goal checks every case with a goal gets (``None`` of them without one)."""
    if trace.goal is None:
        return []
    listed = "I5" in trace.expect.invariants
    optional = (check_same_gap(trace), check_round_budget(trace))
    return [*([] if listed else [check_i5(trace)]), check_goal_proof(trace),
            *(v for v in optional if v is not None)]
