"""The trace of a served world: what the checks judge, built from the world's record alone.

An agent behind the server is a process, not an object: it reports no outcome,
no usage and no transcript of its own. The trace holds what the world saw
(requests, tool invocations, the ledger, which process each came from and where
it was killed) and the stop that the process's exit stands for: exit 0 is
``complete``; a non-zero exit, a hang past the timeout or no exit at all leave
the run without an outcome, with the reason (check ``outcome`` fails on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.ports import AgentOutcome
from harness.runner import (
    Case,
    Ending,
    SecretLook,
    expectation,
    observed_transcript,
    outcome_record,
    write_trace,
)
from harness.serve._world import ServedWorld
from harness.trace import (
    CrashRecord,
    IncarnationRecord,
    OutcomeRecord,
    Trace,
    TraceExtra,
    path_roots,
)


@dataclass
class ProcessRun:
    """One agent process: its incarnation, where it was killed, how it ended."""

    number: int
    killed_at: str | None = None
    exit_code: int | None = None
    error: str | None = None
    final_text: str | None = None
    output: str = ""  # the end of what it printed, stderr first
    ended_at: float = 0.0


def served_trace(world: ServedWorld, case: Case, runs: Sequence[ProcessRun],
                 secrets: SecretLook | None = None, folder: str | None = None) -> Trace:
    """The trace of ``case`` after the processes ``runs`` (none yet: what the world saw so far).

    ``folder``: the working folder the processes ran in (``--exec``), written
    ``<agent-folder>`` in their words.
    """
    final = runs[-1] if runs else None
    killed = [r.killed_at for r in runs if r.killed_at]
    crash = case.crash
    return write_trace(world, case, Ending(
        crash=CrashRecord(planned=None if crash is None else crash.label,
                          fired=killed[0] if killed else None,
                          second=killed[1] if len(killed) > 1 else None, error_class=False),
        incarnations=tuple(IncarnationRecord(r.number, "run", r.killed_at,
                                             "complete" if _completed(r) else None, r.error,
                                             r.ended_at) for r in runs),
        outcome=_outcome(world, final) if final is not None and _completed(final) else None,
        expect=expectation(world.scenario),
        final_incarnation=final.number if final is not None else world.incarnation,
        error=final.error if final is not None else None,
        extra=_extra(world, final),
        secrets=secrets.record() if secrets is not None else None,
    ), path_roots(folder))


def _completed(run: ProcessRun) -> bool:
    return run.killed_at is None and run.exit_code == 0


def _outcome(world: ServedWorld, final: ProcessRun) -> OutcomeRecord:
    body = world.last_request_body(final.number)
    transcript = observed_transcript(world.scenario.dialect, body)
    outcome = AgentOutcome(stop_state="complete", reason="the agent process exited 0",
                           transcript=transcript, billed_usage=None, context_tokens=None,
                           turns=sum(1 for r in world.requests
                                     if r.record.incarnation == final.number
                                     and r.record.turn > 0),
                           final_text=final.final_text)
    return outcome_record(outcome)


def _extra(world: ServedWorld, final: ProcessRun | None) -> TraceExtra:
    # "plain": the agent reports nothing of its own, as an unchanged main does. Real time
    # is read in scenario seconds: the timing checks allow a real process's jitter
    # (harness.checks._tolerance). What the world recorded (its events, the stop sequences
    # the requests asked for ...) the trace writer adds, as for an agent in the worker.
    return TraceExtra(agent="plain", process=True, time_scale=world.time_scale,
                      final_answer=final.final_text or None if final is not None else None)


def folder_files(root: str) -> Mapping[str, bytes]:
    """Every file under ``root`` with its bytes, by path relative to it (for J3)."""
    base = Path(root)
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and "node_modules" not in p.parts}
