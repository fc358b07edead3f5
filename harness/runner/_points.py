"""Crash points defined by the world, which mean the same for every agent (DESIGN §4).

An agent's own persistence points (``journal:fsync#3``) exist only for agents that
write those files. These points are events of the outside world instead:

==========================  ======================================================
``after_tool:NAME#K``        right after the K-th side effect of tool NAME was
                             applied, before the agent sees the result
``before_request:T``         turn T's first request reached the provider; the
                             agent never sees the answer
``mid_stream:T``             after the first event of turn T's stream
``after_response:T``         turn T's stream was delivered whole; the agent has
                             not acted on it yet
``after_signal:JOB#K``       right after the K-th signal (TERM or KILL) reached a
                             job of JOB, before the agent goes on; reached only in
                             a scenario that lists such a point (never by ``all``)
==========================  ======================================================

A point a given agent never reaches makes its case ``unknown``, never a failure.

>>> parse_world_point("after_tool:mail#2")
WorldPoint(kind='after_tool', number=2, tool='mail')
>>> parse_world_point("mid_stream:3").id
'mid_stream:3'
>>> parse_world_point("journal:fsync#1") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, get_args

WorldPointKind = Literal["after_tool", "before_request", "mid_stream", "after_response",
                         "after_signal"]
WORLD_POINT_KINDS: Final[tuple[WorldPointKind, ...]] = get_args(WorldPointKind)
#: Each kind's id form and when it strikes (the README's table is made from it).
WORLD_POINT_MEANINGS: Final[dict[WorldPointKind, tuple[str, str]]] = {
    "after_tool": ("after_tool:NAME#K", "right after the K-th side effect of tool NAME was "
                   "applied, before the agent sees the result"),
    "before_request": ("before_request:T", "turn T's first request reached the provider; "
                       "the agent never sees the answer"),
    "mid_stream": ("mid_stream:T", "after the first event of turn T's stream"),
    "after_response": ("after_response:T", "turn T's stream was delivered whole; the agent "
                       "has not acted on it yet"),
    "after_signal": ("after_signal:JOB#K", "right after the K-th signal (TERM or KILL) reached "
                     "a job of JOB, before the agent goes on (only where a scenario lists it)"),
}
#: The regular expression of a world point id (the scenario format and --crash-at use it).
WORLD_POINT_PATTERN: Final = (
    r"after_(?:tool|signal):[A-Za-z0-9_-]{1,64}#[1-9][0-9]*"
    r"|(?:before_request|mid_stream|after_response):[1-9][0-9]*"
)
_WORLD_POINT = re.compile(WORLD_POINT_PATTERN)


@dataclass(frozen=True)
class WorldPoint:
    """One world event: its kind, the turn (or the K of ``after_tool``) and the tool."""

    kind: WorldPointKind
    number: int
    tool: str | None = None

    @property
    def id(self) -> str:
        if self.tool is not None:
            return f"{self.kind}:{self.tool}#{self.number}"
        return f"{self.kind}:{self.number}"


def parse_world_point(point_id: str) -> WorldPoint | None:
    """The world point ``point_id`` names, or None for an agent's own persistence point."""
    if not _WORLD_POINT.fullmatch(point_id):
        return None
    kind, _, rest = point_id.partition(":")
    tool, _, number = rest.rpartition("#")
    for known in WORLD_POINT_KINDS:
        if known == kind:
            return WorldPoint(known, int(number), tool or None)
    return None


def is_world_point(point_id: str) -> bool:
    """Whether ``point_id`` is a world event rather than a file operation of the agent."""
    return parse_world_point(point_id) is not None
