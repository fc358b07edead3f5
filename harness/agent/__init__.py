"""The reference agent core: the model of what recovering correctly means.

It touches the world only through the ports in this package; it never imports
the explorer, the checkers or pytest.
"""

from harness.agent._disk import AppendFile, Disk, RealDisk, ensure_dir
from harness.agent._ids import IdSource, rng_stream
from harness.agent._journal import (
    OUTCOMES,
    DurableLineFile,
    Execution,
    JournalRecord,
    Outcome,
    RecoveredExecution,
    ToolJournal,
    sha256_json,
)
from harness.agent._ports import Clock, LoopClock
from harness.agent._tool_runner import ToolRunner, settle
from harness.agent._tools import (
    ReplyStatus,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolReply,
    not_started_reply,
    unknown_reply,
)
from harness.agent._transcript import (
    AssistantTurn,
    Transcript,
    TranscriptLog,
    UserMessage,
    repair_transcript,
    synthetic_reply,
)

__all__ = [
    "OUTCOMES",
    "AppendFile",
    "AssistantTurn",
    "Clock",
    "Disk",
    "DurableLineFile",
    "Execution",
    "IdSource",
    "JournalRecord",
    "LoopClock",
    "Outcome",
    "RealDisk",
    "RecoveredExecution",
    "ReplyStatus",
    "Tool",
    "ToolContext",
    "ToolInvocation",
    "ToolJournal",
    "ToolReply",
    "ToolRunner",
    "Transcript",
    "TranscriptLog",
    "UserMessage",
    "ensure_dir",
    "not_started_reply",
    "repair_transcript",
    "rng_stream",
    "settle",
    "sha256_json",
    "synthetic_reply",
    "unknown_reply",
]
