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

from harness._errors import AgentEntryError as AgentEntryError
from harness._errors import CaptureError as CaptureError
from harness._errors import ConfigError as ConfigError
from harness._errors import DiskError as DiskError
from harness._errors import FaultError as FaultError
from harness._errors import HarnessError as HarnessError
from harness._errors import JournalCorruptError as JournalCorruptError
from harness._errors import ReportError as ReportError
from harness._errors import ScenarioError as ScenarioError
from harness._errors import VirtualDeadlockError as VirtualDeadlockError
from harness._lazy import exported_names as _exported_names
from harness._lazy import lazy_exports as _lazy_exports

# Not ``typing.TYPE_CHECKING``: importing typing would be most of this file's cost;
# the type checker treats any constant of this name alike.
TYPE_CHECKING = False

__version__ = "0.1.0"

# Where each public name lives: the lazy import reads it and ``__all__`` is made from it;
# the block under TYPE_CHECKING repeats it as imports for the type checker
# (tests/test_lazy_exports.py holds the two alike).
_EXPORTS: dict[str, list[str]] = {
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
    from fakes import VirtualClock as VirtualClock
    from harness.checks import Verdict as Verdict
    from harness.checks import VerdictStatus as VerdictStatus
    from harness.checks import check_trace as check_trace
    from harness.ports import STOP_STATES as STOP_STATES
    from harness.ports import Agent as Agent
    from harness.ports import AgentFactory as AgentFactory
    from harness.ports import AgentOutcome as AgentOutcome
    from harness.ports import AgentPorts as AgentPorts
    from harness.ports import RecoveryReport as RecoveryReport
    from harness.ports import StopState as StopState
    from harness.ports import Task as Task
    from harness.ports import ToolCallView as ToolCallView
    from harness.ports import ToolSpec as ToolSpec
    from harness.ports import TranscriptMessage as TranscriptMessage
    from harness.ports import Usage as Usage
    from harness.runner import Case as Case
    from harness.runner import CaseResult as CaseResult
    from harness.runner import plan_cases as plan_cases
    from harness.runner import run_case as run_case
    from harness.runner import run_case_twice as run_case_twice
    from harness.scenario import Scenario as Scenario
    from harness.scenario import load_scenario as load_scenario
    from harness.scenario import load_scenarios as load_scenarios
    from harness.scenario import validate_paths as validate_paths
    from harness.trace import CrashRecord as CrashRecord
    from harness.trace import EffectRecord as EffectRecord
    from harness.trace import InvocationRecord as InvocationRecord
    from harness.trace import OutcomeRecord as OutcomeRecord
    from harness.trace import RequestRecord as RequestRecord
    from harness.trace import Trace as Trace
else:
    __getattr__ = _lazy_exports(__name__, _EXPORTS, rename=True)
del TYPE_CHECKING


# The errors are loaded with the package (every module of the harness raises them), so
# they are named as a user imports them at once: a traceback says harness.ConfigError in
# every process, whichever name was reached first.
_ERRORS = (AgentEntryError, CaptureError, ConfigError, DiskError, FaultError, HarnessError,
           JournalCorruptError, ReportError, ScenarioError, VirtualDeadlockError)
for _error in _ERRORS:
    _error.__module__ = __name__
del _error


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = list(_exported_names(_EXPORTS, "__version__", *(error.__name__ for error in _ERRORS)))
