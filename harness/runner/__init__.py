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

# TOOL_PARAMETERS lives in the neutral tool-kind table; kept here for code importing it here.
from harness.ports import TOOL_PARAMETERS
from harness.runner._agent_choice import AgentChoice
from harness.runner._agents import agent_under_test, dialect_skip, load_agent_factory
from harness.runner._case import run_case, run_trace
from harness.runner._contain import SealedCases, run_contained, tool_env_names
from harness.runner._determinism import determinism_verdict, first_difference, run_case_twice
from harness.runner._goal_trace import goal_trace
from harness.runner._guest import FUZZING, PLANNING, RECORDING, StepTo, contained
from harness.runner._interrupt import Interrupted, critical, reset_in_child, stopping_cleanly
from harness.runner._model import ScriptedModel, call_id, classify_result
from harness.runner._observed import observed_transcript
from harness.runner._plan import (
    RecordedRun,
    crash_kind,
    crash_specs,
    plan_cases,
    record_points,
    record_run,
    sample_cases,
)
from harness.runner._points import (
    WORLD_POINT_KINDS,
    WORLD_POINT_MEANINGS,
    WORLD_POINT_PATTERN,
    WorldPoint,
    is_world_point,
    parse_world_point,
)
from harness.runner._reached import (
    Unreached,
    declared_expectations,
    never_reached,
    never_reached_declared,
    proved_nothing_line,
)
from harness.runner._results import (
    FAIL_UNREACHED,
    NO_CRASH_CASE,
    AgentOutput,
    AttemptRow,
    Case,
    CaseResult,
    CrashSpec,
    CrashWhen,
    Verdict,
    VerdictStatus,
    strictly,
    without_secrets,
)
from harness.runner._run import (
    ERROR_CLASSES,
    AgentUnderTest,
    attempt_rows,
    blocking_tools,
    case_result,
    check_functions,
    default_agent_factory,
    expectation,
    outcome_record,
)
from harness.runner._secrets import SecretLook
from harness.runner._task import task_for, tool_specs
from harness.runner._trace_writer import Ending, world_effects, write_trace
from harness.runner._unfit_calls import check_fit, check_played
from harness.runner._worker_process import not_dumpable
from harness.runner._world import STATE_DIR, World, WorldCrash, fault_plan
from harness.trace import Trace

__all__ = [
    "ERROR_CLASSES",
    "FAIL_UNREACHED",
    "FUZZING",
    "NO_CRASH_CASE",
    "PLANNING",
    "RECORDING",
    "STATE_DIR",
    "TOOL_PARAMETERS",
    "WORLD_POINT_KINDS",
    "WORLD_POINT_MEANINGS",
    "WORLD_POINT_PATTERN",
    "AgentChoice",
    "AgentOutput",
    "AgentUnderTest",
    "AttemptRow",
    "Case",
    "CaseResult",
    "CrashSpec",
    "CrashWhen",
    "Ending",
    "Interrupted",
    "RecordedRun",
    "ScriptedModel",
    "SealedCases",
    "SecretLook",
    "StepTo",
    "Trace",
    "Unreached",
    "Verdict",
    "VerdictStatus",
    "World",
    "WorldCrash",
    "WorldPoint",
    "agent_under_test",
    "attempt_rows",
    "blocking_tools",
    "call_id",
    "case_result",
    "check_fit",
    "check_functions",
    "check_played",
    "classify_result",
    "contained",
    "crash_kind",
    "crash_specs",
    "critical",
    "declared_expectations",
    "default_agent_factory",
    "determinism_verdict",
    "dialect_skip",
    "expectation",
    "fault_plan",
    "first_difference",
    "goal_trace",
    "is_world_point",
    "load_agent_factory",
    "never_reached",
    "never_reached_declared",
    "not_dumpable",
    "observed_transcript",
    "outcome_record",
    "parse_world_point",
    "plan_cases",
    "proved_nothing_line",
    "record_points",
    "record_run",
    "reset_in_child",
    "run_case",
    "run_case_twice",
    "run_contained",
    "run_trace",
    "sample_cases",
    "stopping_cleanly",
    "strictly",
    "task_for",
    "tool_env_names",
    "tool_specs",
    "without_secrets",
    "world_effects",
    "write_trace",
]
