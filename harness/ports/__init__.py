"""The ports between an agent and its world, and what both sides compute alike.

The agent core (:mod:`harness.agent`) talks to the world only through these
small protocols, and the fakes (:mod:`fakes`) implement them; neither side
imports the other's internals (DESIGN §4). Besides the ports (:class:`Disk`,
:class:`AppendFile`, :class:`Clock`, :class:`Tool`), this package holds the
helpers both sides must compute identically: the seeded random streams and ids,
the hashes of arguments and side effects, the remembered path helpers, the
mapping of ``OSError`` to :class:`harness.DiskError`, and the reading of a tool
reply's outcome the scripted model and the checkers share (:func:`classify_reply`).

It also holds the contract every agent is run under (:class:`Agent`,
:class:`AgentPorts`, :class:`Task`, :class:`AgentOutcome`, the stop states and
:class:`Usage`), so the scenario loader, the runner and the checkers know what an
agent is without loading the reference agent. And it holds the tables the world and
the checkers both read: what each tool kind is (:data:`TOOL_KIND_TRAITS`), what each
fault does to a stream (:data:`FAULT_MEANINGS`) and what each model costs
(:data:`PRICES`, :func:`cost`), so judging a trace never loads the fakes.
"""

from harness.ports._agent import (
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
    UsagePrices,
)
from harness.ports._clock import CALENDAR_ORIGIN_UNIX, Clock, LoopClock
from harness.ports._dialect import (
    DIALECTS,
    SPECS,
    Dialect,
    DialectSpec,
    Family,
    check_dialect,
    cut_at_limit,
    family_of,
)
from harness.ports._disk import AppendFile, Disk, call_os, dirname, normpath
from harness.ports._fault_meanings import (
    BROKEN_STREAM_FAULTS,
    CUTTING_FAULTS,
    FAULT_MEANINGS,
    SILENCING_FAULTS,
    FaultMeaning,
)
from harness.ports._goals import (
    RESTART_POLICIES,
    TERMINAL_GOAL_STATUSES,
    VERIFIER_OUTCOMES,
    CheckRun,
    CompletionProof,
    CriterionVerdict,
    Goal,
    GoalAction,
    GoalAnswer,
    GoalBudget,
    GoalPort,
    GoalStatus,
    Lease,
    RestartPolicy,
    Verification,
    VerifierOutcome,
)
from harness.ports._hashing import asked_for, idempotency_key, sha256_json
from harness.ports._ids import IdSource, rng_stream
from harness.ports._jobs import (
    CANCEL_TARGETS,
    JOB_COMPLETED_MARKER,
    CancelAck,
    CancelHook,
    CancelRequest,
    CancelStatus,
    CancelTarget,
    JobIdentity,
    JobPort,
    JobRunnerUnavailable,
    JobStatus,
    OutputChunk,
    Signal,
    Wakeup,
)
from harness.ports._prices import (
    PRICES,
    PRICES_AS_OF,
    ModelPrice,
    UsageBuckets,
    cost,
    has_price,
    own_prices,
    price_of,
    use_prices,
)
from harness.ports._replies import (
    TOOL_OUTCOME_MEANINGS,
    TOOL_OUTCOMES,
    ToolOutcome,
    classify_reply,
    reply_failed,
)
from harness.ports._tool_kinds import (
    CONCURRENCY_SAFE_TOOL_KINDS,
    PURE_TOOL_KINDS,
    TOOL_KIND_TRAITS,
    TOOL_KINDS,
    ToolKind,
    ToolKindTraits,
)
from harness.ports._tools import Tool, ToolContext, ToolInvocation
from harness.ports._usage import Usage

__all__ = [
    "BROKEN_STREAM_FAULTS",
    "CALENDAR_ORIGIN_UNIX",
    "CANCEL_TARGETS",
    "CONCURRENCY_SAFE_TOOL_KINDS",
    "CUTTING_FAULTS",
    "DIALECTS",
    "FAULT_MEANINGS",
    "JOB_COMPLETED_MARKER",
    "PRICES",
    "PRICES_AS_OF",
    "PURE_TOOL_KINDS",
    "RESTART_POLICIES",
    "SILENCING_FAULTS",
    "SPECS",
    "STOP_STATES",
    "TERMINAL_GOAL_STATUSES",
    "TOOL_KINDS",
    "TOOL_KIND_TRAITS",
    "TOOL_OUTCOMES",
    "TOOL_OUTCOME_MEANINGS",
    "VERIFIER_OUTCOMES",
    "Agent",
    "AgentFactory",
    "AgentOutcome",
    "AgentPorts",
    "AppendFile",
    "CancelAck",
    "CancelHook",
    "CancelRequest",
    "CancelStatus",
    "CancelTarget",
    "CheckRun",
    "Clock",
    "CompletionProof",
    "CriterionVerdict",
    "Dialect",
    "DialectSpec",
    "Disk",
    "Family",
    "FaultMeaning",
    "Goal",
    "GoalAction",
    "GoalAnswer",
    "GoalBudget",
    "GoalPort",
    "GoalStatus",
    "IdSource",
    "JobIdentity",
    "JobPort",
    "JobRunnerUnavailable",
    "JobStatus",
    "Lease",
    "LoopClock",
    "ModelPrice",
    "OutputChunk",
    "RecoveryReport",
    "RestartPolicy",
    "Signal",
    "StopState",
    "Task",
    "Tool",
    "ToolCallView",
    "ToolContext",
    "ToolInvocation",
    "ToolKind",
    "ToolKindTraits",
    "ToolOutcome",
    "ToolSpec",
    "TranscriptMessage",
    "Usage",
    "UsageBuckets",
    "UsagePrices",
    "Verification",
    "VerifierOutcome",
    "Wakeup",
    "asked_for",
    "call_os",
    "check_dialect",
    "classify_reply",
    "cost",
    "cut_at_limit",
    "dirname",
    "family_of",
    "has_price",
    "idempotency_key",
    "normpath",
    "own_prices",
    "price_of",
    "reply_failed",
    "rng_stream",
    "sha256_json",
    "use_prices",
]
