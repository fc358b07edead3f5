"""The words a fault's fields are declared in: their limits and what they mean.

A fault is declared once, in :mod:`fakes._faults`, as a dataclass whose field
annotations carry their limits (``annotated_types`` constraints) and a
:class:`Doc`. The scenario format derives its models and its JSON Schema from
those annotations, so a new fault, or a new limit, is written in one place.

Example::

    every: Annotated[Count, Doc("Events between two comments.")] = 1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final

from annotated_types import Ge, Gt, Le, MaxLen, MinLen

# Bounds keep a typo (an extra zero) from turning a fast test into a slow one.
MAX_COUNT: Final = 1_000_000
MAX_SECONDS: Final = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Doc:
    """What a field means, in the words a scenario's reader and the JSON Schema show."""

    text: str


@dataclass(frozen=True)
class OneLine:
    """A text without line breaks (an SSE line cannot hold one)."""


Count = Annotated[int, Ge(1), Le(MAX_COUNT)]
Index = Annotated[int, Ge(0), Le(MAX_COUNT)]
# A stall of zero seconds is legal (a read boundary and nothing else).
PauseSeconds = Annotated[float, Ge(0), Le(MAX_SECONDS)]
Rate = Annotated[float, Gt(0), Le(MAX_COUNT)]
Text = Annotated[str, MinLen(1), MaxLen(1000)]
ShortText = Annotated[str, MinLen(1), MaxLen(100)]
LineText = Annotated[str, MinLen(1), MaxLen(1000), OneLine()]
