"""``pytest --harness-fuzz N``: one fuzz item per scenario, failing with the repro's path."""

from __future__ import annotations

import pytest

# System tier (pytest --system): whole searches, each of many runs.
pytestmark = pytest.mark.system


@pytest.fixture
def project(pytester: pytest.Pytester, scenario_text: str, strict_ini: str) -> pytest.Pytester:
    pytester.makeini(strict_ini)
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "mail-once.yaml").write_text(scenario_text)
    return pytester


def test_the_fuzz_item_fails_with_the_repro_path(project) -> None:
    result = project.runpytest("--harness-fuzz", "30", "--harness-crash", "none",
                               "--harness-agent", "examples.naive_resend_agent:agent")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*_ fuzz mail-once _*",
        "schedule * of mail-once violated I1: *",
        "repro: */.harness-fuzz/fuzz/mail-once/mail-once-repro.yaml",
        "replay: harness run *mail-once-repro.yaml --seed 7 --agent "
        "examples.naive_resend_agent:agent --crash-at *",
    ])
    assert "Traceback" not in result.stdout.str()
    # The sealed search handed its repro and example database back; pytest wrote them.
    out = project.path / ".harness-fuzz" / "fuzz" / "mail-once"
    assert (out / "mail-once-repro.yaml").read_text().startswith("# I1 violated")
    assert any((out / ".hypothesis").rglob("*"))


def test_the_fuzz_item_passes_a_correct_agent(project) -> None:
    result = project.runpytest("--harness-fuzz", "20", "--harness-crash", "none", "-v")

    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*scenarios/mail-once.yaml::mail-once[[]fuzz[]] PASSED*"])


def test_without_the_option_there_is_no_fuzz_item(project) -> None:
    result = project.runpytest("--collect-only", "-q", "--harness-crash", "none")

    assert "fuzz" not in result.stdout.str()
