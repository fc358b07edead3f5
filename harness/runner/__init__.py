"""Run scenarios against an agent, crash it at every persistence point, and judge the runs.

Seed 002 §19.6: a fixed fake model, counting tools, a crash before and after
every durable write, and three must-pass conditions. The runner plans the cases
of a scenario, runs each one over a world that survives the crash, and hands
back plain results::

    from harness.runner import plan_cases, run_case
    for case in plan_cases(scenario, path):
        result = run_case(case, scenario)
        assert result.passed, result.failed_verdicts
"""

from harness.runner._agents import agent_under_test, dialect_skip, load_agent_factory
from harness.runner._determinism import determinism_verdict, first_difference, run_case_twice
from harness.runner._model import ScriptedModel, call_id, classify_result
from harness.runner._points import WORLD_POINT_KINDS, WorldPoint, parse_world_point
from harness.runner._reached import Unreached, never_reached, proved_nothing_line
from harness.runner._results import (
    AttemptRow,
    Case,
    CaseResult,
    CrashSpec,
    CrashWhen,
    Verdict,
    VerdictStatus,
    strictly,
)
from harness.runner._run import (
    ERROR_CLASSES,
    AgentUnderTest,
    attempt_rows,
    blocking_tools,
    case_result,
    check_functions,
    crash_kind,
    crash_specs,
    default_agent_factory,
    plan_cases,
    record_points,
    record_run,
    run_case,
    run_trace,
    sample_cases,
)
from harness.runner._task import TOOL_PARAMETERS, task_for, tool_specs
from harness.runner._world import STATE_DIR, World, fault_plan
from harness.trace import Trace

__all__ = [
    "ERROR_CLASSES",
    "STATE_DIR",
    "TOOL_PARAMETERS",
    "WORLD_POINT_KINDS",
    "AgentUnderTest",
    "AttemptRow",
    "Case",
    "CaseResult",
    "CrashSpec",
    "CrashWhen",
    "ScriptedModel",
    "Trace",
    "Unreached",
    "Verdict",
    "VerdictStatus",
    "World",
    "WorldPoint",
    "agent_under_test",
    "attempt_rows",
    "blocking_tools",
    "call_id",
    "case_result",
    "check_functions",
    "classify_result",
    "crash_kind",
    "crash_specs",
    "default_agent_factory",
    "determinism_verdict",
    "dialect_skip",
    "fault_plan",
    "first_difference",
    "load_agent_factory",
    "never_reached",
    "parse_world_point",
    "plan_cases",
    "proved_nothing_line",
    "record_points",
    "record_run",
    "run_case",
    "run_case_twice",
    "run_trace",
    "sample_cases",
    "strictly",
    "task_for",
    "tool_specs",
]
