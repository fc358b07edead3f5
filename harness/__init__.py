"""A chaos harness for LLM agents: deterministic faults, crash exploration, invariants.

Import from this package (or ``harness.agent``), never from private modules.
"""

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

__version__ = "0.1.0"

__all__ = [
    "AgentEntryError",
    "CaptureError",
    "ConfigError",
    "DiskError",
    "FaultError",
    "HarnessError",
    "JournalCorruptError",
    "ReportError",
    "ScenarioError",
    "VirtualDeadlockError",
    "__version__",
]
