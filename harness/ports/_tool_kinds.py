"""What each tool kind is, in one table every reader shares.

The counting tools (:mod:`fakes`) act by it, the scenario loader names its kinds, the
runner offers each kind to the model with its description and the JSON Schema of the
arguments the fake tool reads (``fakes.WorldTool``): ``append`` reads ``text``,
``send`` a message with an optional ``idempotency_key``, ``put`` a ``key`` and
``value``; ``read`` and ``inspect`` take nothing. Extra properties are allowed, since a
scenario's scripted calls may carry more than the tool reads. The checkers judge
invocations by the same table; keeping it here lets them read a trace without loading
the world that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, NamedTuple, get_args

ToolKind = Literal["append", "send", "put", "read", "inspect"]
TOOL_KINDS: tuple[ToolKind, ...] = get_args(ToolKind)


class ToolKindTraits(NamedTuple):
    """What a tool kind is, for every reader: the fakes, the scenario, the runner, the checks.

    ``idempotent``: repeating it is harmless (I1 counts its keys, not its effects);
    ``pure``: it changes nothing (no side effect to find in the ledger, I10);
    ``concurrency_safe``: it may run beside other calls unless declared otherwise (L2);
    ``description`` and ``parameters`` (a JSON Schema): how the model is offered it.
    """

    idempotent: bool
    pure: bool
    concurrency_safe: bool
    description: str
    parameters: dict[str, Any]


_STRING: Final = {"type": "string"}

#: The one description of each tool kind.
TOOL_KIND_TRAITS: Mapping[ToolKind, ToolKindTraits] = {
    "append": ToolKindTraits(
        idempotent=False, pure=False, concurrency_safe=False,
        description="Append a line of text to the notes file (not idempotent).",
        parameters={"type": "object", "properties": {"text": _STRING}}),
    "send": ToolKindTraits(
        idempotent=False, pure=False, concurrency_safe=False,
        description="Send a message (not idempotent: sending twice sends two messages).",
        parameters={"type": "object",
                    "properties": {"to": _STRING, "body": _STRING, "idempotency_key": _STRING}}),
    "put": ToolKindTraits(
        idempotent=True, pure=False, concurrency_safe=False,
        description="Set store[key] = value (idempotent).",
        parameters={"type": "object", "properties": {"key": _STRING, "value": {}},
                    "required": ["key"]}),
    "read": ToolKindTraits(
        idempotent=True, pure=True, concurrency_safe=True,
        description="Read the real state of the notes, the outbox and the store.",
        parameters={"type": "object", "properties": {}}),
    "inspect": ToolKindTraits(
        idempotent=True, pure=True, concurrency_safe=True,
        description="Inspect the real state before repeating an operation whose outcome is "
                    "unknown.",
        parameters={"type": "object", "properties": {}}),
}
#: The arguments each kind takes, as a JSON Schema (the table's ``parameters``).
TOOL_PARAMETERS: Mapping[ToolKind, dict[str, Any]] = {
    kind: traits.parameters for kind, traits in TOOL_KIND_TRAITS.items()
}
PURE_TOOL_KINDS: frozenset[ToolKind] = frozenset(
    kind for kind, traits in TOOL_KIND_TRAITS.items() if traits.pure
)
CONCURRENCY_SAFE_TOOL_KINDS: frozenset[ToolKind] = frozenset(
    kind for kind, traits in TOOL_KIND_TRAITS.items() if traits.concurrency_safe
)
