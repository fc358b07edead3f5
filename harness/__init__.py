"""A chaos harness for LLM agents: deterministic faults, crash exploration, invariants.

This package is the user's namespace: the agent contract, loading scenarios, planning
and running cases, their results and verdicts, the trace, the virtual clock and the
errors. Import from here (the subpackages' public names are for extending the harness;
private modules are for nobody)::

    import harness

    scenario = harness.load_scenario(Path("scenarios/crash/unknown-send-is-inspected.yaml"))
    for case in harness.plan_cases(scenario, path):
        result = harness.run_case(case, scenario)
        assert result.passed, result.failed_verdicts

The names are imported on first use (PEP 562), so ``import harness`` loads only the
errors besides this file: a command that needs one piece does not pay for the rest.
"""

from __future__ import annotations

from harness._errors import (
    AgentEntryError,
    CaptureError,
    ConfigError,
    DiskError,
    FaultError,
    HarnessError,
    JournalCorruptError,
    ReportError,
    ScenarioError,
    VirtualDeadlockError,
)
from harness._lazy import lazy_exports as _lazy_exports

# Not ``typing.TYPE_CHECKING``: importing typing would be most of this file's cost;
# the type checker treats any constant of this name alike.
TYPE_CHECKING = False

__version__ = "0.1.0"

# Where each public name lives; the one list both the lazy import and the type checker
# read (the block under TYPE_CHECKING repeats it as imports).
_HOMES: dict[str, list[str]] = {
    "harness.ports": [
        "STOP_STATES", "Agent", "AgentFactory", "AgentOutcome", "AgentPorts", "RecoveryReport",
        "StopState", "Task", "ToolCallView", "ToolSpec", "TranscriptMessage", "Usage",
    ],
    "harness.scenario": ["Scenario", "load_scenario", "load_scenarios", "validate_paths"],
    "harness.runner": ["Case", "CaseResult", "plan_cases", "run_case", "run_case_twice"],
    "harness.checks": ["Verdict", "VerdictStatus", "check_trace"],
    "harness.trace": [
        "CrashRecord", "EffectRecord", "InvocationRecord", "OutcomeRecord", "RequestRecord",
        "Trace",
    ],
    "fakes": ["VirtualClock"],
}

if TYPE_CHECKING:
    from fakes import VirtualClock
    from harness.checks import Verdict, VerdictStatus, check_trace
    from harness.ports import (
        STOP_STATES,
        Agent,
        AgentFactory,
        AgentOutcome,
        AgentPorts,
        RecoveryReport,
        StopState,
        Task,
        ToolCallView,
        ToolSpec,
        TranscriptMessage,
        Usage,
    )
    from harness.runner import Case, CaseResult, plan_cases, run_case, run_case_twice
    from harness.scenario import Scenario, load_scenario, load_scenarios, validate_paths
    from harness.trace import (
        CrashRecord,
        EffectRecord,
        InvocationRecord,
        OutcomeRecord,
        RequestRecord,
        Trace,
    )
else:
    __getattr__ = _lazy_exports(__name__, _HOMES, rename=True)
del TYPE_CHECKING


# The errors are loaded with the package (every module of the harness raises them), so
# they are named as a user imports them at once: a traceback says harness.ConfigError in
# every process, whichever name was reached first.
for _error in (AgentEntryError, CaptureError, ConfigError, DiskError, FaultError, HarnessError,
               JournalCorruptError, ReportError, ScenarioError, VirtualDeadlockError):
    _error.__module__ = __name__
del _error


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "STOP_STATES",
    "Agent",
    "AgentEntryError",
    "AgentFactory",
    "AgentOutcome",
    "AgentPorts",
    "CaptureError",
    "Case",
    "CaseResult",
    "ConfigError",
    "CrashRecord",
    "DiskError",
    "EffectRecord",
    "FaultError",
    "HarnessError",
    "InvocationRecord",
    "JournalCorruptError",
    "OutcomeRecord",
    "RecoveryReport",
    "ReportError",
    "RequestRecord",
    "Scenario",
    "ScenarioError",
    "StopState",
    "Task",
    "ToolCallView",
    "ToolSpec",
    "Trace",
    "TranscriptMessage",
    "Usage",
    "Verdict",
    "VerdictStatus",
    "VirtualClock",
    "VirtualDeadlockError",
    "__version__",
    "check_trace",
    "load_scenario",
    "load_scenarios",
    "plan_cases",
    "run_case",
    "run_case_twice",
    "validate_paths",
]
