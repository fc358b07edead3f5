"""``SealedCases``: one case at a time in a sealed worker kept between cases (the plugin's).

Its results are ``run_case``'s; a worker that died between two cases (a thread the last
case left behind may end it) is replaced before the next case, which it never fails.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harness.runner import AgentChoice, Case, SealedCases, plan_cases, run_case
from harness.scenario import load_scenario

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "crash" / "inspect-then-send-once.yaml"


@pytest.fixture
def cases() -> tuple[SealedCases, list[Case]]:
    sealed = SealedCases(AgentChoice())
    yield sealed, plan_cases(load_scenario(SCENARIO), SCENARIO)[:3]
    sealed.close()


def test_its_results_are_run_case_s(cases: tuple[SealedCases, list[Case]]) -> None:
    sealed, planned = cases
    scenario = load_scenario(SCENARIO)

    got = [sealed.run(case, scenario) for case in planned]

    want = [run_case(case, scenario) for case in planned]
    assert [(r.case.case_id, r.status, r.digest) for r in got] == \
        [(r.case.case_id, r.status, r.digest) for r in want]
    assert len({r.digest for r in got}) == len(got)


def test_a_worker_dead_between_cases_fails_no_case(
        cases: tuple[SealedCases, list[Case]]) -> None:
    sealed, planned = cases
    scenario = load_scenario(SCENARIO)
    first = sealed.run(planned[0], scenario)
    worker = sealed._pool.workers[0].process
    os.kill(worker.pid, signal.SIGKILL)
    worker.join()

    second = sealed.run(planned[1], scenario)

    assert first.passed
    assert second.passed, second.error
    assert sealed._pool.workers[0].process is not worker
