"""The reference agent: the model of what recovering correctly means, and its settings.

:class:`ReferenceAgent` implements the contract of :mod:`harness.ports` (where
``Agent``, ``AgentPorts``, ``Task`` and ``AgentOutcome`` live, with the vocabulary both
sides share: reply statuses, finish reasons, the attempt headers, the SSE decoder and
the reading of Retry-After) and touches the world only through those ports; it never
imports the explorer, the checkers or pytest. Besides it and its settings
(:class:`StreamConfig`, :class:`GuardLimits`, :class:`BreakerConfig`,
:class:`CompactionConfig`, :class:`BudgetPolicy`, :class:`Discipline`, the
:class:`JobSupervisor` it runs
background jobs with and the :class:`CancelRouter` it answers cancels with), this package
exports the few parts the harness reuses: its stream client and what it returns, its
request bodies and accumulators per dialect.
"""

from harness.agent._breaker import BreakerConfig
from harness.agent._budget import Budget
from harness.agent._budget_tree import BudgetPolicy
from harness.agent._cancel import CancelRouter
from harness.agent._classify import StreamFailure
from harness.agent._compaction import CompactionConfig
from harness.agent._defaults import StreamConfig
from harness.agent._dialects import AGENT_DIALECTS, opening_request, sent_request
from harness.agent._discipline import Discipline
from harness.agent._guards import GuardLimits
from harness.agent._jobs import JobEntry, JobSupervisor
from harness.agent._loop import ReferenceAgent
from harness.agent._retry_log import MemoryRetryLog
from harness.agent._stream_client import CompletionResult, StreamClient

__all__ = [
    "AGENT_DIALECTS",
    "BreakerConfig",
    "Budget",
    "BudgetPolicy",
    "CancelRouter",
    "CompactionConfig",
    "CompletionResult",
    "Discipline",
    "GuardLimits",
    "JobEntry",
    "JobSupervisor",
    "MemoryRetryLog",
    "ReferenceAgent",
    "StreamClient",
    "StreamConfig",
    "StreamFailure",
    "opening_request",
    "sent_request",
]
