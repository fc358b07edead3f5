"""The shipped suite is deterministic: same seed, same trace digest, with or without xdist.

DESIGN §3: one seed per run, ids from seed and counters, virtual time only. Each
shipped scenario is run twice in-process and its digests compared; then part of
the suite runs under pytest with two xdist workers and without xdist, and every
case's result row must be the same both ways, its digest the in-process one byte
for byte.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.runner import Case, plan_cases, run_case
from harness.scenario import Scenario, load_scenario, scenario_files

# System tier (pytest --system): every case of shipped scenarios, run more than one way.
pytestmark = pytest.mark.system

SUITE = Path(__file__).resolve().parents[2] / "scenarios"
SHIPPED = sorted(scenario_files([SUITE]))


def _sampled_cases(scenario: Scenario, path: Path) -> list[Case]:
    """The uncrashed case and the first and last crash cases of one scenario."""
    cases = plan_cases(scenario, path)
    crashed = [case for case in cases if case.crash is not None]
    picked = [case for case in cases if case.crash is None] + crashed[:1] + crashed[-1:]
    return list(dict.fromkeys(picked))


def test_the_suite_ships_at_least_twelve_scenarios() -> None:
    assert len(SHIPPED) >= 12


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_each_shipped_scenario_passes_and_repeats_byte_for_byte(path: Path) -> None:
    scenario = load_scenario(path)
    for case in _sampled_cases(scenario, path):
        first, second = run_case(case, scenario), run_case(case, scenario)
        assert first.passed, (case.case_id, first.failed_verdicts, first.error)
        assert first.digest == second.digest, case.case_id


def _case_rows(out: Path) -> dict[str, dict[str, object]]:
    """case id -> its whole result row (verdicts, stop state, digest, ...), from every
    worker's file."""
    rows = [json.loads(line) for path in sorted(out.glob("cases-*.jsonl"))
            for line in path.read_text().splitlines()]
    return {str(row["case_id"]): row for row in rows}


def test_xdist_workers_and_a_single_process_write_the_same_results(
        pytester: pytest.Pytester, strict_ini: str) -> None:
    # pytest-xdist's --tx spreads a suite over machines (ssh=host//python=...); popen
    # workers go through the same gateway code on one machine, and -n N is xdist's
    # own spelling of --tx N*popen (the plugin sees only the worker ids). Which
    # worker ran a case, and what else it ran before, must not change the case's
    # result; nor may running under pytest at all (the runner's digest in this
    # process), or running without xdist loaded.
    pytester.makeini(strict_ini)
    shutil.copytree(SUITE / "streaming", pytester.path / "scenarios" / "streaming")
    shutil.copy(SUITE / "crash" / "unknown-send-is-inspected.yaml", pytester.path / "scenarios")

    spread = pytester.runpytest_subprocess(
        "--tx", "2*popen", "--dist", "load", "--harness-results", "spread")
    single = pytester.runpytest_subprocess("-p", "no:xdist", "-v", "--harness-results", "single")

    assert spread.ret == 0, spread.stdout.str()
    assert single.ret == 0, single.stdout.str()
    spread_files = {p.name.split("-")[1] for p in (pytester.path / "spread").iterdir()}
    assert spread_files == {"gw0.jsonl", "gw0.parquet", "gw1.jsonl", "gw1.parquet"}
    in_workers, in_one = _case_rows(pytester.path / "spread"), _case_rows(pytester.path / "single")
    assert len(in_one) > len(list((pytester.path / "scenarios" / "streaming").iterdir()))
    assert in_workers == in_one
    ran = [line.split()[0] for line in single.outlines if "::" in line and " PASSED" in line]
    assert sorted(in_one) == sorted(item.split("::")[1] for item in ran)
    path = pytester.path / "scenarios" / "unknown-send-is-inspected.yaml"
    for case in plan_cases(load_scenario(path), path):
        assert in_one[case.case_id]["digest"] == run_case(case).digest
