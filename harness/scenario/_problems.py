"""Problems found by the models' own checks, located inside the scenario document.

A cross-field check knows exactly which value is wrong (the third call's
``tool``, the second fault's ``at.turn``) but pydantic can only place a model
validator's error on the whole model. The check therefore raises
:class:`ScenarioProblems`, a ``ValueError`` pydantic keeps untouched in the
error's context, and the loader turns each :class:`Problem` into a
``file:line:col`` error at the exact node::

    >>> str(ScenarioProblems([Problem(("turn",), "turn 0 does not exist", got="0")]))
    'turn 0 does not exist: got 0'
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from harness._errors import got_expected

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """One thing wrong, relative to the model that found it.

    ``loc`` is the path from that model to the offending node; ``at_key`` points
    at a mapping key instead of its value (an unknown name used as a key).
    """

    loc: Loc
    problem: str
    value: object = None
    got: str | None = None
    expected: str = ""
    hint: str = ""
    at_key: bool = False

    def text(self) -> str:
        """The problem as one line without a location."""
        return got_expected(self.problem, got=self.got, expected=self.expected, hint=self.hint)


def dotted(loc: Loc) -> str:
    """A location as a user reads it: ``faults[1].at.turn``; the document is ``scenario``.

    >>> dotted(("faults", 1, "at", "turn")), dotted(())
    ('faults[1].at.turn', 'scenario')
    """
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return text.lstrip(".") or "scenario"


def plural(count: int, noun: str) -> str:
    """``1 item``, ``2 items``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class ScenarioProblems(ValueError):
    """Raised by a model validator; carries every problem it found, not just the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(problem.text() for problem in self.problems))


def raise_if_any(problems: Sequence[Problem]) -> None:
    """Raise :class:`ScenarioProblems` when a check found anything."""
    if problems:
        raise ScenarioProblems(problems)


def quoted(values: Iterable[object], empty: str = "nothing") -> str:
    """``one of 'a', 'b'`` for an error message; ``empty`` when there are no values."""
    items = [repr(value) for value in values]
    return "one of " + ", ".join(items) if items else empty


def closest(word: object, choices: Iterable[str]) -> str | None:
    """The choice ``word`` was most likely meant to be, or None when none is close.

    >>> closest("stal", ["stall", "reset"]), closest(7, ["stall"])
    ('stall', None)
    """
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``Did you mean 'stall'?`` when ``word`` is close to one choice, else ``""``.

    >>> did_you_mean("stal", ["stall", "reset"])
    "Did you mean 'stall'?"
    """
    close = closest(word, choices)
    return "" if close is None else f"Did you mean {close!r}?"


_SHOWN_LENGTH = 60


def show(value: object) -> str:
    """Render a YAML value the way the user wrote it, cut to a readable length.

    >>> show(True), show(None), show("seven"), show({"kind": "slow", "seconds": 2})
    ('true', 'null', "'seven'", '{kind: slow, seconds: 2}')
    """
    # Inside a mapping quotes are noise; at the top they show spaces and emptiness.
    text = repr(value) if isinstance(value, str) else in_flow_style(value, _shown_scalar)
    return text if len(text) <= _SHOWN_LENGTH else text[: _SHOWN_LENGTH - 1] + "…"


def in_flow_style(value: object, scalar: Callable[[object], str]) -> str:
    """``value`` as one line of flow-style YAML, mappings in their own order, each scalar
    (a key too) as ``scalar`` writes it.

    >>> in_flow_style({"at": {"turn": 1}, "offsets": [1, 7]}, str)
    '{at: {turn: 1}, offsets: [1, 7]}'
    """
    if isinstance(value, dict):
        return "{" + ", ".join(f"{in_flow_style(k, scalar)}: {in_flow_style(v, scalar)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(in_flow_style(item, scalar) for item in value) + "]"
    return scalar(value)


def _shown_scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value.isidentifier() else repr(value)
    return str(value)


def show_typed(value: object) -> str:
    """:func:`show` with the value's YAML type, for "wrong type" messages.

    >>> show_typed("7"), show_typed(None)
    ("'7' (a string)", 'null')
    """
    return "null" if value is None else f"{show(value)} ({kind_of(value)})"


def kind_of(value: object) -> str:
    """The YAML type of ``value`` in words, for "wrong type" messages.

    >>> kind_of("7"), kind_of(7), kind_of([])
    ('a string', 'an integer', 'a list')
    """
    if value is None:
        return "null"
    for python_type, words in _KINDS:
        if isinstance(value, python_type):
            return words
    return f"a {type(value).__name__}"


# bool before int: YAML's true is a Python int too.
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (dict, "a mapping"),
    (list, "a list"),
)
