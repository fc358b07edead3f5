"""The reference agent's traces the checker tests start from."""

from __future__ import annotations

from harness.mutants import Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import Trace


def reference_trace(scenario: str, check: str) -> Trace:
    """The trace of the reference agent's crash-free case of ``scenario``, which passes."""
    result = run_kill(Kill(scenario, check), reference())
    assert result.passed, result.failed_verdicts
    assert result.trace is not None
    return result.trace
