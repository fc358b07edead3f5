"""The tool port: what a tool declares and what it receives.

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
from typing import Any, Generic, Protocol, TypeVar

from harness.ports._clock import Clock
from harness.ports._disk import normpath


class KeyedCall:
    """A record of one tool call of one assistant turn (its invocation, its reply, its
    execution), matched to the others by turn id AND call id (J5). Each dataclass built
    on it declares the two fields itself, in its own order."""

    turn_id: str
    call_id: str

    @property
    def key(self) -> tuple[str, str]:
        """The stable identity a reply is matched by (turn id AND call id, J5)."""
        return (self.turn_id, self.call_id)


@dataclass(frozen=True)
class ToolInvocation(KeyedCall):
    """One tool call of one assistant turn, as the model asked for it.

    >>> ToolInvocation("turn_1", "call_1", "append", {"text": "hi"}).key
    ('turn_1', 'call_1')
    """

    turn_id: str
    call_id: str
    tool: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call."""

    invocation: ToolInvocation
    execution_id: str
    run_id: str
    incarnation: int
    clock: Clock
    env: Mapping[str, str] | None = None
    """The environment the caller hands a child process the tool starts (a subprocess
    tool), as ``subprocess.run(..., env=...)`` takes it; ``None``: the world's clean one.
    Seed 000 §5: a child gets a cleaned environment, never the agent's credentials."""


class Tool(Protocol):
    """A tool the agent can call. ``run`` returns a JSON value or raises.

    A tool may also say ``read_only = True``: it changes nothing (:func:`reads_only`). The
    reference agent lets such a tool name a goal's protected path without asking the user.
    """

    @property
    def name(self) -> str: ...

    @property
    def concurrency_safe(self) -> bool: ...

    @property
    def idempotent(self) -> bool: ...

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any: ...


ToolT = TypeVar("ToolT", bound=Tool)


class PassThroughTool(Generic[ToolT]):
    """A tool as another: ``inner``'s name, traits and run, for a wrapper to override a part.

    The world's recording tool and the mutants' altered tools are both made this way.
    """

    def __init__(self, inner: ToolT) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def concurrency_safe(self) -> bool:
        return self.inner.concurrency_safe

    @property
    def idempotent(self) -> bool:
        return self.inner.idempotent

    @property
    def read_only(self) -> bool:
        return reads_only(self.inner)

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        return await self.inner.run(arguments, context)


def reads_only(tool: object) -> bool:
    """Whether ``tool`` says it changes nothing (an optional ``read_only`` attribute; a
    tool that says nothing may change something).

    >>> class Reader:
    ...     read_only = True
    >>> reads_only(Reader()), reads_only(object())
    (True, False)
    """
    return getattr(tool, "read_only", False) is True


def named_path(arguments: Mapping[str, Any]) -> str | None:
    """The file path a tool call names (its ``path`` argument), normalised; None if none.

    One reading for the agent that queues writes of one path (seed 002 §19.5) and the
    check that judges it (L2:path), so both mean the same path.

    >>> named_path({"path": "./docs//a.md"})
    'docs/a.md'
    """
    path = arguments.get("path")
    return normpath(path) if isinstance(path, str) and path else None
