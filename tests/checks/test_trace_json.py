"""The trace's canonical JSON is exactly ``json.dumps`` of its ``to_json`` form."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mail_scenarios import mail_scenario

from harness.runner import Case, CrashSpec, run_trace
from harness.trace import Trace

CRASHES = [None, CrashSpec("journal:fsync#2", "after", "unsynced_lost"),
           CrashSpec("session:write#3", "before", "torn_append_garbage")]


def with_arguments(trace: Trace, arguments: dict[str, Any]) -> Trace:
    """``trace`` whose first invocation carried ``arguments`` (free JSON in a trace)."""
    first, *rest = trace.invocations
    return replace(trace, invocations=(replace(first, arguments=arguments), *rest))


@pytest.mark.parametrize("crash", CRASHES, ids=lambda c: c.label if c else "no-crash")
def test_canonical_json_is_the_sorted_compact_dump_of_the_asdict_form(
    crash: CrashSpec | None,
) -> None:
    scenario = mail_scenario()
    trace = run_trace(Case(scenario.name, Path("scenarios/mail.yaml"), 0, crash), scenario)
    trace = with_arguments(trace, {"b": [1, 2.5, None], "a": "é"})

    expected = json.dumps(trace.to_json(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False, allow_nan=False)

    assert trace.canonical_json() == expected


def test_canonical_json_refuses_what_json_refuses() -> None:
    scenario = mail_scenario()
    trace = run_trace(Case(scenario.name, Path("scenarios/mail.yaml"), 0), scenario)
    trace = with_arguments(trace, {"bad": {1, 2}})

    with pytest.raises(TypeError, match=r"^Object of type set is not JSON serializable$"):
        trace.canonical_json()


def test_the_extra_record_holds_in_the_json_only_what_the_case_said() -> None:
    scenario = mail_scenario()
    trace = run_trace(Case(scenario.name, Path("scenarios/mail.yaml"), 0), scenario)
    said = replace(trace.extra, agent="plain", world_events=("tool:send_mail#1",))

    extra = json.loads(replace(trace, extra=said).canonical_json())["extra"]

    assert extra == {**trace.extra.said(), "agent": "plain", "world_events": ["tool:send_mail#1"]}
    assert None not in extra.values()
