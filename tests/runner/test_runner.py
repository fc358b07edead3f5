"""The runner: recorded points, planned cases, crash and recovery, digests, the minimal agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness.runner import (
    Case,
    CrashSpec,
    crash_kind,
    plan_cases,
    record_points,
    run_case,
    sample_cases,
)

AGENT = minimal_factory()
SOURCE = Path("scenarios/mail.yaml")


def case(crash: CrashSpec | None = None, seed: int = 0) -> Case:
    return Case("mail", SOURCE, seed, crash)


def test_a_crash_free_run_lists_its_persistence_points_in_order() -> None:
    points = record_points(mail_scenario(), AGENT)
    assert points[:3] == ["state:mkdir#1", "root:fsync_dir#1", "transcript:create#1"]
    assert "journal:fsync#2" in points
    assert len(points) == len(set(points))


def test_cases_have_readable_ids_and_put_fsync_points_first() -> None:
    cases = plan_cases(mail_scenario(crash={"points": "all",
                                            "classes": ["unsynced_lost", "eio_on_fsync"]}),
                       SOURCE, AGENT)
    ids = [c.case_id for c in cases]
    assert ids[0] == "mail"
    assert ids[1] == "mail[root:fsync_dir#1:after:unsynced_lost]"
    assert ids[2] == "mail[root:fsync_dir#1:after:eio_on_fsync]"
    first_plain = next(i for i, c in enumerate(cases[1:], 1)
                       if c.crash and "fsync" not in c.crash.point_id)
    assert all(c.crash and "fsync" in c.crash.point_id for c in cases[1:first_plain])
    # eio_on_fsync never applies to a write point
    assert not any(c.crash and c.crash.crash_class == "eio_on_fsync"
                   and ":write#" in c.crash.point_id for c in cases)


def test_a_sample_crashes_each_kind_of_point_once_at_its_middle_occurrence() -> None:
    planned = plan_cases(mail_scenario(crash={
        "points": "all", "classes": ["unsynced_lost", "torn_append_short"],
        "during_recovery": True}), SOURCE, AGENT)
    sampled = sample_cases(planned)

    kinds = [crash_kind(c.crash) for c in planned if c.crash]
    assert [c for c in sampled if c.crash is None] == [case()]
    assert sorted(crash_kind(c.crash) for c in sampled if c.crash) == sorted(set(kinds))
    assert len(sampled) - 1 == len(set(kinds)) < len(planned) - 1
    assert [c for c in planned if c in sampled] == sampled  # the plan's order
    fsyncs = [c for c in planned if c.crash and crash_kind(c.crash) == (
        "journal:fsync", "after", "unsynced_lost", False)]
    assert len(fsyncs) >= 3  # a kind with occurrences on both sides of its middle
    assert fsyncs[(len(fsyncs) - 1) // 2] in sampled
    assert fsyncs[0] not in sampled
    assert fsyncs[-1] not in sampled


def test_crash_points_none_plans_only_the_crash_free_case() -> None:
    assert plan_cases(mail_scenario(crash={"points": "none"}), SOURCE, AGENT) == [case()]


def test_a_listed_point_is_kept_and_a_missing_one_is_an_unknown_case() -> None:
    chosen = mail_scenario(crash={"points": ["journal:fsync#2"], "classes": ["unsynced_lost"]})
    ids = [c.case_id for c in plan_cases(chosen, SOURCE, AGENT)]
    assert ids == ["mail", "mail[journal:fsync#2:after:unsynced_lost]",
                   "mail[journal:fsync#2:before:unsynced_lost]"]
    missing = mail_scenario(crash={"points": ["journal:fsync#99"], "classes": ["unsynced_lost"]})
    planned = plan_cases(missing, SOURCE, AGENT)
    assert [c.case_id for c in planned] == [
        "mail", "mail[journal:fsync#99:after:unsynced_lost]",
        "mail[journal:fsync#99:before:unsynced_lost]"]
    result = run_case(planned[1], missing, AGENT)
    assert (result.status, result.passed) == ("unknown", False)
    crash = [v for v in result.verdicts if v.invariant == "crash"]
    assert crash[0].status == "unknown"
    assert crash[0].message.startswith("the agent never reached journal:fsync#99, so this case "
                                       "proves nothing; it reached: ")
    assert crash[0].message.endswith("Did you mean 'journal:fsync#3'?")


def test_the_crash_free_case_passes_every_reached_invariant() -> None:
    result = run_case(case(), mail_scenario(), AGENT)
    assert result.passed, result.failed_verdicts
    assert result.stop_state == "complete"
    statuses = {v.invariant: v.status for v in result.verdicts}
    assert statuses["I1"] == statuses["I2"] == statuses["I10"] == statuses["I11"] == "pass"
    # nothing was truncated, retried or left unknown: those stay unknown, never pass
    assert statuses["I3"] == statuses["I7"] == statuses["I8"] == statuses["I9"] == "unknown"
    assert result.side_effects == {"mail": 1}


def test_a_crash_after_the_start_record_recovers_inspects_and_finishes() -> None:
    spec = CrashSpec("journal:fsync#2", "after", "unsynced_lost")
    result = run_case(case(spec), mail_scenario(), AGENT)
    assert result.crash_reached
    assert result.passed, result.failed_verdicts
    trace = result.trace
    assert trace is not None
    assert [i.purpose for i in trace.incarnations] == ["run", "run", "recover-check",
                                                       "recover-check"]
    assert trace.incarnations[0].crashed_at == "journal:fsync#2"
    assert {v.invariant: v.status for v in result.verdicts}["I3"] == "pass"
    assert [inv.tool for inv in trace.invocations] == ["look"]


def test_a_crash_during_recovery_crashes_the_second_incarnation_too() -> None:
    spec = CrashSpec("journal:fsync#2", "after", "unsynced_lost", during_recovery=True)
    result = run_case(case(spec), mail_scenario(), AGENT)
    assert result.trace is not None
    runs = [i for i in result.trace.incarnations if i.purpose == "run"]
    assert [i.crashed_at is not None for i in runs] == [True, True, False]
    assert result.trace.crash.second is not None
    assert result.passed, result.failed_verdicts


def test_a_crash_during_recovery_that_never_fires_is_not_reached() -> None:
    # After the last point the durable state is whole: the reference agent's
    # recovery writes nothing, so there is no point to crash it again at.
    last = record_points(mail_scenario())[-1]
    spec = CrashSpec(last, "after", "unsynced_lost", during_recovery=True)
    result = run_case(case(spec), mail_scenario())
    assert result.trace is not None
    assert result.trace.crash.second is None
    assert not result.crash_reached
    assert not result.passed


@pytest.mark.parametrize("then", ["after_tool:mail#1", "journal:fsync#2"])
def test_a_second_crash_strikes_where_the_scenario_says(then: str) -> None:
    # Incarnation 1 dies before it sends; the restarted one sends and dies again there.
    scenario = mail_scenario(crash={"points": "all", "then": then})
    spec = CrashSpec("transcript:fsync#2", "after", "unsynced_lost")
    result = run_case(case(spec), scenario, AGENT)
    assert result.trace is not None
    runs = [i for i in result.trace.incarnations if i.purpose == "run"]
    assert [i.crashed_at for i in runs] == ["transcript:fsync#2", then, None]
    assert result.trace.crash.second == then
    assert result.passed, result.failed_verdicts


def test_a_second_crash_the_run_already_passed_never_strikes() -> None:
    # The mail went out before the first crash: no later incarnation sends it.
    scenario = mail_scenario(crash={"points": "all", "then": "after_tool:mail#1"})
    spec = CrashSpec("transcript:fsync#4", "before", "unsynced_lost")
    result = run_case(case(spec), scenario, AGENT)
    assert result.trace is not None
    assert result.trace.crash.second is None
    assert [i.crashed_at is not None for i in result.trace.incarnations
            if i.purpose == "run"] == [True, False]
    assert result.passed, result.failed_verdicts


def test_no_crash_during_recovery_is_planned_after_the_last_point() -> None:
    scenario = mail_scenario(crash={"points": "all", "classes": ["unsynced_lost"],
                                    "during_recovery": True})
    last = record_points(scenario)[-1]
    labels = [c.crash.label for c in plan_cases(scenario, SOURCE) if c.crash]
    assert f"{last}:after:unsynced_lost" in labels
    assert f"{last}:before:unsynced_lost:again" in labels
    assert f"{last}:after:unsynced_lost:again" not in labels


def test_the_digest_is_identical_for_one_seed_and_differs_for_another() -> None:
    spec = CrashSpec("transcript:fsync#3", "before", "torn_append_garbage")
    first = run_case(case(spec, seed=3), mail_scenario(), AGENT)
    again = run_case(case(spec, seed=3), mail_scenario(), AGENT)
    other = run_case(case(spec, seed=4), mail_scenario(), AGENT)
    assert first.trace is not None
    assert again.trace is not None
    assert first.trace.canonical_json() == again.trace.canonical_json()
    assert first.digest == again.digest != other.digest


def test_attempt_rows_carry_the_input_and_its_cached_parts() -> None:
    scenario = mail_scenario(model=[{"turn": 1, "text": "Hi.", "usage": {
        "input_tokens": 100, "output_tokens": 5, "cache_read_tokens": 60,
        "cache_write_tokens": 10}}])
    (row,) = run_case(case(), scenario, AGENT).attempts
    assert (row.turn, row.attempt, row.outcome) == (1, 1, "complete")
    # input counts every prompt token, as gen_ai.usage.input_tokens does; reads and
    # writes are parts of it (the reports derive the uncached 30)
    assert (row.input_tokens, row.cache_read_tokens, row.cache_write_tokens,
            row.output_tokens) == (100, 60, 10, 5)
    assert (row.provider, row.cache_miss, row.prompt_version) == ("openai", None, None)


def test_faults_are_keyed_to_turn_and_attempt_and_survive_a_crash() -> None:
    scenario = mail_scenario(faults=[{"at": {"turn": 1}, "kind": "http_error", "status": 503}])
    result = run_case(case(), scenario, AGENT)
    assert result.trace is not None
    first, second = result.trace.requests[:2]
    assert (first.turn, first.attempt, first.delivery, first.faults) == (
        1, 1, "http_error", ("http_error",))
    assert (second.turn, second.attempt, second.delivery) == (1, 2, "complete")
    assert result.retries == 1
    assert result.passed
    rows = result.attempts
    assert [row.retry_layer for row in rows][:2] == [None, "request"]  # 503: request layer
    assert rows[0].attempt_id is not None
    assert rows[0].attempt_id.startswith("att_")
    assert rows[0].attempt_id != rows[1].attempt_id


def test_the_minimal_agent_passes_every_crash_case_of_the_scenario() -> None:
    scenario = mail_scenario(crash={"points": "all", "classes": [
        "unsynced_lost", "torn_append_garbage", "missing_dir_fsync", "eio_on_write"]})
    results = [run_case(c, scenario, AGENT) for c in plan_cases(scenario, SOURCE, AGENT)]
    failed = [(r.case.case_id, r.error, r.failed_verdicts) for r in results if not r.passed]
    assert not failed
    assert len(results) > 50


def test_anthropic_dialect_runs_the_same_scenario() -> None:
    scenario = mail_scenario(dialect="anthropic")
    spec = CrashSpec("journal:fsync#2", "after", "unsynced_lost")
    assert run_case(case(spec), scenario, AGENT).passed
