"""The reference agent core: the model of what recovering correctly means.

It touches the world only through the ports in this package; it never imports
the explorer, the checkers or pytest.
"""

from harness.agent._breaker import BreakerConfig, BreakerState, CircuitBreaker, ProbeLease
from harness.agent._budget import Budget, CostModel
from harness.agent._budget_tree import BudgetPolicy, SubBudget, goal_budget
from harness.agent._cancel import CancelRouter
from harness.agent._classify import (
    ErrorKind,
    ProviderError,
    RetryAction,
    RetryContext,
    RetryDecision,
    RetryLayer,
    StreamFailure,
    backoff_delay,
    classify,
)
from harness.agent._compaction import (
    COMPACTED_MARKER,
    CompactionConfig,
    CompactionTicket,
    Compactor,
    compacted_entries,
)
from harness.agent._defaults import StreamConfig
from harness.agent._dialects import AGENT_DIALECTS, AgentDialect, build_request, continuation_body
from harness.agent._disk import RealDisk, ensure_dir
from harness.agent._goal import GoalKeeper, GoalStop, gap_fingerprint
from harness.agent._guards import GuardLimits, RecoveryCounters
from harness.agent._jobs import JobEntry, JobSupervisor
from harness.agent._journal import (
    OUTCOMES,
    DurableLineFile,
    Execution,
    JournalRecord,
    Outcome,
    RecoveredExecution,
    ToolJournal,
)
from harness.agent._lease import ExecutionLease, StaleLeaseError
from harness.agent._loop import ReferenceAgent
from harness.agent._messages import AssistantMessage, FinishReason, ToolCall
from harness.agent._metrics import FileMetrics, MemoryMetrics, MetricsSink
from harness.agent._retry_after import parse_retry_after
from harness.agent._retry_log import MemoryRetryLog, RetryEvent, RetryLog
from harness.agent._session_log import SessionLog, SessionRecord, StaleEpochError
from harness.agent._sse import SSEDecoder, SSEEvent
from harness.agent._stream_client import (
    ATTEMPT_ID_HEADER,
    RETRY_LAYER_HEADER,
    AttemptRecord,
    CompletionResult,
    StreamClient,
    drop_images,
)
from harness.agent._tool_runner import ToolRunner, settle
from harness.agent._tools import ReplyStatus, ToolReply, not_started_reply, unknown_reply
from harness.agent._transcript import (
    AssistantTurn,
    Transcript,
    TranscriptLog,
    UserMessage,
    repair_transcript,
    synthetic_reply,
)

__all__ = [
    "AGENT_DIALECTS",
    "ATTEMPT_ID_HEADER",
    "COMPACTED_MARKER",
    "OUTCOMES",
    "RETRY_LAYER_HEADER",
    "AgentDialect",
    "AssistantMessage",
    "AssistantTurn",
    "AttemptRecord",
    "BreakerConfig",
    "BreakerState",
    "Budget",
    "BudgetPolicy",
    "CancelRouter",
    "CircuitBreaker",
    "CompactionConfig",
    "CompactionTicket",
    "Compactor",
    "CompletionResult",
    "CostModel",
    "DurableLineFile",
    "ErrorKind",
    "Execution",
    "ExecutionLease",
    "FileMetrics",
    "FinishReason",
    "GoalKeeper",
    "GoalStop",
    "GuardLimits",
    "JobEntry",
    "JobSupervisor",
    "JournalRecord",
    "MemoryMetrics",
    "MemoryRetryLog",
    "MetricsSink",
    "Outcome",
    "ProbeLease",
    "ProviderError",
    "RealDisk",
    "RecoveredExecution",
    "RecoveryCounters",
    "ReferenceAgent",
    "ReplyStatus",
    "RetryAction",
    "RetryContext",
    "RetryDecision",
    "RetryEvent",
    "RetryLayer",
    "RetryLog",
    "SSEDecoder",
    "SSEEvent",
    "SessionLog",
    "SessionRecord",
    "StaleEpochError",
    "StaleLeaseError",
    "StreamClient",
    "StreamConfig",
    "StreamFailure",
    "SubBudget",
    "ToolCall",
    "ToolJournal",
    "ToolReply",
    "ToolRunner",
    "Transcript",
    "TranscriptLog",
    "UserMessage",
    "backoff_delay",
    "build_request",
    "classify",
    "compacted_entries",
    "continuation_body",
    "drop_images",
    "ensure_dir",
    "gap_fingerprint",
    "goal_budget",
    "not_started_reply",
    "parse_retry_after",
    "repair_transcript",
    "settle",
    "synthetic_reply",
    "unknown_reply",
]
