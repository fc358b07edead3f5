"""What a whole run never reached: the crash points, faults and expectations it proves nothing of.

One case that misses its crash point is ``unknown``; a run in which *no* case reached a
point, a fault or a declared expectation has not tested it at all, nor has one whose
``points: all`` made no crash case (the agent reached no point of its own), and a green
CI job must not hide that (``harness run --strict`` fails on it, naming each)::

    for thing in never_reached(results, {"book": scenario}):
        print(thing)   # book: crash point history:fsync#1 was never reached

An expectation is what the scenario declares beyond its stop state and its default
checks: an ``expect.invariants`` list written out, a ``breaker``, a
``stop_state_after_disk_error``, a ``max_tool_result_chars``, a goal's ``protected``
paths. It is reached when some case judged it (``pass``,
``fail`` or ``warn``); a check every case left ``unknown`` was never exercised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from harness.runner._results import CaseResult
    from harness.scenario import Scenario

UnreachedKind = Literal["crash point", "fault", "expectation", "script", "crash cases"]

#: The check that judges each expectation field a scenario may declare.
EXPECTATION_CHECKS: Mapping[str, str] = {"breaker": "breaker",
                                         "stop_state_after_disk_error": "J6",
                                         "max_tool_result_chars": "context:tool-output"}


@dataclass(frozen=True)
class Unreached:
    """One crash point, fault or expectation of a scenario that no case of the run reached."""

    scenario: str
    kind: UnreachedKind
    name: str

    def __str__(self) -> str:
        if self.kind == "script":  # the name is why it could not be played
            return f"{self.scenario}: its script was never played: {self.name}"
        if self.kind == "crash cases":  # the name says why there are none
            return f"{self.scenario}: {self.name}"
        return f"{self.scenario}: {self.kind} {self.name} was never reached"


def never_reached(results: Sequence[CaseResult], scenarios: Mapping[str, Scenario]
                  ) -> list[Unreached]:
    """Every crash point, fault and expectation no case of ``results`` reached, per scenario
    in the order the results first name them."""
    declared = {name: declared_expectations(scenario) for name, scenario in scenarios.items()}
    return never_reached_declared(results, declared)


def never_reached_declared(results: Sequence[CaseResult],
                           declared: Mapping[str, Sequence[str]]) -> list[Unreached]:
    """:func:`never_reached` with each scenario's :func:`declared_expectations` given by
    name: what ``harness merge`` has of scenarios its shards loaded elsewhere."""
    names = list(dict.fromkeys(result.case.scenario_name for result in results))
    found: list[Unreached] = []
    for name in names:
        cases = [result for result in results if result.case.scenario_name == name]
        found += [Unreached(name, "script", why) for why in _script_unplayed(cases)]
        found += [Unreached(name, "crash cases", why) for why in _no_crash_cases(cases)]
        found += [Unreached(name, "crash point", p) for p in _points_missed(cases)]
        found += [Unreached(name, "fault", f) for f in _faults_missed(cases)]
        found += [Unreached(name, "expectation", e)
                  for e in _expectations_missed(cases, declared.get(name, ()))]
    return found


def _script_unplayed(cases: Sequence[CaseResult]) -> list[str]:
    """Why the scenario's script was played in no case (its call the agent's tool refuses)."""
    reasons = [result.unplayable for result in cases]
    first = reasons[0] if reasons else None
    return [first] if first is not None and all(why is not None for why in reasons) else []


def _no_crash_cases(cases: Sequence[CaseResult]) -> list[str]:
    """Why the scenario asked for a crash at every point of the agent's own files and got
    no crash case: its uncrashed run reached none (a script never played says so itself)."""
    reasons = [result.no_crash_case for result in cases if result.unplayable is None]
    return [why for why in reasons if why is not None]


def _points_missed(cases: Sequence[CaseResult]) -> list[str]:
    crashed = [r for r in cases if r.case.crash is not None]
    points = list(dict.fromkeys(r.case.crash.point_id for r in crashed if r.case.crash))
    reached = {r.case.crash.point_id for r in crashed if r.case.crash and r.crash_reached}
    return [point for point in points if point not in reached]


def _faults_missed(cases: Sequence[CaseResult]) -> list[str]:
    # A fault one case met is tested, whatever the other cases missed.
    if not cases:
        return []
    missed_by_all = set.intersection(*(set(result.unreached_faults) for result in cases))
    return [fault for fault in cases[0].unreached_faults if fault in missed_by_all]


def declared_expectations(scenario: Scenario) -> list[str]:
    """The checks the scenario asks for by name: ``invariants`` when written out, and the
    check of each expectation field it sets (:data:`EXPECTATION_CHECKS`)."""
    expect = scenario.expect
    declared: list[str] = list(expect.invariants) if "invariants" in expect.model_fields_set else []
    declared += [check for field, check in EXPECTATION_CHECKS.items()
                 if field in expect.model_fields_set and getattr(expect, field) is not None]
    if scenario.goal is not None and scenario.goal.protected:
        declared.append("I5:protected")  # the goal's paths: a rule the run must have met
    return list(dict.fromkeys(declared))


def _expectations_missed(cases: Sequence[CaseResult], declared: Sequence[str]) -> list[str]:
    judged = {v.invariant for result in cases for v in result.verdicts
              if v.status in ("pass", "fail", "warn")}
    return [check for check in declared if check not in judged]


def proved_nothing_line(results: Sequence[CaseResult]) -> str | None:
    """``12 of 40 cases proved nothing: …``, or None when every case proved something."""
    unknown = sum(result.status == "unknown" for result in results)
    if not unknown:
        return None
    unplayed = " (or their script could not be played to the agent)" \
        if any(result.unplayable is not None for result in results) else ""
    return (f"{unknown} of {len(results)} cases proved nothing: their crash point or fault "
            f"was never reached{unplayed}")
