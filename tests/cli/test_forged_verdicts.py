"""An agent cannot forge its verdicts: it runs in a worker, and is judged in the harness's process.

Each hostile agent below changes the harness's own modules in the worker a case runs
in: the checkers (every one passes, or there are none), the counting of the ledger's side
effects, the clocks, the digest, the result type itself. It then behaves exactly as an
honest agent; every case must pass or fail as the honest run's, with the same digest.
(Only in a case's worker: the recorded run that plans a scenario's crash points, in a
sealed process of its own, stays honest.) The agent's environment is an allow-list, so
the variable that turns the forgery on is passed to it (``HARNESS_PASS_ENV``), and a
failing case's kept output shows that the forgery ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness._cli import main

# System tier (pytest --system): real worker processes.
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
TOOLS_SCENARIO = ROOT / "scenarios/tools/repeated-error-stops.yaml"
PLAIN_SCENARIO = ROOT / "examples/scenarios/openai-agent.yaml"
TWICE_SCENARIO = ROOT / "scenarios/streaming/stall-then-429.yaml"

FORGER = '''
import collections
import multiprocessing
import os
import sys
import time

import fakes._ledger
import harness.checks
import harness.checks._invariants
import harness.runner._case
import harness.runner._determinism
import harness.runner._results
import harness.runner._run
import harness.trace


def _no_verdicts(*args, **kwargs):
    return ()


def _honest_looking(case, trace):
    return harness.runner._results.CaseResult(case, "complete", "forged", (), "0" * 64, True)


def _never_two(*args, **kwargs):
    return collections.Counter()


def forge_checkers():
    """Every checker passes: none gives a verdict, the result says pass whatever it holds."""
    for module in (harness.checks, harness.checks._invariants, harness.runner._run,
                   harness.runner._case):
        for name in dir(module):
            if name.startswith("check_") and callable(getattr(module, name)):
                setattr(module, name, _no_verdicts)
    harness.runner._run.case_result = _honest_looking
    harness.runner._case.case_result = _honest_looking
    harness.runner._run.unreached_verdict = _no_verdicts
    harness.runner._determinism.case_result = _honest_looking
    harness.runner._determinism.determinism_verdict = lambda first, second: \
        harness.checks.Verdict("determinism", "pass", "forged")
    results = harness.runner._results.CaseResult
    results.status = property(lambda self: "pass")
    results.failed_verdicts = property(lambda self: ())


def forge_ledger():
    """The ledger's effects are never counted twice."""
    fakes._ledger.ToolLedger.duplicates = lambda self: {}
    fakes._ledger.ToolLedger.count = lambda self, key: 1
    harness.runner._run.Counter = _never_two
    harness.checks._invariants.Counter = _never_two


def forge_clock():
    """The real clocks stand still; the digest is one the agent chose."""
    time.monotonic = time.time = time.perf_counter = lambda: 0.0
    harness.trace.Trace.digest = property(lambda self: "0" * 64)


def forge_all():
    if os.environ.get("FORGE_THE_JUDGE") != "1":
        return  # the honest run: the very same code, so the very same traceback
    if multiprocessing.current_process().name != "harness-case-worker":
        return  # planning a scenario's crash points, not a case
    forge_checkers()
    forge_ledger()
    forge_clock()
    print("the agent forged the judge", file=sys.stderr)  # kept with a failing case's row
'''

FACTORIES = FORGER + '''
from harness.agent import ReferenceAgent
from harness.mutants import MUTANTS
from minimal_agent import minimal_factory

_minimal = minimal_factory()


def forging(factory):
    def build(ports):
        forge_all()
        return factory(ports)
    return build


minimal = forging(_minimal)
reference = forging(ReferenceAgent)
# Ids from uuid4: two runs of one case differ (--check-determinism fails it).
entropy = forging(next(m for m in MUTANTS if m.name == "D3-ids-from-entropy").factory)
'''

PLAIN = FORGER + '''
from examples.openai_agent import main as honest_main


async def main(prompt):
    forge_all()
    return await honest_main(prompt)
'''


@pytest.fixture
def agents(guest_modules: Callable[..., Path]) -> Path:
    return guest_modules({"forging_factories": FACTORIES, "forging_plain": PLAIN}, "tests/runner")


Verdicts = tuple[int, list[tuple[str, bool, str, list[str]]]]


@pytest.fixture
def verdicts(agents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Callable[..., Verdicts]:
    """Run a scenario with an agent, forging or not: the exit code and each case's verdict."""
    def run(scenario: Path, agent: str, *options: str, forge: bool) -> Verdicts:
        monkeypatch.setenv("FORGE_THE_JUDGE", "1" if forge else "0")
        # Passed to the agent: its environment is an allow-list, and without this the
        # forging agent never saw the variable and never forged.
        monkeypatch.setenv("HARNESS_PASS_ENV", "FORGE_THE_JUDGE")
        out = tmp_path / ("forged" if forge else "honest")
        code = main(["run", str(scenario), "--agent", agent, "--jobs", "2", "--out", str(out),
                     *options])
        capsys.readouterr()
        rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
        return code, [(r["case_id"], r["passed"], r["digest"], r["failed_invariants"])
                      for r in rows]
    return run


@pytest.mark.parametrize(("agent", "code"), [("forging_factories:minimal", 1),
                                           ("forging_factories:reference", 0)])
def test_a_factory_agent_that_forges_the_judge_is_judged_as_an_honest_one(
        verdicts: Callable[..., Verdicts], agents: Path, agent: str, code: int) -> None:
    honest = verdicts(TOOLS_SCENARIO, agent, forge=False)
    assert honest[0] == code  # the minimal agent has no repetition guard (L3)

    assert verdicts(TOOLS_SCENARIO, agent, forge=True) == honest
    if code:  # a failing case keeps its output: the forgery did run in the worker
        rows = (agents / "forged" / "cases.jsonl").read_text().splitlines()
        assert any("the agent forged the judge" in
                   (json.loads(row)["agent_output"] or {}).get("tail", "") for row in rows)


def test_a_plain_agent_that_forges_the_judge_is_judged_as_an_honest_one(
        verdicts: Callable[..., Verdicts]) -> None:
    honest = verdicts(PLAIN_SCENARIO, "forging_plain:main", forge=False)
    assert honest[0] == 1
    assert {passed for _, passed, _, _ in honest[1]} == {True, False}  # both kinds of case

    assert verdicts(PLAIN_SCENARIO, "forging_plain:main", forge=True) == honest


def test_two_runs_that_differ_fail_however_the_agent_forged_the_comparison(
        verdicts: Callable[..., Verdicts]) -> None:
    agent = "forging_factories:entropy"
    honest = verdicts(TWICE_SCENARIO, agent, "--check-determinism", forge=False)
    assert honest[0] == 1
    assert all("determinism" in failed for _, _, _, failed in honest[1])

    code, forged = verdicts(TWICE_SCENARIO, agent, "--check-determinism", forge=True)
    # The digests differ from run to run: that is the agent's fault being judged.
    assert (code, [(c, p, f) for c, p, _, f in forged]) == (
        honest[0], [(c, p, f) for c, p, _, f in honest[1]])
