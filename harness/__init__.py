"""A chaos harness for LLM agents: deterministic faults, crash exploration, invariants.

Import from this package (or ``harness.agent``), never from private modules.
"""

from harness._errors import ConfigError, HarnessError, VirtualDeadlockError

__version__ = "0.1.0"
from harness._errors import DiskError, JournalCorruptError

__all__ = [
    "ConfigError",
    "DiskError",
    "HarnessError",
    "JournalCorruptError",
    "VirtualDeadlockError",
    "__version__",
]
