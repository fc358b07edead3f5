"""A scenario whose ``points: all`` made no crash case says so on its uncrashed case, and a
whole run (a merge of shards too, which has only the results) counts it as not reached."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness._output import case_row, result_from_row
from harness.runner import Case, CrashSpec, never_reached, run_case
from harness.runner._case import no_crash_case
from harness.trace import Trace

SOURCE = Path("scenarios/mail.yaml")
CASE = Case("mail", SOURCE, 0)


@pytest.fixture(scope="module")
def mailed() -> Trace:
    scenario = mail_scenario()
    result = run_case(CASE, scenario, minimal_factory())
    assert result.trace is not None
    assert result.trace.points  # the minimal agent keeps a journal
    return result.trace


def test_an_agent_that_reached_its_points_has_crash_cases_and_no_such_verdict(
        mailed: Trace) -> None:
    assert no_crash_case(CASE, mail_scenario(), mailed) == ()


def test_no_point_reached_leaves_points_all_without_a_crash_case(mailed: Trace) -> None:
    [verdict] = no_crash_case(CASE, mail_scenario(), replace(mailed, points=()))
    assert (verdict.invariant, verdict.status) == ("crash:cases", "unknown")
    assert verdict.message.startswith(
        "the agent reached no persistence point of its own (no file written, synced or "
        "committed) in its uncrashed run, so 'points: all' made no crash case: the run proves "
        "nothing of how it survives a crash")


def test_listed_world_events_are_still_crashed_and_the_words_say_so(mailed: Trace) -> None:
    scenario = mail_scenario(crash={"points": ["all", "after_tool:mail#1"]})
    [verdict] = no_crash_case(CASE, scenario, replace(mailed, points=()))
    assert verdict.message.endswith("made no crash case: only the world events it lists were "
                                    "crashed: the run proves nothing of a crash between them")


def test_only_the_uncrashed_case_of_a_scenario_asking_for_all_gets_it(mailed: Trace) -> None:
    none_reached = replace(mailed, points=())
    crashed = replace(CASE, crash=CrashSpec("after_tool:mail#1", "at", "process_killed"))
    assert no_crash_case(crashed, mail_scenario(), none_reached) == ()
    listed = mail_scenario(crash={"points": ["after_tool:mail#1"]})
    assert no_crash_case(CASE, listed, none_reached) == ()
    assert no_crash_case(CASE, mail_scenario(crash={"points": "none"}), none_reached) == ()


def test_a_run_and_a_merge_of_its_rows_both_count_it_as_not_reached(mailed: Trace) -> None:
    scenario = mail_scenario()
    result = run_case(CASE, scenario, minimal_factory())
    missing = replace(result, verdicts=(*result.verdicts,
                                        *no_crash_case(CASE, scenario, replace(mailed,
                                                                               points=()))))
    assert missing.passed  # the uncrashed case's own verdict stands
    [thing] = never_reached([missing], {"mail": scenario})
    assert str(thing).startswith("mail: the agent reached no persistence point of its own")
    # harness merge reads the cases.jsonl rows of its shards, never the traces.
    row = json.loads(json.dumps(case_row(missing)))
    assert [str(t) for t in never_reached([result_from_row(row)], {})] == [str(thing)]
