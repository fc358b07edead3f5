"""YAML fault scenarios: typed models, their JSON Schema and a loader with located errors.

A scenario is plain data; the runner executes it. Load files with
:func:`load_scenario` / :func:`load_scenarios`; every mistake is a
:class:`ScenarioError` saying ``file:line:col``, what came and what is allowed::

    from harness.scenario import load_scenarios
    scenarios = load_scenarios(["scenarios/"])
"""

# Crash classes, HTTP statuses and tool kinds are the fakes' vocabulary, stop states the
# agent contract's (DESIGN L5, in harness.ports); the scenario format names them as they do.
from fakes import CRASH_CLASSES, CrashClass
from harness._errors import ScenarioError
from harness.ports import (
    DIALECTS,
    HTTP_ERROR_STATUSES,
    STOP_STATES,
    TOOL_KINDS,
    Dialect,
    StopState,
    ToolKind,
)
from harness.scenario._faults import (
    FAULT_KINDS,
    FAULT_MODELS_BY_NAME,
    AnyFault,
    FaultAt,
    FaultModel,
    retry_after_problems,
)
from harness.scenario._goals import (
    GoalDeclaration,
    GoalEditDeclaration,
    VerifierRuleDeclaration,
    fake_verifier,
)
from harness.scenario._loader import (
    check_blocking_behaviours,
    check_call_arguments,
    check_crash_points,
    check_targets,
    fault_error,
    load_each,
    load_scenario,
    load_scenarios,
    parse_scenario,
    scenario_error,
    scenario_files,
    validate_paths,
)
from harness.scenario._model import (
    HOST_PATTERN,
    BudgetLimits,
    CrashSelection,
    Expectation,
    Provider,
    Reply,
    ReplyCondition,
    ReplyUsage,
    Scenario,
    ScriptedCall,
    source_of,
)
from harness.scenario._names import (
    CONCURRENCY_SAFE_KINDS,
    DEFAULT_INVARIANTS,
    FINISH_REASONS,
    INVARIANT_IDS,
    LINE_ENDING_STYLES,
    SCENARIO_NAME_PATTERN,
    TARGET_PATTERN,
    TOOL_NAME_PATTERN,
    TOOL_OUTCOMES,
    InvariantId,
    ScriptedFinish,
    ToolOutcome,
)
from harness.scenario._problems import did_you_mean, in_flow_style
from harness.scenario._schema import SCHEMA_PATH, scenario_json_schema
from harness.scenario._source import SourceMap
from harness.scenario._tools import (
    BEHAVIOUR_KINDS,
    BEHAVIOUR_MODELS,
    AnyBehaviour,
    FailingBehaviour,
    HangingBehaviour,
    IgnoresCancellationBehaviour,
    InstantBehaviour,
    SlowBehaviour,
    SubprocessBehaviour,
    ToolDeclaration,
)
from harness.scenario._yaml import MAX_BYTES, read_yaml

# One model per fault kind, derived from the fakes' declaration (HttpErrorFault, StallFault, …).
globals().update(FAULT_MODELS_BY_NAME)

__all__ = [
    "BEHAVIOUR_KINDS",
    "BEHAVIOUR_MODELS",
    "CONCURRENCY_SAFE_KINDS",
    "CRASH_CLASSES",
    "DEFAULT_INVARIANTS",
    "DIALECTS",
    "FAULT_KINDS",
    "FAULT_MODELS_BY_NAME",
    "FINISH_REASONS",
    "HOST_PATTERN",
    "HTTP_ERROR_STATUSES",
    "INVARIANT_IDS",
    "LINE_ENDING_STYLES",
    "MAX_BYTES",
    "SCENARIO_NAME_PATTERN",
    "SCHEMA_PATH",
    "STOP_STATES",
    "TARGET_PATTERN",
    "TOOL_KINDS",
    "TOOL_NAME_PATTERN",
    "TOOL_OUTCOMES",
    "AnyBehaviour",
    "AnyFault",
    "BudgetLimits",
    "CrashClass",
    "CrashSelection",
    "Dialect",
    "Expectation",
    "FailingBehaviour",
    "FaultAt",
    "FaultModel",
    "GoalDeclaration",
    "GoalEditDeclaration",
    "HangingBehaviour",
    "IgnoresCancellationBehaviour",
    "InstantBehaviour",
    "InvariantId",
    "Provider",
    "Reply",
    "ReplyCondition",
    "ReplyUsage",
    "Scenario",
    "ScenarioError",
    "ScriptedCall",
    "ScriptedFinish",
    "SlowBehaviour",
    "SourceMap",
    "StopState",
    "SubprocessBehaviour",
    "ToolDeclaration",
    "ToolKind",
    "ToolOutcome",
    "VerifierRuleDeclaration",
    "check_blocking_behaviours",
    "check_call_arguments",
    "check_crash_points",
    "check_targets",
    "did_you_mean",
    "fake_verifier",
    "fault_error",
    "in_flow_style",
    "load_each",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "read_yaml",
    "retry_after_problems",
    "scenario_error",
    "scenario_files",
    "scenario_json_schema",
    "source_of",
    "validate_paths",
]
# The fault models are made from the fault classes, so their names join the list here,
# in its order: constants, then classes, then functions (as ruff sorts the literal above).
__all__ += list(FAULT_MODELS_BY_NAME)
__all__.sort(key=lambda name: (not name.isupper(), not name[:1].isupper(), name))
