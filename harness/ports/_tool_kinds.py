"""What each tool kind is, in one table every reader shares.

The counting tools (:mod:`fakes`) act by it, the scenario loader names its kinds, the
runner and the checkers judge invocations by it; keeping it here lets the checkers read
a trace without loading the world that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple, get_args

ToolKind = Literal["append", "send", "put", "read", "inspect"]
TOOL_KINDS: tuple[ToolKind, ...] = get_args(ToolKind)


class ToolKindTraits(NamedTuple):
    """What a tool kind is, for every reader: the fakes, the scenario, the runner, the checks.

    ``idempotent``: repeating it is harmless (I1 counts its keys, not its effects);
    ``pure``: it changes nothing (no side effect to find in the ledger, I10);
    ``concurrency_safe``: it may run beside other calls unless declared otherwise (L2).
    """

    idempotent: bool
    pure: bool
    concurrency_safe: bool


#: The one description of each tool kind.
TOOL_KIND_TRAITS: Mapping[ToolKind, ToolKindTraits] = {
    "append": ToolKindTraits(idempotent=False, pure=False, concurrency_safe=False),
    "send": ToolKindTraits(idempotent=False, pure=False, concurrency_safe=False),
    "put": ToolKindTraits(idempotent=True, pure=False, concurrency_safe=False),
    "read": ToolKindTraits(idempotent=True, pure=True, concurrency_safe=True),
    "inspect": ToolKindTraits(idempotent=True, pure=True, concurrency_safe=True),
}
PURE_TOOL_KINDS: frozenset[ToolKind] = frozenset(
    kind for kind, traits in TOOL_KIND_TRAITS.items() if traits.pure
)
CONCURRENCY_SAFE_TOOL_KINDS: frozenset[ToolKind] = frozenset(
    kind for kind, traits in TOOL_KIND_TRAITS.items() if traits.concurrency_safe
)
