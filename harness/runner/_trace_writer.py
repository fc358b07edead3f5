"""The one place a case's :class:`~harness.trace.Trace` is written.

A case ends in one of two ways: an agent the runner drove in process (its
incarnations, its outcome, its recoveries), or agent processes a served world
watched (``harness serve``, ``--exec``). Either way the records of what the world
saw (requests, invocations, the ledger, jobs, cancels, the goal) are the world's
own, taken here and nowhere else; the caller says only how the agent's runs ended.
So is the part of the trace's ``extra`` that both kinds of case take from the world
and its scenario (:func:`world_extra`): a field one kind wrote and the other forgot
was a false verdict (a served agent's stop sequences, which I8 reads).
A joined trace (exploration) is this trace's records renumbered, never a new one.

What the agent's runs said in words (a traceback, an error, a stop reason, the final
answer, a refused database's path) is written with its real paths made portable
(:func:`~harness.trace.portable_paths`): the same agent on the same seed gives the same
trace from any checkout, virtual environment or machine.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from fakes import VirtualClock
from harness.runner._goal_trace import goal_trace
from harness.runner._ledger_pipe import installed, stream_parts, with_parts
from harness.runner._results import Case
from harness.runner._world import World
from harness.trace import (
    CrashRecord,
    EffectRecord,
    ExpectationRecord,
    IncarnationRecord,
    OutcomeRecord,
    PathRoots,
    RecoveryRecord,
    SecretsRecord,
    Trace,
    TraceExtra,
    path_roots,
    portable_paths,
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


def write_trace(world: World, case: Case, ending: Ending, roots: PathRoots | None = None
                ) -> Trace:
    """The trace of ``case``: what ``world`` saw, and how the agent's runs ended.

    ``roots``: where the paths in the runs' words are written from (default: this
    process's, :func:`~harness.trace.path_roots`).
    """
    scenario = world.scenario
    ending = replace(ending, extra=world_extra(world, ending.extra))
    trace = Trace(
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
        **portable_ending(ending, roots).trace_fields(),
    )
    ledger, clock, witness = world.ledger, world.clock, installed()
    if ledger.witness is None or witness is None:
        return trace
    # Where its effects and requests came from, for the harness that was told them, and
    # its clock as the trace leaves it, read against the harness's (_ledger_pipe).
    if isinstance(clock, VirtualClock) and clock.witness is witness:
        return with_parts(trace, witness.read(ledger.stream, clock.now))
    return with_parts(trace, stream_parts(ledger.stream))


def portable_ending(ending: Ending, roots: PathRoots | None = None) -> Ending:
    """``ending`` with the real paths in its words written from their roots.

    Only words the agent's runs produced: an exception's message and traceback name
    the checkout, the interpreter and the temporary folder they ran in. The records
    of what the world saw hold the world's own paths (``/agent``) already.
    """
    roots = roots if roots is not None else path_roots()

    def said(text: str | None) -> str | None:
        return None if text is None else portable_paths(text, roots)

    extra = ending.extra
    return replace(
        ending,
        incarnations=tuple(replace(i, error=said(i.error)) for i in ending.incarnations),
        outcome=None if ending.outcome is None else replace(
            ending.outcome, reason=portable_paths(ending.outcome.reason, roots)),
        error=said(ending.error),
        recoveries=tuple(replace(r, error=said(r.error)) for r in ending.recoveries),
        extra=replace(
            extra, final_answer=said(extra.final_answer),
            agent_traceback=said(extra.agent_traceback),
            databases_refused=None if extra.databases_refused is None else tuple(
                portable_paths(path, roots) for path in extra.databases_refused)),
    )


def world_extra(world: World, extra: TraceExtra) -> TraceExtra:
    """``extra`` with what ``world`` recorded and its scenario declares, whoever drove the
    agent: an agent in the harness's worker or agent processes behind the server.

    Each is ``None`` where the case has nothing there: the trace leaves it out, so only
    the cases that have something there hold the field in their digest.
    """
    scenario = world.scenario
    hook, backup = scenario.hook, scenario.provider.backup_model
    return replace(
        extra,
        world_events=tuple(world.events) or None,
        # Requests in another dialect than the scenario's (the dialect check), and the
        # turns the provider refused to answer (the failure timeline's words for them).
        misdialed_requests=tuple(world.misdialed) or None,
        refused_turns=tuple(world.refused_turns) or None,
        # What I8 reads as an answer's own ending, however the agent is run.
        stop_sequences=tuple(world.stop_sequences) or None,
        child_environments=world.child_environments(),
        loop_phrases=world.loop_phrases(),
        sampled_requests=world.sampled_requests(),
        output_ceiling=scenario.provider.max_output_tokens,
        asked_outputs=world.asked_outputs(),
        hook_tool=hook.run if hook is not None else None,
        hook_max_depth=hook.max_depth if hook is not None else None,
        training_data=True if scenario.training_data else None,
        # The model a declared backup stands in for (retry:backup), the scenario's own.
        primary_model=scenario.provider.model if backup is not None else None,
        backup_model=backup,
        # The most characters of one tool result a request may carry, and what each carried.
        max_tool_result_chars=scenario.expect.max_tool_result_chars,
        inline_results=world.inline_results())


def world_effects(world: World) -> tuple[EffectRecord, ...]:
    """The world's ledger, in the order the effects were applied: its records are the
    trace's own."""
    return tuple(world.ledger.effects)
