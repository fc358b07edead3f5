"""A verdict: one invariant's judgement of a finished run (``pass``, ``fail`` or ``unknown``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

VerdictStatus = Literal["pass", "fail", "unknown"]


@dataclass(frozen=True)
class Verdict:
    """One invariant's judgement of a finished run, with the evidence behind it.

    >>> Verdict("I1", "pass", "no duplicate").status
    'pass'
    """

    invariant: str
    status: VerdictStatus
    message: str
    evidence: tuple[str, ...] = ()
