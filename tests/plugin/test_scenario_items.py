"""The plugin end to end, through pytester: collection, verdicts, reports.

Under xdist: tests/integration/test_shipped_suite_determinism.py runs part of the
shipped suite spread over workers and in one process, once for every property.
"""

from __future__ import annotations

import re

import pytest

CRASH_ID = re.compile(
    r"^scenarios/crashy\.yaml::crashy\[[a-z_]+:[a-z_]+#\d+:(before|after):unsynced_lost\]$")


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_each_case_is_an_item_with_a_readable_id(project) -> None:
    project.add("hello", "crashy")
    project.add("hello", folder="tests/data")  # example data elsewhere is not a scenario

    ids = collected(project.pytester.runpytest("--collect-only", "-q"))

    assert ids[:2] == ["scenarios/crashy.yaml::crashy", *ids[1:2]]
    assert len(ids) > 2
    assert all(CRASH_ID.match(item) for item in ids[1:-1])
    assert ids[-1] == "scenarios/hello.yaml::hello"


def test_crash_option_narrows_the_plan(project) -> None:
    project.add("crashy")

    ids = collected(project.pytester.runpytest("--collect-only", "-q", "--harness-crash", "none"))

    assert ids == ["scenarios/crashy.yaml::crashy"]


def test_a_sample_keeps_the_uncrashed_case_and_one_case_of_each_kind(project) -> None:
    project.add("crashy")
    every = collected(project.pytester.runpytest("--collect-only", "-q"))

    sampled = collected(project.pytester.runpytest("--collect-only", "-q",
                                                   "--harness-crash", "sample"))

    def kind(item: str) -> str:  # crashy[journal:fsync#3:after:unsynced_lost] -> journal:fsync…
        return re.sub(r"#\d+", "", item.partition("[")[2])

    assert sampled[0] == "scenarios/crashy.yaml::crashy"
    assert set(sampled) < set(every)
    assert sorted(kind(i) for i in sampled[1:]) == sorted({kind(i) for i in every[1:]})


def test_the_ini_chooses_the_crash_selection_and_the_option_overrides_it(
        project, strict_ini: str) -> None:
    project.add("crashy")
    project.pytester.makeini(strict_ini.rstrip("\n") + "\nharness_crash = none\n")

    assert collected(project.pytester.runpytest("--collect-only", "-q")) == [
        "scenarios/crashy.yaml::crashy"]
    assert len(collected(project.pytester.runpytest("--collect-only", "-q",
                                                    "--harness-crash", "all-points"))) > 2


def test_an_unknown_crash_selection_in_the_ini_is_refused_with_the_choices(
        project, strict_ini: str) -> None:
    project.add("crashy")
    project.pytester.makeini(strict_ini.rstrip("\n") + "\nharness_crash = some\n")

    result = project.pytester.runpytest("--collect-only", "-q")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini harness_crash (*tox.ini): got 'some'; expected one of "
                                 "as-written, none, listed, sample, all-points"])


@pytest.mark.parametrize("where", ["ini", "option"])
def test_as_written_crashes_each_scenario_as_its_file_says(
        project, strict_ini: str, where: str) -> None:
    project.add("crashy", "hello")
    every = collected(project.pytester.runpytest("--collect-only", "-q"))
    if where == "ini":
        project.pytester.makeini(strict_ini.rstrip("\n") + "\nharness_crash = as-written\n")
        args: tuple[str, ...] = ()
    else:
        args = ("--harness-crash", "as-written")

    assert collected(project.pytester.runpytest("--collect-only", "-q", *args)) == every
    assert "scenarios/hello.yaml::hello" in every


def test_all_points_crashes_even_a_scenario_without_a_crash_block(project) -> None:
    project.add("hello")

    ids = collected(project.pytester.runpytest("--collect-only", "-q",
                                               "--harness-crash", "all-points"))

    assert ids[0] == "scenarios/hello.yaml::hello"
    assert len(ids) > 1, "hello has no crash block, yet all-points crashes it"


def test_the_old_all_still_means_all_points_with_a_deprecation_warning(project) -> None:
    project.add("hello")
    project.pytester.makeini("[pytest]\nharness_crash = all\n")

    result = project.pytester.runpytest("--collect-only", "-q")

    assert len(collected(result)) > 1
    result.stdout.fnmatch_lines(["*PytestDeprecationWarning: ini harness_crash (*tox.ini): "
                                 "'all' is deprecated: it means all-points*as-written*"])


def test_an_unknown_crash_setting_on_the_command_line_is_a_usage_error(project) -> None:
    project.add("hello")

    result = project.pytester.runpytest("--collect-only", "-q", "--harness-crash", "every")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--harness-crash: got 'every'; expected one of as-written, "
                                 "none, listed, sample, all-points"])


def test_a_scenario_the_agent_handles_passes(project) -> None:
    project.add("hello")

    project.pytester.runpytest().assert_outcomes(passed=1)


def test_a_broken_yaml_file_is_one_failing_item_with_its_location(project) -> None:
    project.add("bad", "hello")

    result = project.pytester.runpytest()

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*_ scenario file bad.yaml _*",
        "scenarios/bad.yaml:3:7: seed: wrong type: got 'seven' (a string); "
        "expected an integer >= 0",
    ])
    assert "Traceback" not in result.stdout.str()
    assert "raise self.error" not in result.stdout.str()


def test_a_crash_point_never_reached_is_skipped_as_unknown_with_the_reason(project) -> None:
    project.add("unreached")

    result = project.pytester.runpytest("-rs")

    # The crash-free case runs; each case at the unreached point proves nothing,
    # so it is neither a pass nor a failure of the whole run.
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED * unknown: the agent never reached journal:fsync#99, "
                                 "so this case proves nothing; it reached: state:mkdir#1, *"])
    assert "Traceback" not in result.stdout.str()


def test_under_harness_strict_a_case_that_proved_nothing_fails(project) -> None:
    # As harness run --strict: a crash point no case reached is a red run, not a skip.
    project.add("unreached")

    result = project.pytester.runpytest("--harness-strict")

    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*--harness-strict: unknown: the agent never reached "
                                 "journal:fsync#99*"])
    assert "Traceback" not in result.stdout.str()


def test_a_broken_invariant_reports_yaml_evidence_and_replay(project) -> None:
    project.add("hello")
    project.break_the_agent()

    result = project.pytester.runpytest("--harness-seed", "5")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "I4 broken: *",
        "scenario  hello  (scenarios/hello.yaml, seed 5)",
        "crash     none",
        "stopped   failed: *",
        "scenarios/hello.yaml",
        "  1 | name: hello",
        "*",
        "  6 | expect:",
        "> 7 |   stop_state: complete",
        "broken invariants",
        "  I4: *",
        "replay: harness run scenarios/hello.yaml --seed 5 --out results-replay",
    ])
    assert "Traceback" not in result.stdout.str()
    assert "runtest" not in result.stdout.str()


def test_a_seed_out_of_the_scenario_range_is_a_usage_error(project) -> None:
    project.add("hello")

    result = project.pytester.runpytest("--harness-seed", str(2**63))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*error: argument --harness-seed: got '{2**63}'; expected a "
                                 f"whole number from 0 to {2**63 - 1}"])


def test_crash_points_are_those_of_the_agent_under_test(project) -> None:
    # GivesUp never touches the disk: a crash plan recorded with the reference agent
    # would give it dozens of cases whose crash point it can never reach.
    project.add("crashy")
    project.break_the_agent()

    ids = collected(project.pytester.runpytest("--collect-only", "-q"))

    assert ids == ["scenarios/crashy.yaml::crashy"]


def test_a_scenario_folder_given_that_does_not_exist_is_a_usage_error(project) -> None:
    # A misspelt folder used to collect nothing and let the rest of the suite pass.
    project.add("hello")

    result = project.pytester.runpytest("--harness-scenarios", "scenarois")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --harness-scenarios: got 'scenarois': no such file or "
                                 "folder under *; expected a folder or file of YAML scenarios"])


def test_a_scenario_folder_outside_the_rootdir_is_collected(project, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    project.add("hello", folder=str(elsewhere))  # an absolute folder: not under the rootdir

    # One word: written as two, the folder would choose pytest's rootdir (the test below).
    result = project.pytester.runpytest(f"--harness-scenarios={elsewhere}", "-v")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"rootdir: {project.pytester.path}", "configfile: tox.ini",
                                 "*hello.yaml::hello PASSED*"])


def test_a_scenario_path_that_would_choose_the_rootdir_is_a_usage_error(
        project, strict_ini: str, tmp_path_factory) -> None:
    # pytest chooses its rootdir and ini file before it loads the plugin, so the path of
    # `--harness-scenarios PATH` counts as a test path there: another project's scenarios
    # took that project's ini file, and its agent (none: the reference agent), silently.
    elsewhere = tmp_path_factory.mktemp("other_project")
    (elsewhere / "tox.ini").write_text("[pytest]\n", encoding="utf-8")
    project.add("hello", folder=str(elsewhere / "scenarios"))
    project.pytester.makeini(strict_ini.rstrip("\n") + "\nharness_agent = nowhere.agent:main\n")

    result = project.pytester.runpytest("--harness-scenarios", str(elsewhere / "scenarios"))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: --harness-scenarios {elsewhere}/scenarios: pytest read '{elsewhere}/scenarios'"
        f" as a test path when it chose its rootdir, so it took {elsewhere} (ini file"
        f" {elsewhere}/tox.ini) instead of {project.pytester.path} (ini file"
        f" {project.pytester.path}/tox.ini), and the options of * (harness_agent …) would not"
        f" be read; write the option and its path as one word:"
        f" --harness-scenarios={elsewhere}/scenarios"])
    # In one word the project's own ini is read: its agent, which does not import.
    joined = project.pytester.runpytest(f"--harness-scenarios={elsewhere / 'scenarios'}")
    joined.stdout.fnmatch_lines(["*nowhere*"])


def test_the_ini_prices_a_private_model_for_a_cost_budget(project, strict_ini: str) -> None:
    (project.pytester.path / "scenarios").mkdir(exist_ok=True)
    (project.pytester.path / "scenarios" / "private.yaml").write_text(
        "name: private\ndialect: openai\nprovider: {model: acme-private-7b}\n"
        "model: [{turn: 1, text: Hello.}]\nbudget: {max_cost_usd: 1.0}\n"
        "expect: {stop_state: complete}\n")
    (project.pytester.path / "prices.yaml").write_text(
        "acme-private-7b: {input: 0.5, output: 1.5}\n")

    project.pytester.runpytest().assert_outcomes(failed=1)  # a cost budget on no price
    project.pytester.makeini(strict_ini.rstrip("\n") + "\nharness_prices = prices.yaml\n")
    project.pytester.runpytest().assert_outcomes(passed=1)
