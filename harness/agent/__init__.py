"""The reference agent: the model of what recovering correctly means, and its settings.

:class:`ReferenceAgent` implements the contract of :mod:`harness.ports` (where
``Agent``, ``AgentPorts``, ``Task`` and ``AgentOutcome`` live) and touches the world
only through those ports; it never imports the explorer, the checkers or pytest.
Besides it and its settings (:class:`StreamConfig`, :class:`GuardLimits`,
:class:`BreakerConfig`, :class:`CompactionConfig`, :class:`BudgetPolicy`), this
package exports the few parts the harness reuses: its stream client, SSE decoder,
request bodies, job supervisor and Retry-After reading.
"""

from harness.agent._breaker import BreakerConfig
from harness.agent._budget import Budget
from harness.agent._budget_tree import BudgetPolicy
from harness.agent._cancel import CancelRouter
from harness.agent._classify import StreamFailure
from harness.agent._compaction import CompactionConfig
from harness.agent._defaults import StreamConfig
from harness.agent._dialects import AGENT_DIALECTS, build_request, request_target, streaming_body
from harness.agent._guards import GuardLimits
from harness.agent._jobs import JobEntry, JobSupervisor
from harness.agent._loop import ReferenceAgent
from harness.agent._retry_after import parse_retry_after
from harness.agent._retry_log import MemoryRetryLog
from harness.agent._session_log import UserEntry
from harness.agent._sse import SSEDecoder
from harness.agent._stream_client import (
    ATTEMPT_ID_HEADER,
    RETRY_LAYER_HEADER,
    CompletionResult,
    StreamClient,
)
from harness.agent._tools import REPLY_STATUS_MEANINGS, REPLY_STATUSES

__all__ = [
    "AGENT_DIALECTS",
    "ATTEMPT_ID_HEADER",
    "REPLY_STATUSES",
    "REPLY_STATUS_MEANINGS",
    "RETRY_LAYER_HEADER",
    "BreakerConfig",
    "Budget",
    "BudgetPolicy",
    "CancelRouter",
    "CompactionConfig",
    "CompletionResult",
    "GuardLimits",
    "JobEntry",
    "JobSupervisor",
    "MemoryRetryLog",
    "ReferenceAgent",
    "SSEDecoder",
    "StreamClient",
    "StreamConfig",
    "StreamFailure",
    "UserEntry",
    "build_request",
    "parse_retry_after",
    "request_target",
    "streaming_body",
]
