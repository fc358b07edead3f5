"""No vacuous pass: a case proves something only if its run ended and met its faults.

DESIGN §3: "A check whose fault or crash point was never reached is unknown,
never pass: a scenario cannot pass vacuously." Two checks hold a case to it:

- ``outcome``: the final incarnation ended with an :class:`~harness.ports.AgentOutcome`
  (a stop state to judge); an agent whose ``run()`` returns ``None`` or raises
  fails, instead of every stop-state check quietly saying ``unknown``;
- ``faults``: every turn the scenario scripts a fault for was reached; a fault
  of a turn never reached leaves the case ``unknown``, naming the fault.

Example::

    check_faults_reached(trace)   # unknown: "turn 2 attempt 1 http_error was never reached"
"""

from __future__ import annotations

from harness.checks._verdict import Verdict
from harness.trace import Trace


def check_outcome(trace: Trace) -> Verdict:
    """Fail when the final incarnation ended without an outcome though nothing crashed it."""
    if trace.outcome is not None:
        return Verdict("outcome", "pass", f"the run ended {trace.outcome.stop_state!r}")
    final = [i for i in trace.incarnations if i.number == trace.final_incarnation]
    if final and final[0].crashed_at is not None:
        return Verdict("outcome", "unknown", "the last incarnation was crashed by the case at "
                       f"{final[0].crashed_at}, so it could not report how it stopped")
    why = trace.error or "run() returned without an outcome"
    return Verdict("outcome", "fail", f"the run gave no stop state to judge: {why}",
                   advice="return an AgentOutcome (harness.agent) naming the stop state")


def check_faults_reached(trace: Trace) -> Verdict | None:
    """``unknown`` naming every fault of a turn no request reached; ``None``: none scripted.

    A fault for a later attempt of a turn the run did reach counts as met:
    scenarios script a failure for "every attempt" so that an agent retrying
    too often, or re-sending a cut answer blindly, still meets one; an agent
    that needed fewer attempts (it moved on, or gave up and the stop-state
    check judges that) never asks for the rest.
    """
    faults = trace.expect.faults
    if not faults:
        return None
    unfit = [f"turn {r.turn} attempt {r.attempt} {kind} (left out: {why})"
             for r in trace.requests for kind, why in r.unfit_faults]
    if unfit:
        return Verdict("faults", "unknown",
                       f"{unfit[0]}: the stream the agent asked for could not take it, so the "
                       "case proves nothing about it", tuple(f"never reached: {u}" for u in unfit))
    turns = {r.turn for r in trace.requests if r.delivery != "refused"}
    missed = [f"turn {turn} attempt {attempt} {kind}" for turn, attempt, kind in faults
              if turn not in turns]
    if missed:
        return Verdict("faults", "unknown",
                       f"{missed[0]} was never reached, so the case proves nothing about it",
                       tuple(f"never reached: {m}" for m in missed))
    return Verdict("faults", "pass", f"all {len(faults)} scripted fault(s) were reached")


