"""--check-determinism: a case run twice must give one digest; else the first difference."""

from __future__ import annotations

import re
from pathlib import Path

from harness.mutants import MUTANTS
from harness.runner import Case, first_difference, run_case_twice
from harness.scenario import load_scenario

SOURCE = Path("scenarios/streaming/stall-then-429.yaml")
ENTROPY = next(m for m in MUTANTS if m.name == "D3-ids-from-entropy")


def test_the_reference_agent_runs_the_same_twice() -> None:
    scenario = load_scenario(SOURCE)
    result = run_case_twice(Case(scenario.name, SOURCE, scenario.seed), scenario)
    verdict = result.verdicts[-1]
    assert (verdict.invariant, verdict.status) == ("determinism", "pass")
    assert result.passed


def test_ids_from_entropy_fail_with_the_first_differing_field() -> None:
    scenario = load_scenario(SOURCE)
    result = run_case_twice(Case(scenario.name, SOURCE, scenario.seed), scenario,
                            ENTROPY.factory)
    verdict = result.verdicts[-1]
    assert (verdict.invariant, verdict.status) == ("determinism", "fail")
    # Its ids draw a different backoff jitter, so the first run ends at another time.
    assert re.match(r"^the second run differed first at incarnations\[0\]\.ended_at: "
                    r"[0-9.]+ != [0-9.]+$", verdict.message), verdict.message
    assert not result.passed


def test_the_first_difference_is_found_in_order_with_its_path() -> None:
    assert first_difference({"a": [1, 2], "b": 3}, {"a": [1, 2, 4], "b": 4}, "") == \
        "a: 2 item(s) in the first run, 3 in the second"
    assert first_difference({"a": 1}, {"a": 1}, "") is None


def test_two_long_texts_are_shown_where_they_part_not_at_their_start() -> None:
    body = '{"model": "m", "messages": [' + '{"role": "user", "content": "hi"}, ' * 20
    found = first_difference({"body": body + '"id-1"]}'}, {"body": body + '"id-2"]}'}, "")
    assert found is not None
    assert found.startswith(f"body, at character {len(body) + 4}: ...")
    first, second = found.split(" != ")
    assert "id-1" in first
    assert "id-2" in second


def test_two_short_texts_are_shown_whole() -> None:
    assert first_difference({"id": "a-1"}, {"id": "a-2"}, "") == "id: 'a-1' != 'a-2'"
