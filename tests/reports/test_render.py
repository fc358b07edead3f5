"""The three renderings: Markdown for the pull request, HTML with SVG charts, JSON."""

import json

import pytest

from harness._cli import main
from reports import compare, evaluate, load_results, render_markdown, report_data, write_report

CRASH = "journal:fsync#1:after:unsynced_lost"


@pytest.fixture
def comparison(write_folder, case, attempt):
    base = [case("a"), case("b", crash=CRASH), case("c")]
    cand = [case("a"), case("b", crash=CRASH, passed=False, verdicts=[("I1", "fail")])]
    attempts_b = [attempt(c, miss="cold") for c in base]
    attempts_c = [attempt(c, miss="prefix_changed:tools", cache_read=1024) for c in cand]
    return compare(load_results(write_folder("main", base, attempts_b)),
                   load_results(write_folder("cand", cand, attempts_c)), resamples=100)


def test_markdown_starts_with_the_verdict_and_has_the_metric_table(comparison):
    gate = evaluate(comparison, {"pass_rate": 0.0})
    text = render_markdown(report_data(comparison, gate))
    lines = text.splitlines()
    assert lines[0] == "### Release comparison: `main` → `cand`"
    assert lines[2].startswith("**Gate: FAIL (exit 3): recovery_correctness: 1 of 1 crash "
                               "cases failed: b[journal:fsync#1:after:unsynced_lost]")
    assert ("| metric | baseline | candidate | delta | change | 95% interval of delta | gate |"
            in lines)
    assert any(line.startswith("| pass rate | 1 | 0.5 | -0.5 |") for line in lines)
    assert "| `c` | missing |" in lines
    assert "| `no_dropped_cases` | **FAIL** |" in text


def test_html_is_self_contained_with_inline_svg(comparison, tmp_path):
    paths = write_report(comparison, evaluate(comparison, {}), tmp_path, ("html",))
    html = paths[0].read_text(encoding="utf-8")
    assert html.count("<svg") == 4
    assert "<script" not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html


def test_json_sidecar_holds_metrics_rules_and_missing_runs(comparison, tmp_path):
    gate = evaluate(comparison, {})
    data = json.loads(write_report(comparison, gate, tmp_path, ("json",))[0].read_text())
    assert data["format_version"] == 1
    assert data["gate"]["exit_code"] == 3
    assert [m["name"] for m in data["metrics"]][:2] == ["pass_rate", "cached_input_share"]
    assert data["missing"] == [{"scenario": "c", "seed": 1, "crash": None, "case_id": "c",
                                "why": "missing"}]
    assert {(r["reason"], r["dimension"]) for r in data["miss_reasons"]} == {
        ("cold", None), ("prefix_changed:tools", "harness.tool_list_version")}


def test_the_same_folders_give_the_same_bytes(comparison, tmp_path):
    gate = evaluate(comparison, {})
    first = [p.read_bytes() for p in write_report(comparison, gate, tmp_path / "1")]
    again = [p.read_bytes() for p in write_report(comparison, gate, tmp_path / "2")]
    assert first == again


def test_compare_command_writes_the_chosen_formats(write_folder, case, attempt, tmp_path,
                                                   capsys):
    cases = [case("a")]
    base = write_folder("main", cases, [attempt(c) for c in cases])
    cand = write_folder("cand", cases, [attempt(c) for c in cases])
    out = tmp_path / "report"
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    code = main(["compare", str(base), str(cand), "--out", str(out), "--format", "md,json",
                 "--config", str(tmp_path / "empty.toml")])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.md"]
    assert capsys.readouterr().out.splitlines()[-1].startswith("harness gate would exit 0: ")


def test_an_unknown_format_is_bad_input(write_folder, case, tmp_path, capsys):
    base = write_folder("main", [case("a")], [])
    assert main(["compare", str(base), str(base), "--format", "pdf"]) == 2
    assert capsys.readouterr().err == ("harness: error: --format: got 'pdf'; expected a "
                                       "comma-separated list of md, html, json\n")
