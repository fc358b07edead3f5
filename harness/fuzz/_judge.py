"""A schedule over a scenario: the scenario it makes, and what counts as a violation.

The schedule replaces the scenario's faults and crash selection and the behaviour of
the tools it names; the rest (tools, script, budget, provider, expectations) is the
scenario's world, unchanged.

Only checks that hold whatever the schedule count: the scenario's stop state
expectation (``I4``) and its exact side-effect counts were written for the faults the
scenario itself declares, and a generated fault may rightly change both (a 401 blocks
the run, a failing tool sends nothing). Every other invariant and always-on check must
hold under any schedule a correct agent meets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from harness._errors import HarnessError
from harness.fuzz._space import Json, Schedule
from harness.runner import CaseResult, Verdict
from harness.scenario import Scenario

SCHEDULE_DEPENDENT: Final = frozenset({"I4", "side_effects"})
"""Checks whose expectation belongs to the scenario's own faults, not to any schedule."""


def scenario_data(base: Scenario, schedule: Schedule) -> Json:
    """``base`` as scenario-format data, with the schedule in place of its faults and crash.

    Fields at their default are left out, so a repro shows only what matters.
    """
    data: Json = base.model_dump(mode="json", exclude_defaults=True,
                                 exclude={"faults", "crash"})
    tools = {name: dict(declared) for name, declared in data.get("tools", {}).items()}
    for name, change in schedule.tools:
        tools[name] = {**tools[name], **change}
    if tools:
        data["tools"] = tools
    if schedule.faults:
        data["faults"] = [dict(f) for f in schedule.faults]
    if schedule.crash is not None:
        crash = schedule.crash
        data["crash"] = {"points": [crash.point_id], "classes": [crash.crash_class]}
        if crash.during_recovery:
            data["crash"]["during_recovery"] = True
    data["expect"] = _schedule_expectation(data["expect"], base)
    return data


def _schedule_expectation(expect: Mapping[str, Any], base: Scenario) -> Json:
    judged = [i for i in base.expect.invariants if i not in SCHEDULE_DEPENDENT]
    kept = {k: v for k, v in expect.items() if k not in {"invariants", "side_effects"}}
    return {**kept, "invariants": judged}


def scheduled_scenario(base: Scenario, schedule: Schedule) -> Scenario | None:
    """The scenario the schedule makes, or ``None`` when its faults cannot go together."""
    try:
        return Scenario.model_validate(scenario_data(base, schedule))
    except (ValidationError, HarnessError):
        return None


def violations(result: CaseResult) -> tuple[Verdict, ...]:
    """The failed verdicts that no schedule excuses."""
    return tuple(v for v in result.failed_verdicts if v.invariant not in SCHEDULE_DEPENDENT)
