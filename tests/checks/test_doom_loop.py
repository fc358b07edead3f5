"""retry:doom-loop: a degenerate, repeating answer is resampled with other sampling and
never built on (seed 002 §19.1, grok-build: 推理死循环(DoomLoop) 换法重采样)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._doom_loop import check_doom_loop
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/streaming/looping-answer-resampled.yaml"
CONTINUED = next(m for m in MUTANTS if m.name == "S5-doom-loop-continued")
UNCHANGED = next(m for m in MUTANTS if m.name == "S5-doom-loop-retried-unchanged")


@pytest.fixture(scope="module")
def resampled() -> Trace:
    return reference_trace(SCENARIO, "retry:doom-loop")


def test_the_reference_agent_resamples_each_loop(resampled: Trace) -> None:
    verdict = check_doom_loop(resampled)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "each of 2 looping answer(s)" in verdict.message
    sampled = resampled.extra.sampled_requests
    assert sampled is not None
    # The first request leaves sampling to the provider; each resample asks for another.
    assert [s.sampling for s in sampled[:3]] == [(), ("temperature=0.8",), ("temperature=1.0",)]
    assert not any(s.carries_loop for s in sampled)
    looped = [r for r in resampled.requests if "doom_loop" in r.faults]
    # Let go of mid-stream: the rest of a loop would only be billed.
    assert all(r.delivery != "complete" for r in looped)
    assert [i.tool for i in resampled.invocations] == ["notes"]


def test_an_agent_that_continues_the_loop_fails() -> None:
    result = run_kill(CONTINUED.kills[0], CONTINUED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "retry:doom-loop" in failed, result.failed_verdicts
    assert failed["retry:doom-loop"].message == (
        "request #2 carried the looping text of request #1 back to the model")
    # Read as cut text and continued, the loop became the turn's answer: no tool ran.
    assert result.trace is not None
    assert result.trace.invocations == ()


def test_an_agent_that_retries_the_same_request_fails() -> None:
    result = run_kill(UNCHANGED.kills[0], UNCHANGED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "retry:doom-loop" in failed, result.failed_verdicts
    assert failed["retry:doom-loop"].message.startswith(
        "request #2 followed the looping answer of request #1 with the same sampling "
        "(the provider's defaults)")


def test_a_final_answer_that_is_the_loop_fails(resampled: Trace) -> None:
    phrase = (resampled.extra.loop_phrases or ("",))[0]
    looped = replace(resampled, extra=replace(resampled.extra,
                                              final_answer=f"{phrase} " * 9))
    verdict = check_doom_loop(looped)
    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message.startswith("the run's final answer is the loop")


def test_unknown_when_no_loop_reached_the_agent(resampled: Trace) -> None:
    unreached = tuple(replace(r, delivered_bytes=0) if "doom_loop" in r.faults else r
                      for r in resampled.requests)
    verdict = check_doom_loop(replace(resampled, requests=unreached))
    assert verdict is not None
    assert (verdict.status, verdict.message) == ("unknown", "no looping answer reached the agent")


def test_unknown_when_the_agent_stopped_at_the_loop(resampled: Trace) -> None:
    first = resampled.requests[0]
    verdict = check_doom_loop(replace(resampled, requests=(first,)))
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "no request followed a looping answer" in verdict.message


def test_a_restart_may_ask_afresh(resampled: Trace) -> None:
    # The request after a loop in another incarnation is not held to other sampling.
    restarted = tuple(replace(r, incarnation=2) if r.index > 1 else r
                      for r in resampled.requests)
    sampled = resampled.extra.sampled_requests
    assert sampled is not None
    defaults = tuple(replace(s, sampling=()) for s in sampled)
    trace = replace(resampled, requests=restarted,
                    extra=replace(resampled.extra, sampled_requests=defaults))
    verdict = check_doom_loop(trace)
    assert verdict is not None
    assert verdict.status == "fail"  # request #3 still followed request #2 in incarnation 2
    assert "request #3 followed the looping answer of request #2" in verdict.message
    assert "request #2 followed" not in verdict.message


def test_no_verdict_without_a_looping_answer(resampled: Trace) -> None:
    plain = replace(resampled, extra=replace(resampled.extra, loop_phrases=None,
                                             sampled_requests=None))
    assert check_doom_loop(plain) is None


def test_a_failure_report_points_at_the_faults() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(UNCHANGED.kills[0], UNCHANGED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("kind: doom_loop" in line for line in marked), report
