"""Each gate rule, its exit code, and the command line around it."""

import re
from pathlib import Path

import pytest

from harness._cli import main
from reports import EXIT_CODES, ReportError, compare, evaluate, load_results, parse_threshold

CRASH = "journal:fsync#1:after:unsynced_lost"


@pytest.fixture
def folders(write_folder, case, attempt):
    built = []

    def build(base_cases, cand_cases, cand_attempts=None):
        built.append(len(built))
        suffix = "" if len(built) == 1 else str(len(built))
        base = write_folder(f"main{suffix}", base_cases, [attempt(c) for c in base_cases])
        cand = write_folder(f"cand{suffix}", cand_cases,
                            cand_attempts or [attempt(c) for c in cand_cases])
        return base, cand
    return build


def _gate(base: Path, cand: Path, thresholds=None, **kwargs):
    comparison = compare(load_results(base), load_results(cand), resamples=100)
    return evaluate(comparison, thresholds or {}, **kwargs)


def _rule(result, name):
    return next(r for r in result.rules if r.rule == name)


def test_a_clean_candidate_passes_with_unknowns_visible(folders, case):
    result = _gate(*folders([case("a", crash=CRASH)], [case("a", crash=CRASH)]))
    assert result.exit_code == 0
    assert _rule(result, "recovery_correctness").status == "pass"
    assert {r.rule for r in result.unknown} == {"repeated_error_stop", "long_task_continuity"}


def test_unknown_fails_only_when_asked(folders, case):
    base, cand = folders([case("a")], [case("a")])
    assert _gate(base, cand).exit_code == 0
    assert _gate(base, cand, fail_on_unknown=True).exit_code == 6


def test_a_failing_crash_case_fails_recovery_correctness(folders, case):
    result = _gate(*folders([case("a", crash=CRASH)],
                            [case("a", crash=CRASH, passed=False, verdicts=[("I3", "fail")])]))
    assert _rule(result, "recovery_correctness").status == "fail"
    assert _rule(result, "invariants").reason == f"1 runs broke I3: a[{CRASH}]"
    assert result.exit_code == 3


def test_a_duplicate_side_effect_fails_recovery_correctness(folders, case):
    result = _gate(*folders([case("a")], [case("a", duplicates=1)]))
    rule = _rule(result, "recovery_correctness")
    assert rule.status == "fail"
    assert "1 non-idempotent side effects applied twice in 1 runs" in rule.reason
    assert result.exit_code == 3


def test_repeated_error_stop_reads_guard_stops_and_verdicts(folders, case):
    stopped = case("loop", stop_state="failed",
                   stop_reason="the same error came back without new evidence (L3)")
    result = _gate(*folders([stopped], [stopped]))
    assert _rule(result, "repeated_error_stop").status == "pass"
    kept_going = case("loop", verdicts=[("repeated_error_stop", "fail")])
    result = _gate(*folders([case("loop")], [kept_going]))
    assert _rule(result, "repeated_error_stop").status == "fail"
    assert result.exit_code == 3


def test_repeated_error_stop_reads_the_same_verifier_gaps_too(folders, case):
    paused = case("gaps", verdicts=[("L3:same-gap", "pass")])
    assert _rule(_gate(*folders([paused], [paused])), "repeated_error_stop").status == "pass"
    reworked = case("gaps", verdicts=[("L3:same-gap", "fail")])
    result = _gate(*folders([paused], [reworked]))
    assert _rule(result, "repeated_error_stop").status == "fail"


def test_long_task_continuity_reads_goal_verdicts(folders, case):
    result = _gate(*folders([case("goal")], [case("goal", verdicts=[("I5", "pass")])]))
    assert _rule(result, "long_task_continuity").status == "pass"
    result = _gate(*folders([case("goal")], [case("goal", verdicts=[("I5", "fail")])]))
    assert _rule(result, "long_task_continuity").status == "fail"


def test_long_task_continuity_fails_on_a_completion_without_a_valid_proof(folders, case):
    proofless = case("goal", verdicts=[("I5", "pass"), ("I5:proof", "fail")])
    result = _gate(*folders([case("goal")], [proofless]))
    rule = _rule(result, "long_task_continuity")
    assert rule.status == "fail"
    assert "I5:proof" in rule.reason
    assert result.exit_code == 3


@pytest.mark.parametrize("check", ["I5:context", "I5:lease", "I5:protected", "I5:status"])
def test_long_task_continuity_fails_on_a_goal_lost_a_lapsed_lease_or_changed_tests(
        folders, case, check):
    broken = case("goal", verdicts=[("I5", "pass"), (check, "fail")])
    rule = _rule(_gate(*folders([case("goal")], [broken])), "long_task_continuity")
    assert rule.status == "fail"
    assert check in rule.reason


def test_long_task_continuity_passes_on_a_shipped_goal_scenario(tmp_path):
    scenario = "scenarios/goals/verifier-outage-is-not-complete.yaml"
    for side in ("baseline", "candidate"):
        assert main(["run", scenario, "--out", str(tmp_path / side)]) == 0
    result = _gate(tmp_path / "baseline", tmp_path / "candidate")
    rule = _rule(result, "long_task_continuity")
    assert (rule.status, rule.reason) == (
        "pass", "goals held across restarts in 3 runs, each completion with its proof")


def test_a_dropped_case_exits_4(folders, case):
    result = _gate(*folders([case("a"), case("repro")], [case("a")]))
    rule = _rule(result, "no_dropped_cases")
    assert (rule.status, rule.evidence) == ("fail", ("repro (missing)",))
    assert result.exit_code == 4


def test_a_regression_beyond_the_threshold_exits_5(folders, case, attempt):
    base_cases = [case(f"s{i}") for i in range(30)]
    cand_cases = [case(f"s{i}") for i in range(30)]
    # Every candidate run spends three attempts instead of one.
    cand_attempts = [attempt(c, k, attempt_no=k + 1) for c in cand_cases for k in range(3)]
    base, cand = folders(base_cases, cand_cases, cand_attempts)
    result = _gate(base, cand, {"cost_per_successful_task": 0.5})
    assert _rule(result, "regression:cost_per_successful_task").status == "fail"
    assert result.exit_code == 5
    assert _gate(base, cand, {"cost_per_successful_task": 5.0}).exit_code == 0


def test_the_most_serious_failure_sets_the_code(folders, case):
    result = _gate(*folders([case("a"), case("b")], [case("a", duplicates=2)]))
    assert {r.exit_code for r in result.failed} == {3, 4}
    assert result.exit_code == 3


def test_every_exit_code_is_documented():
    assert set(EXIT_CODES) == {0, 2, 3, 4, 5, 6}


def test_threshold_parsing_rejects_unknown_metrics():
    assert parse_threshold("pass_rate=0.1") == ("pass_rate", 0.1)
    with pytest.raises(ReportError, match=r"^--threshold: unknown gate metric 'speed'"):
        parse_threshold("speed=1")
    with pytest.raises(ReportError, match=r"expected METRIC=NUMBER"):
        parse_threshold("pass_rate")


# -- the command line ------------------------------------------------------------------------


def test_gate_prints_each_rule_and_exits_with_its_code(folders, case, capsys, tmp_path):
    base, cand = folders([case("a"), case("repro")], [case("a")])
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    code = main(["gate", str(base), str(cand), "--config", str(tmp_path / "empty.toml"),
                 "--resamples", "50"])
    out = capsys.readouterr().out
    assert code == 4
    assert "FAIL     no_dropped_cases: 1 baseline runs are missing or skipped in the " \
           "candidate: repro (missing)" in out
    assert "UNKNOWN  long_task_continuity" in out
    assert out.splitlines()[-1].startswith("Gate: FAIL (exit 4): no_dropped_cases")


def test_gate_reads_thresholds_from_pyproject(folders, case, attempt, tmp_path, capsys):
    cases = [case(f"s{i}") for i in range(20)]
    base, cand = folders(cases, cases,
                         [attempt(c, k, attempt_no=k + 1) for c in cases for k in range(3)])
    config = tmp_path / "pyproject.toml"
    # three times the attempts cost three times as much: both metrics regress
    config.write_text("[tool.harness.gate]\nattempts_per_task = 0.5\n"
                      "cost_per_successful_task = 2.5\n", encoding="utf-8")
    assert main(["gate", str(base), str(cand), "--config", str(config)]) == 5
    out = capsys.readouterr().out
    assert "FAIL     regression:attempts_per_task" in out
    assert "PASS     regression:cost_per_successful_task" in out  # 2.5 from the file
    assert main(["gate", str(base), str(cand), "--config", str(config),
                 "--threshold", "attempts_per_task=3"]) == 0


def test_without_a_config_the_default_thresholds_apply(folders, case, attempt, capsys,
                                                       monkeypatch):
    cases = [case(f"s{i}") for i in range(20)]
    base, cand = folders(cases, cases,
                         [attempt(c, k, attempt_no=k + 1) for c in cases for k in range(3)])
    monkeypatch.chdir(base.parent)  # no ./pyproject.toml here
    assert main(["gate", str(base), str(cand)]) == 5
    out = capsys.readouterr().out
    assert "threshold 25 % worse" in out  # attempts_per_task's default
    assert "FAIL     regression:cost_per_successful_task" in out


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", r"^harness: error: .*/nope: no such result folder"),
    ("empty", r"^harness: error: .*/cand_empty: empty run: no cases were recorded"),
    ("version", r"^harness: error: .*manifest.json: result format version 0 is not supported"),
    ("mismatch", r"^harness: error: .* share no run \(scenario, seed, crash label\)"),
    ("threshold", r"^harness: error: --threshold: got 'x'; expected METRIC=NUMBER"),
])
def test_bad_input_is_one_clear_line_and_exit_2(folders, write_folder, case, capsys, *, setup,
                                                message):
    base, cand = folders([case("a")], [case("b")] if setup == "mismatch" else [case("a")])
    extra: list[str] = []
    if setup == "missing":
        cand = cand.parent / "nope"
    elif setup == "empty":
        cand = write_folder("cand_empty", [], [])
    elif setup == "version":
        (base / "manifest.json").write_text('{"format_version": 0}', encoding="utf-8")
    elif setup == "threshold":
        extra = ["--threshold", "x"]
    code = main(["gate", str(base), str(cand), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1
    assert re.match(message, err)
    assert "Traceback" not in err


def test_a_regression_reads_as_a_signed_percentage_and_a_direction(folders, case, attempt,
                                                                   capsys, monkeypatch):
    # Before: "worse by -0.1006 (relative)" beside a chart that showed "+153 %".
    cases = [case(f"s{i}") for i in range(20)]
    base, cand = folders(cases, cases,
                         [attempt(c, k, attempt_no=k + 1) for c in cases for k in range(3)])
    monkeypatch.chdir(base.parent)
    main(["gate", str(base), str(cand)])
    out = capsys.readouterr().out
    assert ("FAIL     regression:attempts_per_task: request attempts per task: 1 -> 3 (+200 %); "
            "at the interval's most favourable end 200 % worse, threshold 25 % worse") in out


def test_a_metric_undefined_in_both_releases_says_so_and_why(folders, case, attempt, capsys,
                                                              tmp_path):
    cases = [case(f"s{i}") for i in range(3)]
    _, cand = folders(cases, cases, [attempt(c, model="no-such-model") for c in cases])
    # The candidate compared with itself: both releases unpriced.
    (tmp_path / "cost.toml").write_text("", encoding="utf-8")
    main(["gate", str(cand), str(cand), "--config", str(tmp_path / "cost.toml"),
          "--threshold", "cost_per_successful_task=0.1"])
    out = capsys.readouterr().out
    assert ("UNKNOWN  regression:cost_per_successful_task: cost per successful task (USD) is "
            "undefined in both releases: no price for model no-such-model (add it to the "
            "price table, or gate without the cost threshold)") in out


def test_a_crash_point_no_case_reached_fails_everything_reached(folders, case):
    missed = "history:fsync#1:after:unsynced_lost"
    result = _gate(*folders(
        [case("a", crash=CRASH)],
        [case("a", crash=CRASH), case("a", crash=missed, passed=False, crash_reached=False),
         case("a", crash=missed.replace("after", "before"), passed=False,
              crash_reached=False)]))
    rule = _rule(result, "everything_reached")
    assert (rule.status, rule.exit_code) == ("fail", 3)
    assert rule.evidence == ("a: crash point history:fsync#1",)
    assert result.exit_code == 3


def test_a_fault_every_case_missed_fails_everything_reached_and_one_met_passes(folders, case):
    def missing(row, *faults):
        row["verdicts"] = [{"invariant": "faults", "status": "unknown", "message": "m",
                            "evidence": [f"never reached: {f}" for f in faults]}]
        return row

    result = _gate(*folders([case("a")], [
        missing(case("a"), "turn 3 attempt 1 stall", "turn 4 attempt 1 http_error"),
        missing(case("a", crash=CRASH), "turn 4 attempt 1 http_error")]))
    rule = _rule(result, "everything_reached")
    assert rule.status == "fail"
    assert rule.evidence == ("a: fault turn 4 attempt 1 http_error",)


def test_everything_reached_passes_a_candidate_that_reached_its_points(folders, case):
    result = _gate(*folders([case("a", crash=CRASH)], [case("a", crash=CRASH)]))
    assert _rule(result, "everything_reached").status == "pass"


# -- a release that persists differently ---------------------------------------------

OLD_POINTS = ["journal:fsync#1:after:unsynced_lost", "journal:rename#1:before:process_killed"]
NEW_POINTS = ["state:fsync#1:after:unsynced_lost", "state:fsync#2:before:unsynced_lost"]


def test_a_release_that_changed_how_it_persists_is_not_refused(folders, case):
    # The candidate writes a new state file instead of the journal: the baseline's
    # journal points are gone and its own are new, each surviving its crash.
    base, cand = folders([case("a"), *(case("a", crash=p) for p in OLD_POINTS)],
                         [case("a"), *(case("a", crash=p) for p in NEW_POINTS)])
    result = _gate(base, cand)

    assert _rule(result, "no_dropped_cases").status == "pass"
    rule = _rule(result, "persistence_changed")
    assert rule.status == "pass"
    assert rule.evidence == ("a: persistence changed: 2 points gone, 2 new "
                             "(their 2 runs: 2 passed)",)
    assert result.exit_code == 0


def test_points_gone_with_none_new_fail_persistence_changed_unless_accepted(folders, case):
    base, cand = folders([case("a"), *(case("a", crash=p) for p in OLD_POINTS)], [case("a")])

    refused = _gate(base, cand)
    rule = _rule(refused, "persistence_changed")
    assert rule.status == "fail"
    assert "a: persistence changed: 2 points gone, 0 new" in rule.reason
    assert "--accept-persistence-change" in rule.reason
    assert _rule(refused, "no_dropped_cases").status == "pass"  # nothing was dropped
    assert refused.exit_code == 4

    accepted = _gate(base, cand, accept_persistence_change=True)
    assert _rule(accepted, "persistence_changed").status == "pass"
    assert accepted.exit_code == 0


def test_a_new_point_that_fails_its_crash_fails_persistence_changed(folders, case):
    base, cand = folders([case("a"), case("a", crash=OLD_POINTS[0])],
                         [case("a"), case("a", crash=NEW_POINTS[0]),
                          case("a", crash=NEW_POINTS[1], passed=False, verdicts=[("I3", "fail")])])
    result = _gate(base, cand)

    assert _rule(result, "persistence_changed").status == "fail"
    assert result.exit_code == 3  # the recovery rule fails too, and is the more serious


def test_a_world_event_case_missing_is_still_a_dropped_case(folders, case):
    world = "after_tool:mail#1:at:process_killed"
    result = _gate(*folders([case("a"), case("a", crash=world)], [case("a")]))

    assert _rule(result, "no_dropped_cases").status == "fail"
    assert _rule(result, "persistence_changed").status == "pass"
    assert result.exit_code == 4


def test_gate_accepts_a_persistence_change_on_the_command_line(folders, case, capsys):
    base, cand = folders([case("a"), case("a", crash=OLD_POINTS[0])], [case("a")])
    assert main(["gate", str(base), str(cand)]) == 4
    assert main(["gate", str(base), str(cand), "--accept-persistence-change"]) == 0
    assert "accepted (--accept-persistence-change)" in capsys.readouterr().out


def test_the_report_shows_a_persistence_change_apart_from_missing_runs(folders, case, tmp_path):
    base, cand = folders([case("a"), *(case("a", crash=p) for p in OLD_POINTS)],
                         [case("a"), *(case("a", crash=p) for p in NEW_POINTS)])
    assert main(["compare", str(base), str(cand), "--out", str(tmp_path / "r"),
                 "--format", "md"]) == 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "#### Persistence changed" in text
    assert "a: persistence changed: 2 points gone, 2 new (their 2 runs: 2 passed)" in text
