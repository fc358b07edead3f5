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


def mutant_trace(scenario: str, check: str, mutant: str) -> Trace:
    """The trace of catalogue mutant ``mutant``'s crash-free case of ``scenario``."""
    from harness.mutants import MUTANTS

    factory = next(m.factory for m in MUTANTS if m.name == mutant)
    result = run_kill(Kill(scenario, check), factory)
    assert result.trace is not None
    return result.trace
