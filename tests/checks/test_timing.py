"""The timing checks: each passes the reference agent and fails the mutant it exists for."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import fakes._tools
from harness.checks import Verdict
from harness.mutants import MUTANTS
from harness.runner import Case, CaseResult, run_case
from harness.scenario import Scenario, load_scenario

BY_NAME = {m.name: m for m in MUTANTS}
STALL = Path("scenarios/streaming/stall-then-429.yaml")


def run(source: Path, mutant: str | None = None, scenario: Scenario | None = None) -> CaseResult:
    scenario = scenario or load_scenario(source)
    factory = BY_NAME[mutant].factory if mutant else None
    return run_case(Case(scenario.name, source, scenario.seed), scenario, factory)


def verdict(result: CaseResult, check: str) -> Verdict:
    return next(v for v in result.verdicts if v.invariant == check)


def test_s1_fails_an_agent_that_waits_out_a_stall_longer_than_the_bound() -> None:
    assert verdict(run(STALL), "S1").status == "pass"
    bad = verdict(run(STALL, "S1-no-idle-watchdog"), "S1")
    assert bad.status == "fail"
    assert bad.message == ("request #1 (turn 1 attempt 1, incarnation 1) was waited on silent "
                           "for 120s; an idle watchdog abandons it after 30s")


def test_s1_bound_is_the_scenarios_to_override() -> None:
    scenario = load_scenario(STALL)
    strict = scenario.model_copy(update={
        "expect": scenario.expect.model_copy(update={"idle_bound_seconds": 20})})
    assert verdict(run(STALL, scenario=strict), "S1").status == "fail"


def test_s5_fails_a_retry_sent_before_the_asked_wait() -> None:
    good = verdict(run(STALL), "S5")
    assert (good.status, good.message) == ("pass", "1 asked wait(s) honoured")
    bad = verdict(run(STALL, "S5-ignores-retry-after"), "S5")
    assert bad.status == "fail"
    assert bad.message.startswith("request #3 (turn 1 attempt 3, incarnation 1) came ")
    assert bad.message.endswith("after request #2 (turn 1 attempt 2, incarnation 1) answered "
                                "429 asking to wait 60s")


def test_j7_fails_a_request_sent_while_a_timed_out_tool_still_runs() -> None:
    source = Path("scenarios/tools/timeouts-settle.yaml")
    assert verdict(run(source), "J7").status == "pass"
    bad = verdict(run(source, "J7-walks-away-from-timed-out-tool"), "J7")
    assert bad.status == "fail"
    assert "while the cancelled call toolu_t1_1 of stubborn" in bad.message


def test_l2_fails_writers_that_overlap_in_time() -> None:
    source = Path("scenarios/tools/writers-take-turns.yaml")
    assert verdict(run(source), "L2").status == "pass"
    bad = verdict(run(source, "L2-runs-writers-in-parallel"), "L2")
    assert bad.status == "fail"
    assert bad.message.startswith("a tool that is not concurrency-safe ran beside another "
                                  "call: log_a call call_t2_0 ran ")


def test_a_run_that_met_no_timing_fault_is_unknown_on_each() -> None:
    source = Path("scenarios/crash/notes-and-mail-everywhere.yaml")
    result = run(source)
    assert [verdict(result, c).status for c in ("S1", "S5", "S5:429", "J7", "L2")] == \
        ["unknown"] * 5


def test_l2_results_fail_a_reply_that_carries_another_calls_result() -> None:
    source = Path("scenarios/tools/writers-take-turns.yaml")
    good = verdict(run(source), "L2:results")
    assert good.status == "pass"
    bad = verdict(run(source, "L2-results-in-completion-order"), "L2:results")
    assert bad.status == "fail"
    assert bad.message == "the reply to call call_t1_0 is the result of call call_t1_1"


@pytest.mark.parametrize("wrap", [
    lambda text: json.dumps({"status": "ok", "result": json.loads(text)}),
    lambda text: json.dumps({"status": "ok", "output": text}),  # the result as a JSON string
])
def test_l2_results_look_inside_the_wrappers_agents_put_results_in(wrap: Any) -> None:
    # Most agents wrap a result before they reply; crossed results stay crossed inside.
    from harness.checks._replies import check_replies_match

    source = Path("scenarios/tools/writers-take-turns.yaml")
    trace = run(source, "L2-results-in-completion-order").trace
    good = run(source).trace
    assert trace is not None
    assert good is not None
    for found, status in ((trace, "fail"), (good, "pass")):
        assert found.outcome is not None
        wrapped = tuple(replace(m, text=wrap(m.text)) if m.role == "tool" else m
                        for m in found.outcome.transcript)
        judged = check_replies_match(replace(found, outcome=replace(found.outcome,
                                                                    transcript=wrapped)))
        assert judged.status == status, judged


def test_s5_backoff_warns_about_instant_retries_and_fails_them_only_when_strict() -> None:
    from harness._report_text import warning_lines
    from harness.runner import strictly

    source = Path("scenarios/streaming/overloaded-infra-paused.yaml")
    assert verdict(run(source), "S5:backoff").status == "pass"
    result = run(source, "S5-no-backoff")
    warned = verdict(result, "S5:backoff")
    assert warned.status == "warn"
    assert warned.advice == ("back off exponentially with jitter between retries (at least 1s, "
                             "doubling), not at once")
    assert result.passed
    assert warning_lines(result)[0].startswith(
        "warn  overloaded-infra-paused  S5:backoff: request #3 (turn 2 attempt 2, incarnation 1) "
        "retried ")
    strict = strictly(result)
    assert not strict.passed
    assert [v.invariant for v in strict.failed_verdicts] == ["S5:backoff"]


def test_s5_backoff_asks_the_waits_to_grow_not_the_first_to_reach_the_floor() -> None:
    # seed 002 §19.1: exponential backoff with jitter. A first retry below the 1 s floor
    # (the official SDKs start at 0.5 s) passes when the waits double; a short wait that
    # never grows is hammering by another name.
    from harness.agent import StreamConfig
    from harness.mutants._build import reference

    source = Path("scenarios/streaming/overloaded-infra-paused.yaml")
    scenario = load_scenario(source)

    def judged(**backoff: float) -> Verdict:
        agent = reference(config=StreamConfig(backoff_jitter=0.0, **backoff))
        return verdict(run_case(Case(scenario.name, source, scenario.seed), scenario, agent),
                       "S5:backoff")

    assert judged(backoff_base=0.4, backoff_cap=8.0).status == "pass"
    flat = judged(backoff_base=0.4, backoff_cap=0.4)
    assert flat.status == "warn"
    assert "expected a backoff of at least 0.75s" in flat.message


@pytest.mark.system  # system tier: real child processes on a loaded machine
def test_a_killed_subprocess_settles_at_the_same_virtual_time_on_a_loaded_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine too busy to deliver the child's death within the selector's grace
    (modelled: the kill lands 50 ms of real time late) gives the same trace."""
    source = Path("scenarios/tools/timeouts-settle.yaml")
    calm = run(source)
    kill = fakes._tools._kill_group

    def late_kill(pid: int) -> None:
        threading.Timer(0.05, kill, (pid,)).start()

    monkeypatch.setattr(fakes._tools, "_kill_group", late_kill)
    loaded = run(source)
    assert calm.passed
    assert loaded.passed
    assert loaded.digest == calm.digest


def _rate_limited_run(incarnations: list[int]) -> Any:
    """A trace whose turn-2 requests, from the given incarnations, were all answered 429."""
    from harness.mutants import Kill
    from harness.mutants._build import reference
    from harness.mutants._run import run_kill

    result = run_kill(Kill("scenarios/goals/rate-limit-parks-the-goal.yaml", "S5:429"),
                      reference())
    assert result.trace is not None
    first, *limited = result.trace.requests
    template = limited[0]
    requests = [first, *(replace(template, index=n, incarnation=i, attempt=n - 1)
                         for n, i in enumerate(incarnations, 2))]
    return replace(result.trace, requests=tuple(requests))


def test_s5_429_counts_the_run_of_rate_limits_across_a_restart() -> None:
    from harness.checks._timing import check_429_cap

    across = check_429_cap(_rate_limited_run([1, 1, 1, 2, 2]))
    assert across.status == "fail"
    assert across.message.startswith("request #6 (turn 2 attempt 5, incarnation 2) was sent "
                                     "after 3 rate limits (429) in a row")


def test_s5_429_holds_no_dead_incarnations_last_429_against_the_next() -> None:
    # Incarnation 1 may have died before it could write its last 429 down; the final
    # incarnation's last one is no such 429.
    from harness.checks._timing import check_429_cap

    heard = check_429_cap(_rate_limited_run([1, 1, 1, 2]))
    assert (heard.status, heard.message) == ("pass", "the agent stopped after 3 rate limits in "
                                             "a row")
    alive = check_429_cap(_rate_limited_run([1, 1, 1, 1]))
    assert alive.status == "fail"
    assert alive.message.startswith("request #5 (turn 2 attempt 4, incarnation 1) was sent")
