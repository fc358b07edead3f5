"""The quota block: validated at its line, enforced in the run, judged by S5 like any 429."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.checks import Verdict
from harness.mutants import MUTANTS
from harness.runner import Case, CaseResult, run_case
from harness.scenario import ScenarioError, load_scenario

BY_NAME = {m.name: m for m in MUTANTS}
RPM = Path("scenarios/quotas/requests-per-minute-openai.yaml")
ITPM = Path("scenarios/quotas/input-tokens-per-minute-anthropic.yaml")

BASE = """\
name: t
dialect: {dialect}
provider:
  quota: {quota}
model:
  - turn: 1
    text: hi
expect:
  stop_state: complete
"""


def run(source: Path, mutant: str | None = None) -> CaseResult:
    scenario = load_scenario(source)
    factory = BY_NAME[mutant].factory if mutant else None
    return run_case(Case(scenario.name, source, scenario.seed), scenario, factory)


def verdict(result: CaseResult, check: str) -> Verdict:
    return next(v for v in result.verdicts if v.invariant == check)


def test_s5_judges_the_wait_a_quota_429_asked_for() -> None:
    good = run(RPM)
    assert good.passed
    assert (verdict(good, "S5").status, verdict(good, "S5").message) == (
        "pass", "1 asked wait(s) honoured")
    assert good.trace is not None
    assert [(r.turn, r.attempt, r.status, r.started_at, r.faults)
            for r in good.trace.requests][3:] == [
        (4, 1, 429, 0.0, ("quota:requests",)), (4, 2, 200, 60.0, ()), (5, 1, 200, 60.0, ())]


def test_an_agent_that_ignores_retry_after_ms_hammers_the_quota_and_fails_s5() -> None:
    bad = run(RPM, "S5-ignores-retry-after-ms")
    s5 = verdict(bad, "S5")
    assert s5.status == "fail"
    assert s5.message.startswith("request #5 (turn 4 attempt 2, incarnation 1) came ")
    assert s5.message.endswith("after request #4 (turn 4 attempt 1, incarnation 1) answered "
                               "429 asking to wait 60s")
    assert bad.stop_state == "usage_limited"


def test_the_anthropic_token_quota_is_waited_out_in_whole_seconds() -> None:
    good = run(ITPM)
    assert good.passed
    assert good.trace is not None
    refused = [r for r in good.trace.requests if r.status == 429]
    assert [(r.turn, r.retry_after, r.faults) for r in refused] == [
        (4, 60.0, ("quota:input_tokens",))]


@pytest.mark.parametrize(("dialect", "quota", "line"), [
    ("openai", "{requests_per_minute: 0}", "4:32: provider.quota.requests_per_minute: out of "
     "range: got 0; expected an integer >= 1"),
    ("anthropic", "{tokens_per_minute: 1.5}", "4:30: provider.quota.tokens_per_minute: "
     "wrong type: got 1.5 (a number); expected an integer >= 1"),
    ("openai", "{output_tokens_per_minute: 100}", "4:37: provider.quota.output_tokens_per_minute: "
     "the openai API has no such limit: got 100; expected one of 'requests_per_minute', "
     "'tokens_per_minute'. Use tokens_per_minute: this API counts input and output tokens "
     "together"),
])
def test_a_bad_quota_is_reported_at_its_line(tmp_path: Path, dialect: str, quota: str,
                                             line: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(dialect=dialect, quota=quota), encoding="utf-8")
    with pytest.raises(ScenarioError, match=f"^{re.escape(f'{path}:{line}')}$"):
        load_scenario(path)
