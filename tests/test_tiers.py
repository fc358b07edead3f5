"""The tiers of tests/conftest.py: the quick one leaves 'system' tests out, --system runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")

TESTS = """
import pytest


def test_quick():
    pass


@pytest.mark.system
def test_system():
    pass
"""


@pytest.fixture
def tiered(pytester: pytest.Pytester, strict_ini: str) -> pytest.Pytester:
    pytester.makeini(strict_ini.rstrip("\n") + "\nmarkers =\n    system: the system tier\n")
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_tiers=TESTS)
    return pytester


def test_the_quick_tier_deselects_the_system_tests(tiered: pytest.Pytester) -> None:
    result = tiered.runpytest("-v")

    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["tiers: quick (the system tier: pytest --system)",
                                 "*::test_quick PASSED*"])
    assert "test_system" not in result.stdout.str()


def test_system_runs_both_tiers_and_with_m_only_the_system_one(tiered: pytest.Pytester) -> None:
    tiered.runpytest("--system").assert_outcomes(passed=2)
    only = tiered.runpytest("--system", "-m", "system", "-v")
    only.assert_outcomes(passed=1, deselected=1)
    only.stdout.fnmatch_lines(["*::test_system PASSED*"])
