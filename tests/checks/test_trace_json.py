"""The trace's canonical JSON is exactly ``json.dumps`` of its ``asdict`` form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import mail_scenario  # type: ignore[attr-defined]

from harness.runner import Case, CrashSpec, run_trace

CRASHES = [None, CrashSpec("journal:fsync#2", "after", "unsynced_lost"),
           CrashSpec("session:write#3", "before", "torn_append_garbage")]


@pytest.mark.parametrize("crash", CRASHES, ids=lambda c: c.label if c else "no-crash")
def test_canonical_json_is_the_sorted_compact_dump_of_the_asdict_form(
    crash: CrashSpec | None,
) -> None:
    scenario = mail_scenario()
    trace = run_trace(Case(scenario.name, Path("scenarios/mail.yaml"), 0, crash), scenario)
    trace.extra["note"] = {"b": [1, 2.5, None], "a": "é"}

    expected = json.dumps(trace.to_json(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False, allow_nan=False)

    assert trace.canonical_json() == expected


def test_canonical_json_refuses_what_json_refuses() -> None:
    scenario = mail_scenario()
    trace = run_trace(Case(scenario.name, Path("scenarios/mail.yaml"), 0), scenario)
    trace.extra["bad"] = {1, 2}

    with pytest.raises(TypeError, match=r"^Object of type set is not JSON serializable$"):
        trace.canonical_json()
