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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, final

from fakes._crashdisk import Incarnations
from harness.ports import Clock
from harness.trace import EffectRecord


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


class Witness(Protocol):
    """Where each effect is told as it happens, outside the process the ledger lives in.

    A contained case's ledger lives with the agent, which can change it; the harness keeps
    its own from what it was told (:mod:`harness.runner._ledger_pipe`), and that is the one
    a verdict trusts. ``stream`` names the ledger (a world's copy has a stream of its own).
    """

    def told(self, stream: int, kind: str, *, tool: str, key: str, idempotent: bool,
             incarnation: int, at: float) -> Any:
        """Tell one effect; the tool's result, as the harness answers it."""
        ...

    def forked(self, stream: int) -> int:
        """A stream for a copy of ``stream``'s ledger as it stands now."""
        ...

    def called(self, stream: int, seq: int, *, tool: str, kind: str, call_id: str,
               arguments: object, incarnation: int, refused: bool, after_error: bool,
               now: Callable[[], float]) -> float:
        """Tell that the world's ``seq``-th tool invocation started; the virtual time it
        started at, ``now()`` read as it is told."""
        ...

    def settled(self, stream: int, seq: int, *, outcome: str, result: str | None,
                now: Callable[[], float] | None) -> float | None:
        """Tell that the world's ``seq``-th tool invocation ended ``outcome`` (``result``:
        what it returned, as canonical JSON); the virtual time it ended at, ``now()`` read
        as it is told (None: left running)."""
        ...

    def asked(self, stream: int, dialect: str, *, turn: int, attempt: int, incarnation: int,
              sent: bytes, now: Callable[[], float]) -> float:
        """Tell a request the world's provider took (``sent``: its bytes); the virtual time
        it arrived at, ``now()`` read as it is told."""
        ...

    def ended(self, stream: int, request: int, how: str, *, first: float | None,
              end: float, silence: float, size: int) -> None:
        """Tell that the stream answering ``stream``'s ``request``-th request ended ``how``:
        its first byte, its end, its longest silence and the bytes read, as measured."""
        ...


@final
class ToolLedger:
    """Every side effect of a run; see the module docstring."""

    def __init__(self, clock: Clock, incarnations: Incarnations | None = None) -> None:
        self.clock = clock
        self.incarnations = incarnations or Incarnations()
        # The trace's own records, taken as they are; what each effect changed (the
        # tool's arguments) stands beside it at the same position, since the trace leaves
        # it out.
        self.effects: list[EffectRecord] = []
        self.details: list[Any] = []
        self.world = WorldState()
        # None: this process's ledger is the only one (a test, harness serve).
        self.witness: Witness | None = None
        self.stream = 0
        # Counts by tool and by key of effects[:_counted]: asked after every effect and
        # every model request, so read as the list grows rather than counted anew.
        self._counted = 0
        self._by_tool: dict[str, int] = {}
        self._by_key: dict[str, int] = {}

    def apply(
        self, *, tool: str, key: str, idempotent: bool, incarnation: int, detail: Any
    ) -> EffectRecord:
        """Record one effect; a dead incarnation is refused (``DeadIncarnationError``)."""
        self.incarnations.check(incarnation, f"tool {tool} ({key})")
        effect = EffectRecord(
            len(self.effects) + 1, tool, key, idempotent, incarnation, self.clock.now()
        )
        self.effects.append(effect)
        self.details.append(detail)
        return effect

    def count(self, key: str) -> int:
        """How many effects carry ``key``."""
        self._catch_up()
        return self._by_key.get(key, 0)

    def tool_counts(self) -> dict[str, int]:
        """Effects per tool, tools in the order of their first effect.

        >>> from fakes._clock import VirtualClock
        >>> ledger = ToolLedger(VirtualClock())
        >>> _ = ledger.apply(tool="send", key="k", idempotent=False, incarnation=1, detail=None)
        >>> ledger.tool_counts(), ledger.count("k")
        ({'send': 1}, 1)
        """
        self._catch_up()
        return dict(self._by_tool)

    def _catch_up(self) -> None:
        if len(self.effects) < self._counted:  # the list was replaced: count it all again
            self._counted, self._by_tool, self._by_key = 0, {}, {}
        for effect in self.effects[self._counted:]:
            self._by_tool[effect.tool] = self._by_tool.get(effect.tool, 0) + 1
            self._by_key[effect.key] = self._by_key.get(effect.key, 0) + 1
        self._counted = len(self.effects)

    def duplicates(self) -> dict[str, int]:
        """Non-idempotent keys applied more than once, with their counts (I1)."""
        counts = Counter(e.key for e in self.effects if not e.idempotent)
        return {k: n for k, n in sorted(counts.items()) if n > 1}
