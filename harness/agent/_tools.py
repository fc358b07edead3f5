"""The tool port: what a tool declares, what it receives, and what the model gets back.

A tool declares whether it may run beside others (``concurrency_safe``, DESIGN
L2) and whether repeating it is harmless (``idempotent``). The runner hands it
a :class:`ToolContext` that names the incarnation, so the outside world can
refuse a call from a process that already crashed (DESIGN §3).

Example::

    class Echo:
        name = "echo"
        concurrency_safe = True
        idempotent = True

        async def run(self, arguments, context):
            return {"echo": arguments["text"]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from harness.agent._ports import Clock

#: How a reply tells the model what happened (seed 002 §19.1 names the two that matter:
#: ``not_started`` is TOOL_NOT_STARTED, ``unknown`` is TOOL_OUTCOME_UNKNOWN).
ReplyStatus = Literal["ok", "error", "not_started", "unknown", "timeout"]

NOT_STARTED = "TOOL_NOT_STARTED"
OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"


@dataclass(frozen=True)
class ToolInvocation:
    """One tool call of one assistant turn, as the model asked for it.

    >>> ToolInvocation("turn_1", "call_1", "append", {"text": "hi"}).key
    ('turn_1', 'call_1')
    """

    turn_id: str
    call_id: str
    tool: str
    arguments: Mapping[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        """The stable identity a reply is matched by (turn id AND call id, J5)."""
        return (self.turn_id, self.call_id)


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call."""

    invocation: ToolInvocation
    execution_id: str
    run_id: str
    incarnation: int
    clock: Clock


class Tool(Protocol):
    """A tool the agent can call. ``run`` returns a JSON value or raises."""

    @property
    def name(self) -> str: ...

    @property
    def concurrency_safe(self) -> bool: ...

    @property
    def idempotent(self) -> bool: ...

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any: ...


@dataclass(frozen=True)
class ToolReply:
    """The reply the model receives for one call.

    ``content`` is JSON; ``synthetic`` marks replies written by recovery (J5).
    """

    turn_id: str
    call_id: str
    status: ReplyStatus
    content: Any
    synthetic: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.turn_id, self.call_id)


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
