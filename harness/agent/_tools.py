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


def reply_lost(error: BaseException) -> bool:
    """Whether a tool's exception says its request went out and its answer was lost.

    Seed 000 §4 asks the send path to say at which stage it failed, to tell "没有送出" from
    "是否送达还不清楚": a reset or aborted connection, a broken pipe or a timeout came after
    the request may have been delivered (a mail server that accepted the message, a payment
    API that charged), where a refused connection never carried it.

    >>> reply_lost(ConnectionResetError()), reply_lost(ConnectionRefusedError())
    (True, False)
    """
    return isinstance(error, (TimeoutError, ConnectionError)) \
        and not isinstance(error, ConnectionRefusedError)


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
