"""``CANCEL:goal``: a cancelled goal stays cancelled (seed 002 §19.4, "goal: disarm 自动续跑").

Judged from the world's record alone: the harness's cancel requests and their
answers, the goal service's events (each placed among the requests and tool
invocations), the requests and the invocations. After the goal cancel was
acknowledged:

- no model request starts (the auto-continue is disarmed, a restart too);
- no side-effecting tool or job starts (pure tools, ``expect.pure_tools``, may);
- no verifier round runs, and no completion is recorded;
- the goal service holds the goal ``cancelled``, and the run stops ``cancelled``.

That a late completion wakes nothing is ``JOBS:wakeup``'s rule (a goal cancel
is an owner cancel there), and that a repeated cancel acts once is ``CANCEL``'s.
An agent without a cancel hook, a goal target or a goal port is ``unknown``, with
the reason.

Example::

    verdict = check_goal_cancel(trace)
    verdict.status   # 'pass', 'fail' or 'unknown'; None: the scenario cancels no goal
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.checks._verdict import Verdict
from harness.ports import NEIGHBOUR_SESSION
from harness.trace import CancelRecord, GoalEventRecord, GoalTrace, Trace, request_turn

CHECK = "CANCEL:goal"
_EPS = 1e-6


def check_goal_cancel(trace: Trace) -> Verdict | None:
    """After an acknowledged goal cancel nothing acts for the goal, and it ends cancelled."""
    cancels = [c for c in trace.cancels if c.target == "goal"]
    if not cancels and not trace.extra.goal_cancels_declared:
        return None  # the scenario cancels no goal
    unknown = _unjudgeable(trace, cancels)
    if unknown is not None:
        return unknown
    accepted = _first_accepted(cancels)
    if accepted is None:
        answers = sorted({c.ack for c in cancels})
        why = "it does not implement the goal target" if "unsupported" in answers else \
            "it died answering, and no later incarnation was asked"
        return Verdict(CHECK, "unknown", f"the agent answered the goal cancel {answers}: {why}",
                       _lines(cancels))
    goal = trace.goal
    assert goal is not None
    problems = list(_acted_after(trace, goal, accepted))
    problems += _end_problems(trace, goal, accepted)
    if problems:
        return Verdict(CHECK, "fail", problems[0], (*problems, *_lines(cancels)),
                       advice="set the goal cancelled at the goal service, disarm the queued "
                              "auto-continue and stop the run before anything else starts")
    return Verdict(CHECK, "pass", f"the goal cancel acknowledged at {accepted.at:g}s "
                   f"(incarnation {accepted.incarnation}): the goal is cancelled at the service, "
                   "the run stopped cancelled, no request, side effect or verifier round after",
                   _lines(cancels))


def _unjudgeable(trace: Trace, cancels: list[CancelRecord]) -> Verdict | None:
    if trace.extra.cancel_hook is False or any(c.ack == "no_hook" for c in cancels):
        return Verdict(CHECK, "unknown", "the agent offers no cancel(request) hook, so a goal "
                       "cancel cannot be judged (optional; seed 002 §19.4)")
    if trace.goal is None or not trace.goal.used:
        return Verdict(CHECK, "unknown", "the agent never called the goal port "
                       "(AgentPorts.goals): an agent without one has no goal to cancel")
    if not cancels:
        return Verdict(CHECK, "unknown", "the goal cancel was declared, never issued: the run "
                       "ended before its time")
    return None


def _first_accepted(cancels: list[CancelRecord]) -> CancelRecord | None:
    """The answer by which the goal cancel was first accepted (maybe re-sent after a crash)."""
    return next((c for c in cancels if c.ack == "cancelled" or
                 (c.ack == "already_cancelled" and c.repeat == 1)), None)


def _cancel_event(goal: GoalTrace) -> GoalEventRecord | None:
    """The goal service's event that set the goal cancelled."""
    return next((e for e in goal.events if e.kind == "status" and e.ok and
                 e.status == "cancelled"), None)


def _acted_after(trace: Trace, goal: GoalTrace, cancel: CancelRecord) -> Iterable[str]:
    """Requests, side effects and verifier rounds after the cancel, by time or by place."""
    event = _cancel_event(goal)
    requests_before = event.requests_before if event is not None else None
    for r in trace.requests:
        if r.delivery != "refused" and (r.started_at > cancel.at + _EPS or (
                requests_before is not None and r.index > requests_before)):
            yield (f"request #{r.index} ({request_turn(trace, r, attempt=False)}, incarnation "
                   f"{r.incarnation}) started at {r.started_at:g}s, after the goal was "
                   f"cancelled at {cancel.at:g}s: the auto-continue was left armed")
            break
    pure = set(trace.expect.pure_tools)
    invocations_before = event.invocations_before if event is not None else None
    for i in trace.invocations:
        if not i.refused and i.tool not in pure and (i.started_at > cancel.at + _EPS or (
                invocations_before is not None and i.seq > invocations_before)):
            yield (f"tool {i.tool} (call {i.call_id}, incarnation {i.incarnation}) started at "
                   f"{i.started_at:g}s, after the goal was cancelled at {cancel.at:g}s")
            break
    for job in trace.jobs:
        if job.owner_session != NEIGHBOUR_SESSION and job.started_at > cancel.at + _EPS:
            yield (f"job {job.tool} ({job.execution_id}) started at {job.started_at:g}s, after "
                   f"the goal was cancelled at {cancel.at:g}s")
            break
    late = [e for e in goal.events if e.kind in ("verify", "complete") and e.incarnation > 0
            and (e.at > cancel.at + _EPS or (event is not None and e.seq > event.seq))]
    if late:
        yield (f"a verifier round or completion (goal event #{late[0].seq}, {late[0].kind}) came "
               f"at {late[0].at:g}s, after the goal was cancelled at {cancel.at:g}s")


def _end_problems(trace: Trace, goal: GoalTrace, cancel: CancelRecord) -> list[str]:
    problems = []
    if goal.final_status != "cancelled":
        problems.append(f"the goal was cancelled at {cancel.at:g}s, but the goal service holds "
                        f"it {goal.final_status!r}: the next session would resume it")
    stop = trace.outcome.stop_state if trace.outcome is not None else None
    if stop != "cancelled":
        problems.append(f"the goal was cancelled at {cancel.at:g}s, but the run ended {stop}")
    return problems


def _lines(cancels: list[CancelRecord]) -> tuple[str, ...]:
    return tuple(f"{c.at:g}s goal #{c.repeat} to incarnation {c.incarnation}: {c.ack} "
                 f"{c.detail}".strip() for c in cancels)
