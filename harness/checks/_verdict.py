"""A verdict: one invariant's judgement of a finished run (pass, fail, warn or unknown).

``warn`` is a finding of the lower severity: advice such as "no backoff between
retries", which does not fail a case unless the run is ``--strict``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

VerdictStatus = Literal["pass", "fail", "warn", "unknown"]


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
    advice: str = ""  # one line: what to change in the agent, for a fail or a warn
