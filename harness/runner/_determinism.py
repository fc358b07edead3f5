"""Determinism: the same case run twice gives the same trace, byte for byte (DESIGN §3).

An agent that draws ids from ``uuid4``, reads the wall clock or iterates a set
into what it sends passes every other check and still cannot be replayed: the
one-line replay command would reproduce a different run. :func:`run_case_twice`
runs a case twice and adds a ``determinism`` verdict; when the digests differ
it names the first field, in trace order, where the runs parted::

    result = run_case_twice(case, scenario)
    # determinism fail: "the second run differed first at requests[0].attempt_id: …"
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from fakes import HarnessLimitExceeded
from harness.checks import Trace, Verdict
from harness.runner._case import no_crash_case, refused_by_the_seal, run_trace
from harness.runner._results import Case, CaseResult, without_secrets
from harness.runner._run import AgentUnderTest, case_result, limit_result
from harness.scenario import Scenario, load_scenario


def run_case_twice(case: Case, scenario: Scenario | None = None,
                   agent_factory: AgentUnderTest | None = None) -> CaseResult:
    """:func:`~harness.runner.run_case`, run twice, with a ``determinism`` verdict added.

    Both runs replay the case from its start: two whole runs of the agent are what
    its determinism is judged on, not a copy of a recorded one.
    """
    scenario = scenario if scenario is not None else load_scenario(case.source)
    try:
        first = run_trace(case, scenario, agent_factory, replay=True)
        second = run_trace(case, scenario, agent_factory, replay=True)
    except HarnessLimitExceeded as limit:
        return limit_result(case, limit)
    return judged_twice(case, scenario, first, second)


def judged_twice(case: Case, scenario: Scenario, first: Trace, second: Trace) -> CaseResult:
    """The result of ``case`` from the traces of its two runs, with the ``determinism`` verdict."""
    result = case_result(case, first)
    result = replace(result, verdicts=(*result.verdicts, *no_crash_case(case, scenario, first),
                                       *refused_by_the_seal(first),
                                       determinism_verdict(first, second)))
    return without_secrets(result, scenario.secret_values())


def determinism_verdict(first: Trace, second: Trace) -> Verdict:
    """``pass`` when both traces have one digest; else ``fail`` naming the first difference."""
    if first.digest == second.digest:
        return Verdict("determinism", "pass", f"both runs gave digest {first.digest[:12]}")
    a, b = first.to_json(), second.to_json()
    where = first_difference(a, b, "") or "(order of keys)"
    return Verdict("determinism", "fail", f"the second run differed first at {where}",
                   (f"digests {first.digest[:12]} and {second.digest[:12]}",
                    *_later_differences(a, b, where)),
                   advice="derive ids, times and orders from the seed and the clock port, "
                          "never uuid4, the wall clock or set order")


def _later_differences(a: dict[str, Any], b: dict[str, Any], first: str) -> list[str]:
    """Where else the two runs differ: the first difference in each other part of the trace.

    A run that went another way differs in several parts at once (no commits, and other
    requests); the first alone would not say which way it went.

    >>> _later_differences({"points": [1], "requests": [2], "seed": 3},
    ...                    {"points": [], "requests": [5], "seed": 3}, "points: ...")
    ['also at requests[0]: 2 != 5']
    """
    found = []
    named = re.match(r"[^.\[:,]*", first)
    for key in [*a, *(k for k in b if k not in a)]:
        where = first_difference(a.get(key), b.get(key), key) if key in a and key in b \
            else f"{key}: only in the {'second' if key not in a else 'first'} run"
        if where is not None and (named is None or key != named.group()):
            found.append(f"also at {where}")
    return found[:_LATER_SHOWN]


#: How many other parts of a trace that differ a determinism failure names.
_LATER_SHOWN = 8


def first_difference(a: Any, b: Any, path: str) -> str | None:
    """The path and both values of the first place ``a`` and ``b`` differ, or ``None``.

    >>> first_difference({"r": [1, {"id": "x"}]}, {"r": [1, {"id": "y"}]}, "")
    "r[1].id: 'x' != 'y'"
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return _dict_difference(a, b, path)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return _list_difference(list(a), list(b), path)
    if isinstance(a, str) and isinstance(b, str) and a != b:
        return _text_difference(a, b, path)
    if a != b or type(a) is not type(b):
        return f"{path}: {_short(a)} != {_short(b)}"
    return None


def _text_difference(a: str, b: str, path: str) -> str:
    """Two texts shown around the first character where they part.

    A request body or a long id differs far from its start more often than not;
    cut at its opening, both sides would read the same.

    >>> first, second = _text_difference("x" * 90 + "-id-7-" + "y" * 90,
    ...                                   "x" * 90 + "-id-8-" + "y" * 90, "body").split(" != ")
    >>> first
    "body, at character 94: ...'xxxxxxxxxxxxxxxxxxxx-id-7-yyyyyyyyyyyyyyyyyyyyyy'..."
    >>> second
    "...'xxxxxxxxxxxxxxxxxxxx-id-8-yyyyyyyyyyyyyyyyyyyyyy'..."
    """
    if len(a) <= _SHORT and len(b) <= _SHORT:
        return f"{path}: {a!r} != {b!r}"
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
              min(len(a), len(b)))
    return f"{path}, at character {at}: {_around(a, at)} != {_around(b, at)}"


def _around(text: str, at: int) -> str:
    """``text`` near ``at``, with ``...`` where it was cut."""
    start, end = max(0, at - _CONTEXT), at + _CONTEXT
    return ("..." if start else "") + repr(text[start:end]) + ("..." if end < len(text) else "")


def _dict_difference(a: dict[str, Any], b: dict[str, Any], path: str) -> str | None:
    for key in [*a, *(k for k in b if k not in a)]:
        where = f"{path}.{key}" if path else key
        if key not in a or key not in b:
            return f"{where}: only in the {'second' if key not in a else 'first'} run"
        found = first_difference(a[key], b[key], where)
        if found:
            return found
    return None


def _list_difference(a: list[Any], b: list[Any], path: str) -> str | None:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        found = first_difference(x, y, f"{path}[{index}]")
        if found:
            return found
    if len(a) != len(b):
        return f"{path}: {len(a)} item(s) in the first run, {len(b)} in the second"
    return None


#: How long a value is shown whole; past it, its start, or for two texts where they part.
_SHORT = 60
#: Characters shown either side of where two long texts part.
_CONTEXT = 24


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHORT else text[:_SHORT - 3] + "..."
