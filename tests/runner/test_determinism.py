"""--check-determinism: a case run twice must give one digest; else the first difference."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from harness.mutants import MUTANTS
from harness.runner import Case, determinism_verdict, first_difference, run_case_twice
from harness.runner._case import run_trace
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


def test_a_run_that_went_another_way_names_every_part_that_differs() -> None:
    """Beyond the first difference, each other part of the trace that differs is named:
    a second run with none of the first run's commits says whether it also asked, did
    and answered otherwise, which the first difference alone never told."""
    scenario = load_scenario(SOURCE)
    first = run_trace(Case(scenario.name, SOURCE, scenario.seed), scenario, replay=True)
    assert first.points  # the reference agent commits its log
    second = replace(first, points=(), requests=first.requests[:1],
                     final_incarnation=first.final_incarnation + 1)
    verdict = determinism_verdict(first, second)
    assert verdict.status == "fail"
    assert verdict.message == (f"the second run differed first at points: "
                               f"{len(first.points)} item(s) in the first run, 0 in the second")
    assert verdict.evidence[1:] == (
        f"also at requests: {len(first.requests)} item(s) in the first run, 1 in the second",
        f"also at final_incarnation: {first.final_incarnation} != "
        f"{first.final_incarnation + 1}")


def test_a_difference_in_one_part_names_that_part_only() -> None:
    scenario = load_scenario(SOURCE)
    first = run_trace(Case(scenario.name, SOURCE, scenario.seed), scenario, replay=True)
    verdict = determinism_verdict(first, replace(first, seed=first.seed + 1))
    assert verdict.message.startswith("the second run differed first at seed: ")
    assert len(verdict.evidence) == 1  # the digests, and nothing else differs
