"""YAML fault scenarios: typed models, their JSON Schema and a loader with located errors.

A scenario is plain data; the runner executes it. Load files with
:func:`load_scenario` / :func:`load_scenarios`; every mistake is a
:class:`ScenarioError` saying ``file:line:col``, what came and what is allowed::

    from harness.scenario import load_scenarios
    scenarios = load_scenarios(["scenarios/"])
"""

# Crash classes, HTTP statuses and tool kinds are the fakes' vocabulary, stop states the
# agent contract's (DESIGN L5, in harness.ports); the scenario format names them as they do.
from fakes import CRASH_CLASSES, HTTP_ERROR_STATUSES, CrashClass
from harness._errors import ScenarioError
from harness.ports import DIALECTS, STOP_STATES, TOOL_KINDS, Dialect, StopState, ToolKind
from harness.scenario._faults import FAULT_KINDS, AnyFault, FaultAt, FaultModel
from harness.scenario._faults import FAULT_MODELS_BY_NAME as _FAULT_MODELS
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
    scenario_files,
    validate_paths,
)
from harness.scenario._model import (
    BudgetLimits,
    CrashSelection,
    Expectation,
    Provider,
    Reply,
    ReplyCondition,
    ReplyUsage,
    Scenario,
    ScriptedCall,
)
from harness.scenario._names import (
    CONCURRENCY_SAFE_KINDS,
    DEFAULT_INVARIANTS,
    FINISH_REASONS,
    INVARIANT_IDS,
    LINE_ENDING_STYLES,
    TOOL_OUTCOMES,
    InvariantId,
    ScriptedFinish,
    ToolOutcome,
)
from harness.scenario._problems import did_you_mean
from harness.scenario._schema import SCHEMA_PATH, scenario_json_schema
from harness.scenario._tools import (
    BEHAVIOUR_KINDS,
    AnyBehaviour,
    FailingBehaviour,
    HangingBehaviour,
    IgnoresCancellationBehaviour,
    InstantBehaviour,
    SlowBehaviour,
    SubprocessBehaviour,
    ToolDeclaration,
)

# One model per fault kind, derived from the fakes' declaration (HttpErrorFault, StallFault, …).
globals().update(_FAULT_MODELS)

__all__ = [
    "BEHAVIOUR_KINDS",
    "CONCURRENCY_SAFE_KINDS",
    "CRASH_CLASSES",
    "DEFAULT_INVARIANTS",
    "DIALECTS",
    "FAULT_KINDS",
    "FINISH_REASONS",
    "HTTP_ERROR_STATUSES",
    "INVARIANT_IDS",
    "LINE_ENDING_STYLES",
    "SCHEMA_PATH",
    "STOP_STATES",
    "TOOL_KINDS",
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
    "load_each",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "scenario_files",
    "scenario_json_schema",
    "validate_paths",
]
# The fault models are made from the fault classes, so their names join the list here,
# in its order: constants, then classes, then functions (as ruff sorts the literal above).
__all__ += list(_FAULT_MODELS)
__all__.sort(key=lambda name: (not name.isupper(), not name[:1].isupper(), name))
