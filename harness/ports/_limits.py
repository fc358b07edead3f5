"""The words a fault's fields are declared in: their limits and what they mean.

A fault is declared once, in :mod:`harness.ports._faults`, as a dataclass whose field
annotations carry their limits (``annotated_types`` constraints) and a
:class:`Doc`. The scenario format derives its models and its JSON Schema from
those annotations, so a new fault, or a new limit, is written in one place.

A fault checks its values against the same annotations (:func:`field_problem`), so a
fault built in Python and one read from YAML are held to one set of bounds.

Example::

    every: Annotated[Count, Doc("Events between two comments.")] = 1
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen


@dataclass(frozen=True)
class Wording:
    """How a refusal words a field: its values' noun (``a number of seconds``, not just its
    type) and, on an optional field, what ``None`` stands for (``to stall forever``)."""

    noun: str = ""
    none: str = ""

    def or_none(self) -> str:
        """What a refusal adds about ``None``: ``, or None to stall forever``, or nothing."""
        return f", or None {self.none}" if self.none else ""


# Bounds keep a typo (an extra zero) from turning a fast test into a slow one.
MAX_COUNT: Final = 1_000_000
MAX_SECONDS: Final = 7 * 24 * 3600.0
# The most characters a tool's result may be made of (a long build log, not a disk), and
# the least a limit on one result's inline size may be: room for a reference and a line.
MAX_OUTPUT_CHARS: Final = 5_000_000
MIN_INLINE_CHARS: Final = 500


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
PauseSeconds = Annotated[float, Wording(noun="a number of seconds"), Ge(0), Le(MAX_SECONDS)]
Rate = Annotated[float, Gt(0), Le(MAX_COUNT)]
Text = Annotated[str, MinLen(1), MaxLen(1000)]
ShortText = Annotated[str, MinLen(1), MaxLen(100)]
LineText = Annotated[str, MinLen(1), MaxLen(1000), OneLine()]


# ------------------------------------------------------------- checking a value

_LOWER = (Ge, Gt)
_UPPER = (Le, Lt)
_SYMBOL = {Ge: ">=", Gt: ">", Le: "<=", Lt: "<"}
_NOUNS = {int: "an int", float: "a number", str: "a str", bool: "True, False"}


def field_problem(hint: Any, value: object) -> tuple[object, str] | None:
    """``None`` when ``value`` fits the declared ``hint``; else the offending value and what fits.

    The offending value is ``value`` itself, or the element of a tuple that does not fit.
    A bound that is broken is named alone when it is the lower one (``an int >= 0``);
    above the upper one the whole range is named (``a number in (0, 1)``).

    >>> field_problem(Count, 0)
    (0, 'an int >= 1')
    >>> field_problem(Annotated[PauseSeconds | None, Wording(none="to stall forever")], 10**7)
    (10000000, 'a number of seconds in [0, 604800.0], or None to stall forever')
    >>> field_problem(tuple[Count, ...], (3, 0)) is None, field_problem(tuple[Count, ...], (3, 0))
    (False, (0, 'an int >= 1'))
    """
    base, metadata = _split(hint)
    if get_origin(base) in (Union, types.UnionType):
        return _union_problem(get_args(base), metadata, value)
    if get_origin(base) is Literal:
        fits = any(value == v and type(value) is type(v) for v in get_args(base))
        return None if fits else (value, "one of " + ", ".join(repr(v) for v in get_args(base)))
    if get_origin(base) is tuple:
        return _tuple_problem(get_args(base)[0], metadata, value)
    if not _is_a(base, value):
        return value, _describe(base, metadata)
    return _bound_problem(base, metadata, value)


def _split(hint: Any) -> tuple[Any, list[object]]:
    """The bare type under nested ``Annotated`` layers, and their metadata, outermost last."""
    metadata: list[object] = []
    while get_origin(hint) is Annotated:
        metadata = [*hint.__metadata__, *metadata]
        hint = get_args(hint)[0]
    return hint, metadata


def _is_a(base: Any, value: object) -> bool:
    if base is type(None):
        return value is None
    if base is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):  # a bool is an int to Python, never to a scenario
        return False
    if base is float:
        return isinstance(value, int | float)
    return isinstance(base, type) and isinstance(value, base)


def _union_problem(branches: Sequence[Any], metadata: list[object],
                   value: object) -> tuple[object, str] | None:
    optional = type(None) in branches
    if value is None and optional:
        return None
    or_none = next((m.or_none() for m in metadata if isinstance(m, Wording) and m.none), "")
    others = [b for b in branches if b is not type(None)]
    # The branch of the value's own type says what is wrong with it; else all branches are told.
    same_type = [b for b in others if _is_a(_split(b)[0], value)
                 or get_origin(_split(b)[0]) in (Literal, tuple)]
    for branch in same_type:
        problem = field_problem(branch, value)
        if problem is None:
            return None
        if _is_a(_split(branch)[0], value):
            return problem[0], problem[1] + or_none
    words = " or ".join(_describe(*_split(b)) for b in others)
    none = (or_none or " or None") if optional else ""
    return value, words + none


def _tuple_problem(element: Any, metadata: list[object],
                   value: object) -> tuple[object, str] | None:
    if not isinstance(value, tuple) or not _lengths_fit(metadata, value):
        return value, _describe(tuple[element, ...], metadata)
    return next((p for item in value if (p := field_problem(element, item)) is not None), None)


def _bound_problem(base: Any, metadata: list[object], value: Any) -> tuple[object, str] | None:
    lower = [m for m in metadata if isinstance(m, _LOWER)]
    upper = [m for m in metadata if isinstance(m, _UPPER)]
    noun = _noun(base, metadata)
    if any(not _holds(bound, value) for bound in lower):
        return value, _from_below(base, metadata)
    if any(not _holds(bound, value) for bound in upper):
        return value, _describe(base, metadata)
    # A text names the one rule it broke: empty, too long, or with a line break.
    if any(isinstance(m, MinLen) and len(value) < m.min_length for m in metadata):
        return value, noun
    too_long = [m.max_length for m in metadata
                if isinstance(m, MaxLen) and len(value) > m.max_length]
    if too_long:
        return value, f"a str of at most {too_long[0]} characters"
    if any(isinstance(m, OneLine) for m in metadata) and ("\n" in value or "\r" in value):
        return value, "a str without line breaks"
    return None


def _holds(bound: object, value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(bound, Ge):
        return bool(value >= bound.ge)
    if isinstance(bound, Gt):
        return bool(value > bound.gt)
    if isinstance(bound, Le):
        return bool(value <= bound.le)
    return isinstance(bound, Lt) and bool(value < bound.lt)


def _lengths_fit(metadata: list[object], value: Any) -> bool:
    return all(len(value) >= m.min_length for m in metadata if isinstance(m, MinLen)) and all(
        len(value) <= m.max_length for m in metadata if isinstance(m, MaxLen))


def _limit(bound: Any) -> object:
    return getattr(bound, type(bound).__name__.lower())


def _bound_text(bound: Any) -> str:
    return f"{_SYMBOL[type(bound)]} {_limit(bound)}"


def _noun(base: Any, metadata: list[object]) -> str:
    named = next((m.noun for m in metadata if isinstance(m, Wording) and m.noun), None)
    if named is not None:
        return named
    if base is str and any(isinstance(m, MinLen) and m.min_length >= 1 for m in metadata):
        return "a non-empty str"
    return _NOUNS.get(base, getattr(base, "__name__", str(base)))


def _from_below(base: Any, metadata: list[object]) -> str:
    """The values that fit, by their lower bound only: ``an int >= 1``."""
    lower = next((m for m in metadata if isinstance(m, _LOWER)), None)
    noun = _noun(base, metadata)
    return noun if lower is None else f"{noun} {_bound_text(lower)}"


def _describe(base: Any, metadata: list[object]) -> str:
    """Every value that fits, in words: ``an int in [0, 1000000]``, ``a non-empty str``."""
    if get_origin(base) is tuple:
        element = _from_below(*_split(get_args(base)[0]))
        many = element.removeprefix("an ").removeprefix("a ")
        first, _, rest = many.partition(" ")
        nonempty = "non-empty " if any(isinstance(m, MinLen) for m in metadata) else ""
        return f"a {nonempty}tuple of {first}s{' ' + rest if rest else ''}"
    if get_origin(base) is Literal:
        return "one of " + ", ".join(repr(v) for v in get_args(base))
    noun = _noun(base, metadata)
    lower = next((m for m in metadata if isinstance(m, _LOWER)), None)
    upper = next((m for m in metadata if isinstance(m, _UPPER)), None)
    if lower is not None and upper is not None:
        low, high = _limit(lower), _limit(upper)
        opening = "[" if isinstance(lower, Ge) else "("
        closing = "]" if isinstance(upper, Le) else ")"
        return f"{noun} in {opening}{low}, {high}{closing}"
    bound = lower or upper
    text = noun if bound is None else f"{noun} {_bound_text(bound)}"
    lengths = [m.max_length for m in metadata if isinstance(m, MaxLen)]
    if lengths:
        text += f" of at most {lengths[0]} characters"
    if any(isinstance(m, OneLine) for m in metadata):
        text += " without line breaks"
    return text
