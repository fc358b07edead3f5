"""The one place a case's :class:`~harness.trace.Trace` is written.

A case ends in one of two ways: an agent the runner drove in process (its
incarnations, its outcome, its recoveries), or agent processes a served world
watched (``harness serve``, ``--exec``). Either way the records of what the world
saw (requests, invocations, the ledger, jobs, cancels, the goal) are the world's
own, taken here and nowhere else; the caller says only how the agent's runs ended.
A joined trace (exploration) is this trace's records renumbered, never a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from harness.runner._goal_trace import goal_trace
from harness.runner._results import Case
from harness.runner._world import World
from harness.trace import (
    CrashRecord,
    EffectRecord,
    ExpectationRecord,
    IncarnationRecord,
    OutcomeRecord,
    RecoveryRecord,
    SecretsRecord,
    Trace,
    TraceExtra,
)


@dataclass(frozen=True)
class Ending:
    """How the agent's runs of one case ended, as the runner or the server saw them.

    Each field is the trace's field of the same name (:meth:`trace_fields`).
    """

    crash: CrashRecord
    incarnations: tuple[IncarnationRecord, ...]
    outcome: OutcomeRecord | None
    final_incarnation: int
    error: str | None
    extra: TraceExtra
    expect: ExpectationRecord
    recoveries: tuple[RecoveryRecord, ...] = ()
    points: tuple[str, ...] = ()
    secrets: SecretsRecord | None = None

    def trace_fields(self) -> dict[str, Any]:
        """The fields by name, as the trace takes them (no copy: records are frozen)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def write_trace(world: World, case: Case, ending: Ending) -> Trace:
    """The trace of ``case``: what ``world`` saw, and how the agent's runs ended."""
    scenario = world.scenario
    return Trace(
        case=case.case_id,
        scenario=scenario.name,
        dialect=scenario.dialect,
        seed=case.seed,
        requests=world.request_records(),
        invocations=tuple(sorted(world.invocations, key=lambda r: r.seq)),
        effects=world_effects(world),
        jobs=world.jobs.records(),
        cancels=tuple(world.jobs.cancels),
        goal=goal_trace(world.goals),
        **ending.trace_fields(),
    )


def world_effects(world: World) -> tuple[EffectRecord, ...]:
    """The world's ledger as trace records, in the order the effects were applied."""
    return tuple(EffectRecord(e.seq, e.tool, e.key, e.idempotent, e.incarnation, e.at)
                 for e in world.ledger.effects)
