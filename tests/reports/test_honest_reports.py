"""Reports that never crash on a real folder, never mistake damage for data, never misreport."""

import json
import re
from pathlib import Path

import pytest

from harness._cli import main
from reports import compare, evaluate, load_results, render_html, report_data

SHIPPED = Path(__file__).parents[2] / "scenarios" / "tools" / "repeated-error-stops.yaml"


def _strict_json(text: str) -> object:
    def refuse(name: str) -> object:
        raise AssertionError(f"{name} in report.json")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def empty_config(tmp_path: Path) -> str:
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    return str(path)


# -- an unpriced model ----------------------------------------------------------------------


def test_an_unpriced_model_reads_unpriced_and_the_json_stays_valid(
        write_folder, case, attempt, tmp_path, empty_config):
    cases = [case(f"s{i}") for i in range(3)]
    rows = [attempt(c, model="fake-model") for c in cases]
    base, cand = write_folder("main", cases, rows), write_folder("cand", cases, rows)
    out = tmp_path / "report"
    assert main(["compare", str(base), str(cand), "--out", str(out), "--resamples", "20",
                 "--config", empty_config]) == 0
    data = _strict_json((out / "report.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    cost = next(m for m in data["metrics"] if m["name"] == "cost_per_successful_task")
    assert (cost["baseline"], cost["unpriced_models"]) == (None, ["fake-model"])
    assert data["regressed"] == []  # the same release is not worse than itself
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "| cost per successful task (USD) | unpriced | unpriced |" in markdown
    assert "nan" not in markdown.lower()


def test_gate_out_on_an_unpriced_model_writes_valid_json(write_folder, case, attempt, tmp_path,
                                                         empty_config):
    cases = [case("s")]
    rows = [attempt(c, model="fake-model") for c in cases]
    base, cand = write_folder("main", cases, rows), write_folder("cand", cases, rows)
    main(["gate", str(base), str(cand), "--out", str(tmp_path / "r"), "--resamples", "20",
          "--config", empty_config])
    _strict_json((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))


# -- bad command lines ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_threshold_must_be_finite(write_folder, case, attempt, value, capsys):
    cases = [case("s")]
    base = write_folder("main", cases, [attempt(c) for c in cases])
    code = main(["gate", str(base), str(base), "--threshold", f"pass_rate={value}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"harness: error: --threshold: pass_rate: got {float(value)!r}; expected a "
                   "finite number >= 0, such as pass_rate=0.0\n")


def test_a_named_config_that_does_not_exist_is_refused(write_folder, case, attempt, tmp_path,
                                                       capsys):
    cases = [case("s")]
    base = write_folder("main", cases, [attempt(c) for c in cases])
    missing = tmp_path / "missing.toml"
    assert main(["gate", str(base), str(base), "--config", str(missing)]) == 2
    assert capsys.readouterr().err.startswith(f"harness: error: --config: {missing}: no such "
                                              "file; expected a pyproject.toml")


@pytest.mark.parametrize("command", [["gate", "a", "b"], ["compare", "a", "b"],
                                     ["run", "x.yaml"], ["demo"]])
def test_a_negative_seed_is_bad_input(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--seed", "-1"])
    assert exit_.value.code == 2
    assert "argument --seed: got '-1'; expected a whole number from 0" in capsys.readouterr().err


# -- damaged result folders -----------------------------------------------------------------


def _jsonl_folder(write_folder, case, attempt) -> Path:
    cases = [case("a"), case("b")]
    return write_folder("main", cases, [attempt(c) for c in cases], fmt="jsonl")


def _replace_line(path: Path, number: int, text: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = text
    path.write_bytes(b"".join(lines))


DAMAGE = {
    "bad line": (b"{not json\n", r"not a JSON object \(Expecting property name"),
    "truncated": (b'{"scenario": "b", "case_id": "b", "se', r"not a JSON object"),
    "non-UTF-8": (b'{"scenario": "\xff"}\n', r"not UTF-8 \(byte 15\)"),
    "not an object": (b"[1, 2]\n", r"expected a JSON object, got list"),
    "wrong type": (b'{"scenario": "b", "case_id": "b", "seed": 1, "passed": "yes"}\n',
                   r"'passed' is 'yes' \(str\); expected bool or null"),
    "a count that is a flag": (b'{"scenario": "b", "case_id": "b", "seed": true, '
                               b'"passed": true}\n', r"'seed' is True \(bool\); expected int"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_cases_file_names_its_file_and_line(write_folder, case, attempt, damage,
                                                      capsys):
    folder = _jsonl_folder(write_folder, case, attempt)
    text, message = DAMAGE[damage]
    _replace_line(folder / "cases.jsonl", 2, text)
    assert main(["gate", str(folder), str(folder)]) == 2
    err = capsys.readouterr().err
    assert re.match(rf"harness: error: {re.escape(str(folder))}/cases.jsonl:2: {message}", err)
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_runs_from_harness_run_and_from_pytest_workers_are_not_stacked(write_folder, case,
                                                                       attempt):
    cases = [case("a")]
    folder = write_folder("main", cases, [attempt(c) for c in cases])
    (folder / "cases-gw0.parquet").write_bytes((folder / "cases.parquet").read_bytes())
    with pytest.raises(Exception, match=r"two sources of runs \(cases-gw0.parquet, "
                                        r"cases.parquet\)"):
        load_results(folder)


def test_a_repeated_run_is_refused(write_folder, case, attempt):
    cases = [case("a"), case("a")]
    folder = write_folder("main", cases, [attempt(cases[0])])
    with pytest.raises(Exception, match=r"2 rows repeat a run \(scenario, seed, crash label\): "
                                        r"a; expected one row per run"):
        load_results(folder)


def test_a_missing_attempts_file_is_an_error_not_an_improvement(write_folder, case, attempt):
    cases = [case("a")]
    folder = write_folder("main", cases, [attempt(c) for c in cases])
    (folder / "attempts.parquet").unlink()
    with pytest.raises(Exception, match=r"no attempts.parquet or attempts.jsonl"):
        load_results(folder)


@pytest.fixture(scope="module")
def harness_folder(tmp_path_factory) -> Path:
    """A folder written by ``harness run`` itself (so with a manifest of checksums)."""
    out = tmp_path_factory.mktemp("run") / "results"
    assert main(["run", str(SHIPPED), "--no-crash", "--out", str(out)]) == 0
    return out


def test_the_manifest_records_a_checksum_of_every_result_file(harness_folder):
    manifest = json.loads((harness_folder / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(manifest["files"]) == ["attempts.jsonl", "attempts.parquet", "cases.jsonl",
                                         "cases.parquet"]
    assert load_results(harness_folder).runs.height == 1


@pytest.mark.parametrize("name", ["cases.jsonl", "attempts.parquet"])
def test_a_result_file_edited_after_the_run_is_refused(harness_folder, tmp_path, name):
    import shutil

    folder = Path(shutil.copytree(harness_folder, tmp_path / "copy"))
    with (folder / name).open("ab") as out:
        out.write(b"\n")
    with pytest.raises(Exception, match=rf"{name}: changed since the run wrote it"):
        load_results(folder)
    (folder / name).unlink()
    with pytest.raises(Exception, match=rf"{name}: missing; the manifest lists it"):
        load_results(folder)


# -- what the reports say -------------------------------------------------------------------


def test_the_headline_lists_every_failing_rule_worst_first(write_folder, case, attempt):
    base_cases = [case(f"s{i}") for i in range(12)]
    cand_cases = [case(f"s{i}", verdicts=[("I6", "fail")] if i == 0 else ()) for i in range(11)]
    base = write_folder("main", base_cases, [attempt(c, cache_read=1500) for c in base_cases])
    cand = write_folder("cand", cand_cases, [attempt(c, cache_read=0) for c in cand_cases])
    comparison = compare(load_results(base), load_results(cand), resamples=50)
    gate = evaluate(comparison, {"cached_input_share": 0.05})
    verdict = report_data(comparison, gate)
    head = render_html(verdict)
    line = re.search(r'<div class="verdict fail">(.*?)</div>', head, re.S)
    assert line is not None
    failing = line.group(1).split("; unknown: ")[0]
    rules = re.findall(r"(?:: |; )([a-z_:]+): ", failing)
    assert rules == ["invariants", "no_dropped_cases", "regression:cached_input_share"]
    assert "cached input share: 0.75 -&gt; 0" in failing


def test_too_few_paired_runs_are_said(write_folder, case, attempt):
    cases = [case("a")]
    folder = write_folder("main", cases, [attempt(c) for c in cases])
    data = report_data(compare(load_results(folder), load_results(folder), resamples=20))
    assert data["warnings"] == [
        "only 1 paired run(s), fewer than the 10 a bootstrap interval needs to mean much: "
        "read the intervals as rough; run more scenarios or seeds"]
    assert "<strong>Warning:</strong> only 1 paired run(s)" in render_html(data)


def test_the_gate_says_too_few_paired_runs_on_the_command_line(write_folder, case, attempt,
                                                               empty_config, capsys):
    cases = [case("a")]
    folder = write_folder("main", cases, [attempt(c) for c in cases])
    assert main(["gate", str(folder), str(folder), "--config", empty_config]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == ("warning: only 1 paired run(s), fewer than the 10 a bootstrap interval "
                         "needs to mean much: read the intervals as rough; run more scenarios "
                         "or seeds")
    assert lines[-1].startswith("Gate: PASS (exit 0)")


def test_the_chart_prints_each_change_as_the_table_does(write_folder, case, attempt):
    cases = [case(f"s{i}") for i in range(10)]
    base = write_folder("main", cases, [attempt(c, cache_read=1500, output=100) for c in cases])
    # Cost up by about half, cache share down to 0: one relative, one absolute change.
    cand = write_folder("cand", cases, [attempt(c, cache_read=0, output=100) for c in cases])
    data = report_data(compare(load_results(base), load_results(cand), resamples=50))
    html = render_html(data)
    chart = html[html.index("<svg"):html.index("</svg>")]
    table = html[html.index("<h2>Metrics</h2>"):html.index("<figure>")]
    for metric in data["metrics"]:
        change = metric["change"] or "n/a"
        assert f">{change}</text>" in chart, metric["name"]
        assert f'<td class="num">{change}</td>' in table, metric["name"]
    cost = next(m for m in data["metrics"] if m["name"] == "cost_per_successful_task")
    share = next(m for m in data["metrics"] if m["name"] == "cached_input_share")
    assert re.fullmatch(r"\+\d+(\.\d+)? %", cost["change"])
    assert share["change"] == "-0.75"


def test_every_chart_states_the_unit_of_each_value_it_prints(write_folder, case, attempt):
    cases = [case(f"s{i}") for i in range(10)]
    base = write_folder("main", cases, [attempt(c, cache_read=1500, miss="cold")
                                        for c in cases])
    cand = write_folder("cand", cases, [attempt(c, cache_read=0, ttft=0.9,
                                                miss="prefix_changed:system") for c in cases])
    data = report_data(compare(load_results(base), load_results(cand), resamples=50))
    html = render_html(data)
    units = {"Time to first token p95 by model and context length": " s",
             "Runs per stop state": " runs",
             "Cache misses by reason and changed dimension": " misses"}
    values = {}
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        title = re.search(r"<title>(.*?)</title>", svg).group(1)
        printed = re.findall(r">([-+]?\d[^<]*)</text>", svg)
        values[title] = printed
        if title in units:
            assert printed, title
            assert all(v.endswith(units[title]) for v in printed), (title, printed)
    # The change chart prints each change as the table does: a relative one in per cent.
    assert values["Change per metric"] == [m["change"] for m in data["metrics"]]
    assert "+80 %" in values["Change per metric"]  # time to first token: 0.5 s -> 0.9 s
