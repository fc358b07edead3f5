"""The tool ledger: the side effects that really happened, in the outside world.

The ledger survives crashes (DESIGN §3): it is the world, not the agent. Each
effect carries its idempotency key, the incarnation that caused it and the
virtual time, so "the same e-mail was sent twice" is a fact the checkers can
count (I1), and a call from a dead incarnation is refused (seed 002 §19.6:
counting fake tools, safe and unsafe to repeat).

Example::

    ledger = ToolLedger(clock)
    ledger.apply(tool="send", key="k1", idempotent=False, incarnation=1, detail={})
    ledger.duplicates()            # {} — only one effect under "k1"
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, final

from fakes._crashdisk import Incarnations
from harness.ports._clock import Clock


@dataclass(frozen=True)
class SideEffect:
    """One effect applied to the world."""

    seq: int
    tool: str
    key: str
    idempotent: bool
    incarnation: int
    at: float
    detail: Any


@dataclass
class WorldState:
    """What the tools change: a notes file, an outbox, a key-value store."""

    notes: list[str] = field(default_factory=list)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    store: dict[str, Any] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        """A JSON copy, what ``read``/``inspect`` return to the model."""
        return {
            "notes": list(self.notes),
            "outbox": [dict(m) for m in self.outbox],
            "store": dict(sorted(self.store.items())),
        }


@final
class ToolLedger:
    """Every side effect of a run; see the module docstring."""

    def __init__(self, clock: Clock, incarnations: Incarnations | None = None) -> None:
        self.clock = clock
        self.incarnations = incarnations or Incarnations()
        self.effects: list[SideEffect] = []
        self.world = WorldState()

    def apply(
        self, *, tool: str, key: str, idempotent: bool, incarnation: int, detail: Any
    ) -> SideEffect:
        """Record one effect; a dead incarnation is refused (``DeadIncarnationError``)."""
        self.incarnations.check(incarnation, f"tool {tool} ({key})")
        effect = SideEffect(
            len(self.effects) + 1, tool, key, idempotent, incarnation, self.clock.now(), detail
        )
        self.effects.append(effect)
        return effect

    def count(self, key: str) -> int:
        return sum(1 for e in self.effects if e.key == key)

    def duplicates(self) -> dict[str, int]:
        """Non-idempotent keys applied more than once, with their counts (I1)."""
        counts = Counter(e.key for e in self.effects if not e.idempotent)
        return {k: n for k, n in sorted(counts.items()) if n > 1}
