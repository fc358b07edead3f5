"""How far a fault schedule may reach: the fuzzer's bounds, light to import.

The fault kinds and behaviours themselves are declared once, by the fakes and the
scenario format; the bounds only narrow them and cap their numbers.

    >>> FuzzBounds(max_faults=1).max_attempt
    3
    >>> "subprocess" in FuzzBounds().behaviours
    False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from harness._fuzz_options import DEFAULT_MAX_FAULTS

# A child process is real time and a real process: not what a fast, deterministic search
# may start by the hundred. "instant" is what a tool without a behaviour already does.
_NEVER_FUZZED_BEHAVIOURS: Final = frozenset({"subprocess", "instant"})


def _fault_kinds() -> tuple[str, ...]:
    from harness.scenario import FAULT_KINDS

    return tuple(FAULT_KINDS)


def _behaviour_kinds() -> tuple[str, ...]:
    from harness.scenario import BEHAVIOUR_KINDS

    return tuple(k for k in BEHAVIOUR_KINDS if k not in _NEVER_FUZZED_BEHAVIOURS)


@dataclass(frozen=True)
class FuzzBounds:
    """How far a schedule may reach. Each bound keeps one run short and its repro readable."""

    max_faults: int = DEFAULT_MAX_FAULTS
    """Faults in one schedule."""
    max_attempt: int = 3
    """The highest attempt of a turn a fault is keyed to."""
    max_number: int = 64
    """The largest count, index, byte offset or Retry-After a fault field takes."""
    max_seconds: int = 150
    """The longest stall, slow tool or tool timeout, in virtual seconds."""
    fault_kinds: tuple[str, ...] = field(default_factory=_fault_kinds)
    """The fault kinds that take part; every declared kind unless narrowed."""
    behaviours: tuple[str, ...] = field(default_factory=_behaviour_kinds)
    """The tool behaviours that take part (``subprocess`` never does)."""

