"""Background jobs and cancellation, judged from the job runner's record (seed 002 §19.4).

The runner saw every job start, every output read, every signal, every exit and
every wake-up taken; the transcript shows what the model was told. From these
alone, so they apply to any agent that uses the job port and cancel hook:

- ``JOBS`` (the reconciliation table): no job the runner had started is run
  again for the same call (re-attach or replay instead); no exit code is told
  for a process that vanished or a runner that could not be asked; output lost
  beyond the runner's window is reported ``lossy``; a re-attached reader loses
  and repeats no line; a TERM is followed through until the process is gone (a job
  that got TERM never runs on to its own exit unkilled, across a restart too);
- ``JOBS:wakeup`` (the wait/completion race): each completion reaches the model
  exactly once, by its call's reply or by a wake-up message
  (``JOB_COMPLETED <execution id>``) — never neither, never both; after a turn,
  goal or session cancel, a late completion wakes nothing;
- ``CANCEL``: a repeated cancel acts once; a cancel touches only its target
  (never another session's job); a turn or session cancel ends the run
  ``cancelled`` with no request after it; a tool-call, job or attempt cancel
  leaves the run going, and the cancelled call's reply says ``cancelled``. What a
  goal cancel must do beyond acting once on its target is ``CANCEL:goal``'s
  (:mod:`._goal_cancel`).

An agent without a job port or cancel hook is ``unknown``, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harness.checks._verdict import Verdict
from harness.ports import NEIGHBOUR_SESSION
from harness.trace import CancelRecord, JobRecord, MessageRecord, Trace

_EPS = 1e-6
#: How long after a TERM a job may still exit on its own before the TERM counts as
#: abandoned: well beyond the few seconds' grace agents give before KILL.
TERM_FOLLOW_THROUGH_SECONDS = 30.0
#: Cancels that end the run: a late completion after one is recorded, never woken.
_OWNER_TARGETS = ("turn", "goal", "session")


def _own_jobs(trace: Trace) -> list[JobRecord]:
    return [j for j in trace.jobs if j.owner_session != NEIGHBOUR_SESSION]


def _replies(trace: Trace) -> dict[str, MessageRecord]:
    transcript = trace.outcome.transcript if trace.outcome is not None else ()
    return {m.call_id: m for m in transcript if m.role == "tool" and m.call_id}


def _content(message: MessageRecord | None) -> dict[str, Any]:
    if message is None:
        return {}
    try:
        value = json.loads(message.text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _told_exit_code(message: MessageRecord | None) -> int | None:
    """The exit code a reply tells the model, unless it says the call was cancelled."""
    content = _content(message)
    code = content.get("exit_code")
    if content.get("status") == "cancelled" or isinstance(code, bool):
        return None
    return code if isinstance(code, int) else None


def _crash_times(trace: Trace) -> list[float]:
    return [i.ended_at for i in trace.incarnations if i.purpose == "run" and i.crashed_at]


def _crossed_restart(job: JobRecord, trace: Trace) -> bool:
    return any(job.started_at <= at and (job.ended_at is None or at < job.ended_at)
               for at in _crash_times(trace))


def _restarted_after(job: JobRecord, trace: Trace) -> bool:
    return any(job.started_at <= at for at in _crash_times(trace))


def _not_used(trace: Trace, check: str, port: str) -> Verdict | None:
    declared = trace.extra.jobs_declared
    if not declared:
        return None
    return Verdict(check, "unknown", f"the scenario declares jobs {declared}, but no job reached "
                   f"the job runner: the agent does not use the {port} (optional; seed 002 §19.4)")


# ---------------------------------------------------------------------------- JOBS


def check_jobs(trace: Trace) -> Verdict | None:
    """The reconciliation table of seed 002 §19.4, row by row, as the runner saw it."""
    jobs = _own_jobs(trace)
    if not jobs:
        return _not_used(trace, "JOBS", "job port (AgentPorts.jobs)")
    replies = _replies(trace)
    problems = list(_reruns(jobs))
    for job in _first_per_call(jobs):
        problems += _job_problems(job, replies.get(job.call_id), trace)
    lines = [_describe(job, trace) for job in jobs]
    if problems:
        return Verdict("JOBS", "fail", problems[0], (*problems, *lines),
                       advice="keep a durable job record (identity beyond the PID, state, "
                              "output offset) and reconcile it with the runner on restart")
    tested = [j for j in jobs if _restarted_after(j, trace) or _met_a_fault(j)]
    if not tested:
        return Verdict("JOBS", "unknown", "no restart came after a job started, and no job met "
                       "a runner fault (vanished, lossy output, TERM): nothing to reconcile")
    return Verdict("JOBS", "pass", f"{len(tested)} job(s) met a restart or a runner fault, "
                   "each reconciled by its row: none re-run, no exit code invented, lost output "
                   "reported, every TERM followed through", tuple(lines))


def _first_per_call(jobs: list[JobRecord]) -> list[JobRecord]:
    seen: dict[str, JobRecord] = {}
    for job in jobs:
        seen.setdefault(job.call_id, job)
    return list(seen.values())


def _reruns(jobs: list[JobRecord]) -> Iterable[str]:
    by_call: dict[str, list[JobRecord]] = {}
    for job in jobs:
        by_call.setdefault(job.call_id, []).append(job)
    for call_id, started in by_call.items():
        if len(started) > 1:
            yield (f"the job of call {call_id} started {len(started)} times (incarnations "
                   f"{[j.incarnation for j in started]}): the runner had it already, so it is "
                   "re-attached or its result replayed, never run again (seed 002 §19.4)")


def _met_a_fault(job: JobRecord) -> bool:
    return job.state == "vanished" or any(r.lossy for r in job.reads) or bool(job.signals)


def _job_problems(job: JobRecord, reply: MessageRecord | None, trace: Trace) -> list[str]:
    told = _told_exit_code(reply)
    content = _content(reply)
    name = f"job {job.execution_id} ({job.tool}, call {job.call_id})"
    problems = []
    if job.state == "vanished" and told is not None:
        problems.append(f"{name} vanished without an exit code, but the model was told exit "
                        f"code {told}: mark it orphaned, never invent one (seed 002 §19.4)")
    if job.unqueryable_after_crash and _crossed_restart(job, trace) and told is not None \
            and job.claimed_by is None:
        problems.append(f"{name}: the runner could not be asked after the restart, but the "
                        f"model was told exit code {told}: the outcome is unknown")
    if job.state == "exited" and told is not None and told != job.exit_code:
        problems.append(f"{name} exited {job.exit_code}, the model was told {told}")
    if any(r.lossy for r in job.reads) and "output" in content and not content.get("lossy"):
        problems.append(f"{name}: output slid out of the runner's window, and the reply does "
                        "not say lossy")
    problems += _output_problems(name, job, content)
    if any(s.signal == "TERM" for s in job.signals) and job.state == "running":
        problems.append(f"{name} got TERM and still runs: escalate to KILL and wait for the "
                        "process tree to exit (seed 002 §19.4, the stopping row)")
    problems += _term_left_to_run_out(name, job)
    return problems


def _term_left_to_run_out(name: str, job: JobRecord) -> list[str]:
    """A TERM whose job ran on to its own end, never killed: the stop was not finished.

    Seen from the runner alone: the last TERM, no KILL after it, and an exit of the job's
    own well past any grace period. An agent that restarts while its job is ``stopping``
    and then waits for the job instead of going on TERM→KILL leaves exactly this.
    """
    terms = [s for s in job.signals if s.signal == "TERM"]
    if not terms or job.state != "exited" or job.ended_at is None:
        return []
    last = terms[-1]
    if any(s.signal == "KILL" and s.at >= last.at for s in job.signals):
        return []
    if job.ended_at - last.at <= TERM_FOLLOW_THROUGH_SECONDS:
        return []
    return [f"{name} got TERM at {last.at:g}s (incarnation {last.incarnation}) and ran on to "
            f"its own exit at {job.ended_at:g}s, never killed: a job left stopping is taken "
            "on to KILL after the grace period, after a restart too (seed 002 §19.4, the "
            "stopping row)"]


def _output_problems(name: str, job: JobRecord, content: dict[str, Any]) -> list[str]:
    output = content.get("output")
    if not isinstance(output, list) or job.state != "exited" or content.get("lossy") or \
            not isinstance(content.get("exit_code"), int):
        return []  # only a reply that reports the completion must hold all of its output
    if len(set(map(str, output))) < len(output):
        return [f"{name}: the reply repeats output lines; a re-attached reader goes on from "
                "the recorded offset, not from the start"]
    if len(output) < job.lines and not any(r.lossy for r in job.reads):
        return [f"{name} wrote {job.lines} lines, the reply holds {len(output)}: output read "
                "before the restart was lost"]
    return []


def _describe(job: JobRecord, trace: Trace) -> str:
    readers = sorted({r.incarnation for r in job.reads})
    signals = ", ".join(f"{s.signal}@{s.at:g}s" for s in job.signals) or "none"
    across = "across a restart" if _crossed_restart(job, trace) else "no restart"
    return (f"{job.execution_id} {job.tool} call {job.call_id}: {job.state}"
            f"{'' if job.exit_code is None else f' exit {job.exit_code}'}; started by "
            f"incarnation {job.incarnation} at {job.started_at:g}s ({across}); read by "
            f"{readers or 'none'}; signals {signals}")


# --------------------------------------------------------------------- JOBS:wakeup


def check_wakeups(trace: Trace) -> Verdict | None:
    """Each completion reaches the model exactly once (the wait/completion race)."""
    completed = [j for j in _own_jobs(trace) if j.state == "exited"]
    if not completed:
        return None if _own_jobs(trace) else _not_used(trace, "JOBS:wakeup", "job port")
    replies = _replies(trace)
    problems: list[str] = []
    lines: list[str] = []
    for job in completed:
        verdict = _delivery(job, replies.get(job.call_id), trace)
        (problems if verdict.startswith("!") else lines).append(verdict.lstrip("!"))
    if problems:
        return Verdict("JOBS:wakeup", "fail", problems[0], (*problems, *lines),
                       advice="a waiter claims a completion only once it holds the result; a "
                              "cancelled waiter leaves the runner's wake-up for the next turn")
    raced = sum(1 for j in completed if _raced(j, trace))
    return Verdict("JOBS:wakeup", "pass", f"{len(completed)} completion(s), {raced} of them "
                   "racing a cancel, each delivered once or kept as a wake-up", tuple(lines))


def _delivery(job: JobRecord, reply: MessageRecord | None, trace: Trace) -> str:
    """One line on how ``job``'s completion reached the model; ``!`` first when wrong."""
    transcript = trace.outcome.transcript if trace.outcome is not None else ()
    marker = f"JOB_COMPLETED {job.execution_id}"
    woken = [m for m in transcript if m.role == "user" and marker in m.text]
    by_reply = _told_exit_code(reply) == job.exit_code
    name = f"job {job.execution_id} (call {job.call_id}, done at {job.ended_at:g}s)"
    owner = _owner_cancel(trace, job)
    if owner is not None:
        if woken:
            return (f"!{name} completed after the {owner.target} was cancelled at "
                    f"{owner.at:g}s, and woke the model: record a late completion, never wake "
                    "a cancelled owner (seed 002 §19.4)")
        return f"{name}: completed after the {owner.target} cancel; recorded, not woken"
    deliveries = int(by_reply) + len(woken)
    if deliveries > 1:
        return (f"!{name} reached the model {deliveries} times (reply: {by_reply}, wake-ups: "
                f"{len(woken)}): a waiter that got the result claims it, so no wake-up follows")
    if deliveries == 1:
        return f"{name}: delivered once, {'by its reply' if by_reply else 'by a wake-up'}"
    # The model was asked again after the job ended: its call's reply reached it (the
    # reply is written once the call settled), or a request came later in time.
    later = reply is not None or any(r.started_at > (job.ended_at or 0) + _EPS
                                     for r in trace.requests)
    if job.claimed_by is not None and later:
        return (f"!{name}: its waiter claimed the completion (incarnation {job.claimed_by}) "
                "but the model never got it: neither the reply nor a wake-up carried it")
    if job.claimed_by is None and job.acknowledged_by is None:
        return f"{name}: kept as a durable wake-up in the runner"
    if not later:
        return f"{name}: no request after it to carry the result"
    return f"!{name}: neither its reply nor a wake-up message carried the result"


def _owner_cancel(trace: Trace, job: JobRecord) -> CancelRecord | None:
    for cancel in trace.cancels:
        if cancel.target in _OWNER_TARGETS and cancel in _accepted(trace) and \
                job.ended_at is not None and cancel.at <= job.ended_at + _EPS:
            return cancel
    return None


def _raced(job: JobRecord, trace: Trace) -> bool:
    return any(c.target in ("tool_call", "job") and job.ended_at is not None and
               abs(c.at - job.ended_at) <= _EPS for c in trace.cancels)


# -------------------------------------------------------------------------- CANCEL


def check_cancels(trace: Trace) -> Verdict | None:
    """A cancel acts once, on its target only (seed 002 §19.4, "取消必须明确目标")."""
    if trace.extra.cancel_hook is False or \
            any(c.ack == "no_hook" for c in trace.cancels):
        return Verdict("CANCEL", "unknown", "the agent offers no cancel(request) hook, so "
                       "cancellation by target cannot be judged (optional; seed 002 §19.4)")
    if not trace.cancels:
        declared = trace.extra.cancels_declared
        return Verdict("CANCEL", "unknown", f"{declared} cancel(s) declared, none issued: the run "
                       "ended before their time") if declared else None
    judged = [c for c in trace.cancels if c.ack not in ("unsupported", "crashed")]
    problems = [*_neighbour_touched(trace), *_not_idempotent(trace)]
    for cancel in _accepted(trace):
        problems += _target_problems(cancel, trace)
    unsupported = sorted({c.target for c in trace.cancels if c.ack == "unsupported"})
    lines = [f"{c.at:g}s {c.target} {c.ref or ''} #{c.repeat}: {c.ack} {c.detail}".strip()
             for c in trace.cancels]
    if problems:
        return Verdict("CANCEL", "fail", problems[0], (*problems, *lines),
                       advice="name the target of every cancel, act on it once, and never "
                              "stop a job another session owns")
    if not judged:
        return Verdict("CANCEL", "unknown", f"the agent has no {unsupported} target: nothing to "
                       "judge", tuple(lines))
    note = f"; {unsupported} not offered" if unsupported else ""
    return Verdict("CANCEL", "pass", f"{len(judged)} cancel request(s): each acted once, on its "
                   f"target only{note}", tuple(lines))


def _accepted(trace: Trace) -> list[CancelRecord]:
    """The record by which each cancel was first accepted (maybe before a crash and re-sent)."""
    first: dict[int, CancelRecord] = {}
    for cancel in trace.cancels:
        if cancel.ack == "cancelled" or (cancel.ack == "already_cancelled" and cancel.repeat == 1):
            first.setdefault(cancel.index, cancel)
    return list(first.values())


def _neighbour_touched(trace: Trace) -> Iterable[str]:
    for job in trace.jobs:
        if job.owner_session == NEIGHBOUR_SESSION and job.signals:
            yield (f"job {job.job_id} of {job.owner_session} got "
                   f"{[s.signal for s in job.signals]}: a cancel never stops another "
                   "session's shared job (seed 002 §19.4, session row)")


def _not_idempotent(trace: Trace) -> Iterable[str]:
    for cancel in trace.cancels:
        if cancel.repeat > 1 and cancel.ack == "cancelled":
            yield (f"the {cancel.target} cancel sent again at {cancel.at:g}s (repeat "
                   f"{cancel.repeat}) was acted on again: a cancel is idempotent")
    for job in _own_jobs(trace):
        terms: dict[int, int] = {}
        for signal in job.signals:
            if signal.signal == "TERM":
                terms[signal.incarnation] = terms.get(signal.incarnation, 0) + 1
        for incarnation, count in terms.items():
            if count > 1:
                yield (f"job {job.execution_id} got TERM {count} times from incarnation "
                       f"{incarnation}: a repeated cancel must not signal again")


def _target_problems(cancel: CancelRecord, trace: Trace) -> list[str]:
    stop = trace.outcome.stop_state if trace.outcome is not None else None
    if cancel.target == "goal":
        return []  # judged by CANCEL:goal, with the goal service's record
    if cancel.target in _OWNER_TARGETS:
        return _owner_problems(cancel, stop, trace)
    problems = []
    owner_later = any(c.target in _OWNER_TARGETS for c in _accepted(trace))
    if stop == "cancelled" and not owner_later:
        problems.append(f"a {cancel.target} cancel at {cancel.at:g}s ended the whole run "
                        "cancelled; only its target stops")
    if cancel.target in ("tool_call", "job"):
        problems += _call_problems(cancel, trace)
    if cancel.target == "attempt":
        problems += _attempt_problems(cancel, trace)
    return problems


def _attempt_problems(cancel: CancelRecord, trace: Trace) -> list[str]:
    """The request in flight ends at the cancel, and its turn asks again."""
    flying = [r for r in trace.requests if r.incarnation == cancel.incarnation
              and r.started_at <= cancel.at + _EPS
              and (r.ended_at is None or r.ended_at >= cancel.at - _EPS)]
    if not flying:
        return []
    request = flying[-1]
    if request.ended_at is None or request.ended_at > cancel.at + _EPS:
        return [f"request #{request.index} was in flight when its attempt was cancelled at "
                f"{cancel.at:g}s and went on until {request.ended_at}"]
    again = [r for r in trace.requests if r.index > request.index and r.turn == request.turn]
    if not again:
        return [f"the attempt of turn {request.turn} was cancelled at {cancel.at:g}s and the "
                "turn never asked again: an attempt cancel ends that request only"]
    return []


def _owner_problems(cancel: CancelRecord, stop: str | None, trace: Trace) -> list[str]:
    problems = []
    if stop != "cancelled":
        problems.append(f"the {cancel.target} was cancelled at {cancel.at:g}s, but the run "
                        f"ended {stop}")
    after = [r for r in trace.requests if r.started_at > cancel.at + _EPS]
    if after:
        problems.append(f"request #{after[0].index} started at {after[0].started_at:g}s, after "
                        f"the {cancel.target} was cancelled at {cancel.at:g}s")
    if cancel.target == "session":
        running = [j.execution_id for j in _own_jobs(trace) if j.state == "running"]
        if running:
            problems.append(f"jobs {running} of the cancelled session still run")
    return problems


def _call_problems(cancel: CancelRecord, trace: Trace) -> list[str]:
    jobs = _own_jobs(trace)
    target = next((j for j in jobs if cancel.ref in (j.call_id, j.job_id)), None)
    call_id = target.call_id if target is not None else cancel.ref
    reply = _replies(trace).get(call_id or "")
    problems = []
    if reply is not None and reply.status != "cancelled" and \
            _content(reply).get("status") != "cancelled" and _told_exit_code(reply) is None:
        problems.append(f"call {call_id} was cancelled at {cancel.at:g}s, and its reply says "
                        f"{reply.status}: record a cancelled result")
    for job in jobs:
        hit = [s for s in job.signals if abs(s.at - cancel.at) <= _EPS]
        if hit and job is not target:
            problems.append(f"the cancel of {cancel.ref} signalled job {job.execution_id} too")
    return problems


# -------------------------------------------------------------------- CANCEL:held


def check_held_after_return(trace: Trace) -> Verdict | None:
    """Fail when the agent's run returned while a worker thread of it still slept.

    A ``time.sleep`` on a worker thread (``asyncio.to_thread``, an executor) cannot be
    interrupted: a cancel stops the coroutine awaiting it, but ``asyncio.run`` waits
    for its executor before the process exits, so the process lives on until the
    sleep is over (a Retry-After of minutes, after the user pressed Ctrl-C). The world
    sees the run return and the clock held until the thread woke (``held_after_return``
    in ``Trace.extra``). ``None`` when no run ended so: nothing to judge.
    """
    held = [h for h in trace.extra.held_after_return or () if h.until > h.returned_at + _EPS]
    if not held:
        return None
    cancels = [c for c in _accepted(trace) if c.target in _OWNER_TARGETS]
    after = f" after the {cancels[0].target} cancel at {cancels[0].at:g}s" if cancels else ""
    lines = tuple(f"incarnation {h.incarnation}: returned at {h.returned_at:g}s, a worker "
                  f"thread slept until {h.until:g}s" for h in held)
    first = held[0]
    return Verdict("CANCEL:held", "fail", f"the run returned at {first.returned_at:g}s"
                   f"{after}, but a worker thread of the agent slept on until "
                   f"{first.until:g}s: the process cannot exit before, and no cancel "
                   "reaches a time.sleep in a thread", lines,
                   advice="wait with asyncio.sleep (or an Event with a timeout) on the event "
                          "loop, so a cancel ends the wait at once")
