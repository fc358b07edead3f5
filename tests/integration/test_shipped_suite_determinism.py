"""The shipped suite is deterministic: same seed, same trace digest, with or without xdist.

DESIGN §3: one seed per run, ids from seed and counters, virtual time only. Each
shipped scenario is run twice in-process and its digests compared; then a copy of
the suite runs under pytest with two xdist workers and without xdist, and every
case's digest must match the in-process one byte for byte.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.runner import Case, plan_cases, run_case
from harness.scenario import load_scenario, scenario_files

SUITE = Path(__file__).resolve().parents[2] / "scenarios"
SHIPPED = sorted(scenario_files([SUITE]))


def _sampled_cases(path: Path) -> list[Case]:
    """The uncrashed case and the first and last crash cases of one scenario."""
    cases = plan_cases(load_scenario(path), path)
    crashed = [case for case in cases if case.crash is not None]
    picked = [case for case in cases if case.crash is None] + crashed[:1] + crashed[-1:]
    return list(dict.fromkeys(picked))


def test_the_suite_ships_at_least_twelve_scenarios() -> None:
    assert len(SHIPPED) >= 12


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_scenario_passes_and_repeats_byte_for_byte(path: Path) -> None:
    scenario = load_scenario(path)
    for case in _sampled_cases(path):
        first, second = run_case(case, scenario), run_case(case, scenario)
        assert first.passed, (case.case_id, first.failed_verdicts, first.error)
        assert first.digest == second.digest, case.case_id


def _digests(folder: Path) -> dict[str, str]:
    rows = [json.loads(line) for file in sorted(folder.glob("cases-*.jsonl"))
            for line in file.read_text().splitlines()]
    return {row["case_id"]: row["digest"] for row in rows}


def test_xdist_and_a_single_process_give_the_same_digests(pytester: pytest.Pytester,
                                                          strict_ini: str) -> None:
    pytester.makeini(strict_ini)
    shutil.copytree(SUITE / "streaming", pytester.path / "scenarios" / "streaming")
    shutil.copy(SUITE / "crash" / "unknown-send-is-inspected.yaml", pytester.path / "scenarios")

    spread = pytester.runpytest_subprocess("-n", "2", "--harness-results", "spread")
    single = pytester.runpytest_subprocess("-p", "no:xdist", "--harness-results", "single")

    assert spread.ret == 0, spread.stdout.str()
    assert single.ret == 0, single.stdout.str()
    in_workers, in_one = _digests(pytester.path / "spread"), _digests(pytester.path / "single")
    assert len(in_one) > len(list((pytester.path / "scenarios" / "streaming").iterdir()))
    assert in_workers == in_one
    path = pytester.path / "scenarios" / "unknown-send-is-inspected.yaml"
    for case in plan_cases(load_scenario(path), path):
        assert in_one[case.case_id] == run_case(case).digest
