"""One case, from its scenario to its judged result: the runner's entry points.

A case is run one of two ways, which give the same trace: explored (a crash case
starts from the world copied at its point in its scenario's recorded run and stops
once it rejoins that run: :mod:`harness.runner._explore`) or replayed from its
start (:mod:`harness.runner._run`). This module chooses, and judges the trace; it
sits above both, so neither imports the other's caller.

Example::

    from harness.runner import plan_cases, run_case
    for case in plan_cases(scenario, "scenarios/mail.yaml"):
        print(run_case(case, scenario).status)
"""

from __future__ import annotations

from dataclasses import replace

from fakes import HarnessLimitExceeded
from harness.checks import Verdict
from harness.runner._explore import explored_trace
from harness.runner._points import is_world_point
from harness.runner._results import (
    NO_CRASH_CASE,
    SEALED_DISK,
    Case,
    CaseResult,
    without_secrets,
)
from harness.runner._run import (
    AgentUnderTest,
    case_result,
    default_agent_factory,
    limit_result,
    replay_each_case,
    replayed_trace,
)
from harness.runner._unfit_calls import unfit_call, unfit_result
from harness.scenario import Scenario, load_scenario
from harness.trace import Trace


def run_trace(case: Case, scenario: Scenario | None = None,
              agent_factory: AgentUnderTest | None = None, *,
              replay: bool | None = None) -> Trace:
    """Run ``case`` and return its trace, unjudged (see :func:`run_case`).

    By default a crash case starts from its scenario's recorded run and stops once
    it rejoins it (:mod:`harness.runner._explore`); ``replay=True`` (or the
    environment variable ``HARNESS_REPLAY=1``) runs it from the start to the end
    instead. Both give the same trace.
    """
    scenario = scenario if scenario is not None else load_scenario(case.source)
    return traced(case, scenario, agent_factory or default_agent_factory, replay)[0]


def traced(case: Case, scenario: Scenario, factory: AgentUnderTest, replay: bool | None
           ) -> tuple[Trace, str]:
    """``case``'s trace, and how it was run (``recorded``, ``rejoined`` or ``replayed``)."""
    if not (replay_each_case() if replay is None else replay):
        explored = explored_trace(case, scenario, factory)
        if explored is not None:
            return explored
    return replayed_trace(case, scenario, factory), "replayed"



def run_case(case: Case, scenario: Scenario | None = None,
             agent_factory: AgentUnderTest | None = None, *,
             replay: bool | None = None) -> CaseResult:
    """Run one case and judge it.

    ``scenario`` defaults to loading ``case.source``; ``agent_factory`` to the
    reference agent. A harness failure (not the agent's) is reported in
    ``CaseResult.error`` rather than raised, so one broken case never hides
    the others; so is an agent stopped at a harness limit (:func:`limit_result`).
    """
    scenario = scenario if scenario is not None else load_scenario(case.source)
    unfit = unfit_call(scenario, agent_factory)
    if unfit is not None:
        return unfit_result(case, unfit)
    try:
        trace, how = traced(case, scenario, agent_factory or default_agent_factory, replay)
    except HarnessLimitExceeded as limit:
        return limit_result(case, limit)
    return judged(case, scenario, trace, how)


def judged(case: Case, scenario: Scenario, trace: Trace, how: str = "replayed") -> CaseResult:
    """The result of ``case`` from its finished ``trace``: checked, secrets taken out.

    A contained run calls it in the harness's own process, on the trace the worker
    sent back (:mod:`harness.runner._contain`), so the agent never reaches its judge.
    """
    result = case_result(case, trace)
    result = replace(result, verdicts=(*result.verdicts, *no_crash_case(case, scenario, trace),
                                       *refused_by_the_seal(trace)),
                     exploration=how)
    return without_secrets(result, scenario.secret_values())


def refused_by_the_seal(trace: Trace) -> tuple[Verdict, ...]:
    """``unknown`` when the agent stopped on "Read-only file system": no scenario makes the
    case's files read-only, so the write went past them to the real disk, which the
    harness's sealed workers keep read-only. That is a C library's own file I/O (LanceDB,
    CrewAI's memory, writes its tables from Rust): the harness cannot put it in the case's
    world, and in production the write would have been made. The agent's other verdicts
    stand; the case proves nothing."""
    outcome = trace.outcome
    said = (outcome.reason if outcome is not None else "") + (trace.extra.agent_traceback or "")
    if "Read-only file system" not in said:
        return ()
    return (Verdict(SEALED_DISK, "unknown",
                    "the agent stopped on a write the real disk refused ('Read-only file "
                    "system'): code the harness cannot give the case's files (a C library's "
                    "own file I/O) wrote past them, and the harness keeps the real disk "
                    "read-only, so the stop is the harness's doing, not the agent's",
                    advice="run the agent with that storage off (CrewAI: memory=False), or "
                           "leave it out of the run"),)


def no_crash_case(case: Case, scenario: Scenario, trace: Trace) -> tuple[Verdict, ...]:
    """``unknown`` on the uncrashed case of a scenario whose ``crash.points`` asks for
    ``all`` when the run reached no persistence point of the agent's own: no crash case
    could be made, and the scenario proves nothing of a crash (an agent that keeps no state
    on disk, say). The case's own verdicts stand; ``--strict`` fails the run on this."""
    points = scenario.crash.points
    listed = [points] if isinstance(points, str) else points
    if case.crash is not None or "all" not in listed or trace.points:
        return ()
    reached = ("the agent reached no persistence point of its own (no file written, synced "
               "or committed) in its uncrashed run, so 'points: all' made no crash case")
    if any(is_world_point(point) for point in listed):
        meaning = ("only the world events it lists were crashed: the run proves nothing of a "
                   "crash between them")
    else:
        meaning = ("the run proves nothing of how it survives a crash, only its uncrashed "
                   "case was judged. Crash it at world events instead ('harness points "
                   "SCENARIO --agent SPEC' lists them), or give it state that outlives its "
                   "process")
    return (Verdict(NO_CRASH_CASE, "unknown", f"{reached}: {meaning}"),)
