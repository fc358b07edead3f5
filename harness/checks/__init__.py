"""Invariant checkers (DESIGN §6): each reads a finished trace and returns a verdict.

A verdict is ``pass``, ``fail`` (with evidence lines) or ``unknown`` when what
the invariant is about never happened in the run — never a vacuous pass::

    from harness.checks import check_trace
    for verdict in check_trace(trace):
        print(verdict.invariant, verdict.status, verdict.message)
"""

from harness.checks._invariants import (
    CHECKS,
    check_i1,
    check_i2,
    check_i3,
    check_i4,
    check_i6,
    check_i7,
    check_i8,
    check_i9,
    check_i10,
    check_i11,
    check_side_effects,
    check_trace,
)
from harness.checks._loop_guard import check_l3
from harness.checks._tolerance import early_tolerance, late_tolerance
from harness.checks._vacuity import FaultNotMet, faults_not_met
from harness.checks._verdict import Verdict, VerdictStatus
from harness.trace import (
    CacheRecord,
    CrashRecord,
    EffectRecord,
    ExpectationRecord,
    IncarnationRecord,
    InvocationRecord,
    MessageRecord,
    OutcomeRecord,
    RecoveryRecord,
    RequestRecord,
    SentCall,
    SentUsage,
    Trace,
)

__all__ = [
    "CHECKS",
    "CacheRecord",
    "CrashRecord",
    "EffectRecord",
    "ExpectationRecord",
    "FaultNotMet",
    "IncarnationRecord",
    "InvocationRecord",
    "MessageRecord",
    "OutcomeRecord",
    "RecoveryRecord",
    "RequestRecord",
    "SentCall",
    "SentUsage",
    "Trace",
    "Verdict",
    "VerdictStatus",
    "check_i1",
    "check_i2",
    "check_i3",
    "check_i4",
    "check_i6",
    "check_i7",
    "check_i8",
    "check_i9",
    "check_i10",
    "check_i11",
    "check_l3",
    "check_side_effects",
    "check_trace",
    "early_tolerance",
    "faults_not_met",
    "late_tolerance",
]
