"""The trace of one case: what the world saw, as plain records.

The runner writes a trace; the checkers only read it (DESIGN §3, STYLE 14). Its
types live here, apart from both, so the writer owns them and neither side
imports the other's internals::

    from harness.trace import Trace
    print(trace.digest)            # the same scenario, crash and seed: the same digest
"""

from harness.trace._decode import TraceDataError, trace_from_json
from harness.trace._extra import (
    AskedOutput,
    ChildEnvironment,
    GoalInRequest,
    HeldAfterReturn,
    InlineResult,
    NeverStartedCall,
    RefusedTurn,
    SampledRequest,
    TraceExtra,
)
from harness.trace._jobs import CancelAnswer, CancelRecord, JobRecord, ReadRecord, SignalRecord
from harness.trace._paths import PathRoots, path_roots, portable_paths
from harness.trace._records import (
    CacheRecord,
    CallRecord,
    CrashRecord,
    Delivery,
    EffectRecord,
    ExpectationRecord,
    ExpectedEffects,
    GoalEventRecord,
    GoalTrace,
    IncarnationRecord,
    InvocationOutcome,
    InvocationRecord,
    MessageRecord,
    OutcomeRecord,
    ProofRecord,
    Purpose,
    RecoveryRecord,
    RequestRecord,
    Role,
    SecretLeak,
    SecretsRecord,
    SegmentVersion,
    SentCall,
    SentReply,
    SentUsage,
    ToolKindOf,
    Trace,
    goal_identity_json,
)
from harness.trace._turns import request_turn

__all__ = [
    "AskedOutput",
    "CacheRecord",
    "CallRecord",
    "CancelAnswer",
    "CancelRecord",
    "ChildEnvironment",
    "CrashRecord",
    "Delivery",
    "EffectRecord",
    "ExpectationRecord",
    "ExpectedEffects",
    "GoalEventRecord",
    "GoalInRequest",
    "GoalTrace",
    "HeldAfterReturn",
    "IncarnationRecord",
    "InlineResult",
    "InvocationOutcome",
    "InvocationRecord",
    "JobRecord",
    "MessageRecord",
    "NeverStartedCall",
    "OutcomeRecord",
    "PathRoots",
    "ProofRecord",
    "Purpose",
    "ReadRecord",
    "RecoveryRecord",
    "RefusedTurn",
    "RequestRecord",
    "Role",
    "SampledRequest",
    "SecretLeak",
    "SecretsRecord",
    "SegmentVersion",
    "SentCall",
    "SentReply",
    "SentUsage",
    "SignalRecord",
    "ToolKindOf",
    "Trace",
    "TraceDataError",
    "TraceExtra",
    "goal_identity_json",
    "path_roots",
    "portable_paths",
    "request_turn",
    "trace_from_json",
]
