"""Pairing, dropped-case detection and the seeded bootstrap."""

import numpy as np
import pytest

from reports import ReportError, compare, load_results
from reports._bootstrap import bootstrap_deltas, percentile_interval

CRASH = "journal:fsync#1:after:unsynced_lost"


@pytest.fixture
def pair(write_folder, case, attempt):
    def build(base_cases, cand_cases):
        def folder(name, cases):
            return load_results(write_folder(name, cases, [attempt(c) for c in cases]))
        return folder("main", base_cases), folder("cand", cand_cases)
    return build


def test_runs_pair_on_scenario_seed_and_crash_label(pair, case):
    base, cand = pair([case("a"), case("a", crash=CRASH), case("a", seed=2)],
                      [case("a", seed=2), case("a", crash=CRASH), case("a")])
    comparison = compare(base, cand, resamples=50)
    assert comparison.paired.height == 3
    assert comparison.missing.height == 0
    assert comparison.added.height == 0


def test_a_run_missing_from_the_candidate_is_listed(pair, case):
    base, cand = pair([case("a"), case("a", crash=CRASH), case("b")], [case("a"), case("c")])
    comparison = compare(base, cand, resamples=50)
    # A crash at a point of the agent's own files the candidate never reaches is a change
    # in how it persists, not a dropped run (the gate's persistence_changed judges it).
    assert comparison.missing.select("harness.case_id", "why").rows() == [
        (f"a[{CRASH}]", "persistence changed"), ("b", "missing")]
    assert comparison.added["harness.case_id"].to_list() == ["c"]


def test_a_skipped_run_in_the_candidate_counts_as_dropped(pair, case):
    base, cand = pair([case("a"), case("b")], [case("a"), case("b", skipped=True)])
    assert compare(base, cand, resamples=50).missing.rows(named=True)[0]["why"] == "skipped"


def test_folders_without_a_common_run_are_a_clear_error(pair, case):
    base, cand = pair([case("a")], [case("b")])
    with pytest.raises(ReportError, match=r"share no run \(scenario, seed, crash label\)"):
        compare(base, cand)


def test_the_same_seed_gives_the_same_interval(pair, case):
    base, cand = pair([case(f"s{i}", passed=i % 2 == 0) for i in range(20)],
                      [case(f"s{i}", passed=i % 3 == 0) for i in range(20)])
    first = compare(base, cand, resamples=200, seed=7).metric("pass_rate").interval
    again = compare(base, cand, resamples=200, seed=7).metric("pass_rate").interval
    other = compare(base, cand, resamples=200, seed=8).metric("pass_rate").interval
    assert first == again
    assert first != other


def test_the_bootstrap_resamples_pairs_together():
    # Candidate = baseline + 1 in every unit: every paired replicate's delta is exactly 1.
    base = np.column_stack([np.arange(10.0), np.ones(10)])
    cand = np.column_stack([np.arange(10.0) + 1, np.ones(10)])
    deltas = bootstrap_deltas(base, cand, resamples=100, seed=0)
    assert percentile_interval(deltas) == [(pytest.approx(1.0), pytest.approx(1.0))]


def test_an_undefined_metric_has_no_interval():
    zeros = np.zeros((4, 2))
    assert percentile_interval(bootstrap_deltas(zeros, zeros, resamples=10, seed=0)) == [None]


def test_most_regressed_lists_a_lost_pass_first(pair, case):
    base, cand = pair([case("a"), case("b")], [case("a", passed=False), case("b")])
    regressed = compare(base, cand, resamples=20).regressed
    assert regressed.select("harness.scenario", "lost_pass").rows() == [("a", True)]


def test_an_unpriced_model_leaves_the_cost_unreported_not_zero(write_folder, case, attempt):
    from reports import evaluate

    row = case("s")
    folders = [write_folder(name, [row], [attempt(row, model="mystery-1")])
               for name in ("base", "cand")]
    comparison = compare(*(load_results(f) for f in folders), resamples=20)

    cost = comparison.metric("cost_per_successful_task")
    assert (cost.baseline, cost.candidate, cost.interval) == (None, None, None)
    (rule,) = [r for r in evaluate(comparison, {"cost_per_successful_task": 0.1}).rules
               if r.rule == "regression:cost_per_successful_task"]
    assert rule.status == "unknown"


def test_a_file_the_candidate_names_otherwise_but_writes_alike_pairs_its_runs(pair, case):
    # The release renamed its state file: the same operations, each with its ordinal.
    ops = ["write#1", "fsync#1", "rename#1"]
    base, cand = pair(
        [case("a"), *(case("a", crash=f"state:{op}:after:unsynced_lost") for op in ops)],
        [case("a"), *(case("a", crash=f"checkpoint:{op}:after:unsynced_lost") for op in ops)])

    comparison = compare(base, cand, resamples=50)

    assert [m.text() for m in comparison.role_matches] == [
        "a: the file role 'state' is 'checkpoint' now (3 points, the same operations): its "
        "crash runs are paired"]
    assert comparison.paired.height == 4
    assert comparison.missing.height == 0
    assert comparison.added.height == 0
    from reports._render import report_data

    data = report_data(comparison)
    assert [(m["baseline_role"], m["candidate_role"]) for m in data["role_matches"]] == [
        ("state", "checkpoint")]
    assert data["persistence"] == []


def test_a_file_written_otherwise_or_an_ambiguous_rename_stays_persistence_changed(pair, case):
    # 'state' gained an fsync; 'a' and 'b' write alike, so which became 'c' is not known.
    base, cand = pair(
        [case("s"), case("s", crash="state:write#1:after:unsynced_lost"),
         case("s", crash="a:write#1:after:unsynced_lost"),
         case("s", crash="b:write#1:after:unsynced_lost")],
        [case("s"), case("s", crash="tmp:write#1:after:unsynced_lost"),
         case("s", crash="tmp:fsync#1:after:unsynced_lost"),
         case("s", crash="c:write#1:after:unsynced_lost")])

    comparison = compare(base, cand, resamples=50)

    assert comparison.role_matches == ()
    assert set(comparison.missing["why"].to_list()) == {"persistence changed"}
    assert comparison.missing.height == 3
