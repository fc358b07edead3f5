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

from dataclasses import dataclass

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


@dataclass(frozen=True)
class FaultNotMet:
    """A scripted fault a case did not meet: its turn was never reached, or the stream the
    agent asked for could not take it (``left_out`` says why: a whole answer, say)."""

    turn: int
    attempt: int
    kind: str
    left_out: str | None = None

    def __str__(self) -> str:
        named = f"turn {self.turn} attempt {self.attempt} {self.kind}"
        return named if self.left_out is None else f"{named} (left out: {self.left_out})"

    @property
    def reason(self) -> str:
        """Why the case proves nothing about it: the ``faults`` verdict's words, which
        ``harness validate --agent`` prints too (:func:`harness.runner.check_played`)."""
        if self.left_out is not None:
            return (f"{self}: the stream the agent asked for could not take it, so the case "
                    "proves nothing about it")
        return f"{self} was never reached, so the case proves nothing about it"


def faults_not_met(trace: Trace) -> list[FaultNotMet]:
    """The scripted faults ``trace`` did not meet: those its agent's requests could not take,
    else those of turns no request reached (see :func:`check_faults_reached`)."""
    unfit = [FaultNotMet(r.turn, r.attempt, kind, why)
             for r in trace.requests for kind, why in r.unfit_faults]
    if unfit:
        return unfit
    turns = {r.turn for r in trace.requests if r.delivery != "refused"}
    return [FaultNotMet(turn, attempt, kind) for turn, attempt, kind in trace.expect.faults
            if turn not in turns]


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
    not_met = faults_not_met(trace)
    if not_met:
        return Verdict("faults", "unknown", not_met[0].reason,
                       tuple(f"never reached: {fault}" for fault in not_met))
    return Verdict("faults", "pass", f"all {len(faults)} scripted fault(s) were reached")
