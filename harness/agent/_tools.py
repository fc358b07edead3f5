"""What the model gets back for a tool call, and the two replies recovery writes.

The tool port itself (:class:`harness.ports.Tool`, its invocation and context)
lives in :mod:`harness.ports`, where the fakes read it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.ports import KeyedCall, ReplyStatus, ToolInvocation

NOT_STARTED = "TOOL_NOT_STARTED"
OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"


@dataclass(frozen=True)
class ToolReply(KeyedCall):
    """The reply the model receives for one call.

    ``content`` is JSON; ``synthetic`` marks replies written by recovery (J5).
    """

    turn_id: str
    call_id: str
    status: ReplyStatus
    content: Any
    synthetic: bool = False


def not_started_reply(call: ToolInvocation, why: str, *, synthetic: bool = False) -> ToolReply:
    """TOOL_NOT_STARTED: the tool never ran, so issuing it again is safe.

    >>> not_started_reply(ToolInvocation("t", "c", "send", {}), "disk full").status
    'not_started'
    """
    content = {
        "error": NOT_STARTED,
        "message": f"{call.tool} did not start ({why}); it had no effect and may be issued again",
    }
    return ToolReply(call.turn_id, call.call_id, "not_started", content, synthetic)


def unknown_reply(call: ToolInvocation, why: str, *, synthetic: bool = False) -> ToolReply:
    """TOOL_OUTCOME_UNKNOWN: it may have run; inspect the real state, never repeat blindly.

    >>> unknown_reply(ToolInvocation("t", "c", "send", {}), "restart").status
    'unknown'
    """
    content = {
        "error": OUTCOME_UNKNOWN,
        "message": (
            f"{call.tool} may or may not have taken effect ({why}). Inspect the real state "
            "first (read the file, check the outbox); do not repeat the operation"
        ),
    }
    return ToolReply(call.turn_id, call.call_id, "unknown", content, synthetic)
