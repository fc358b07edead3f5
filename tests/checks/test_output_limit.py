"""S6:limit: an answer cut at the agent's own output limit is asked for again with a raised
limit while the model allows more (seed 002 §19.1 ①, truncation level 1)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._truncation import check_output_limit
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import AskedOutput, Trace

SCENARIO = "scenarios/streaming/cut-answer-raises-the-limit.yaml"
NEVER_RAISED = next(m for m in MUTANTS if m.name == "S6-output-limit-never-raised")


@pytest.fixture(scope="module")
def raised() -> Trace:
    return reference_trace(SCENARIO, "S6:limit")


def test_the_reference_agent_raises_the_limit_before_anything_else(raised: Trace) -> None:
    verdict = check_output_limit(raised)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    asked = raised.extra.asked_outputs
    assert asked is not None
    # 1,024 for the cut answer, the model's 8,192 for the same turn's next attempt.
    assert [a.limit for a in asked[:2]] == [1024, 8192]
    first, second = raised.requests[:2]
    assert (first.turn, first.finish, second.turn, second.attempt) == (1, "length", 1, 2)
    # The whole call came back and ran once; nothing of the cut one ran.
    assert [i.tool for i in raised.invocations] == ["mail"]


def test_an_agent_that_never_raises_the_limit_fails() -> None:
    result = run_kill(NEVER_RAISED.kills[0], NEVER_RAISED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "S6:limit" in failed, result.failed_verdicts
    assert failed["S6:limit"].message == (
        "request #2 followed the answer cut at 1024 output tokens (request #1) with a limit "
        "of 1024, though the model allows 8192")
    # Everything else of its run is right: the mail is sent once, after a second round.
    assert set(failed) == {"S6:limit"}


def test_a_limit_above_the_ceiling_fails(raised: Trace) -> None:
    asked = raised.extra.asked_outputs
    assert asked is not None
    over = (asked[0], AskedOutput(asked[1].request, 16384), *asked[2:])
    verdict = check_output_limit(replace(raised, extra=replace(raised.extra,
                                                               asked_outputs=over)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message == "request #2 asked for 16384 output tokens, above the model's 8192"


def test_no_headroom_no_verdict_but_unknown(raised: Trace) -> None:
    at_ceiling = replace(raised, extra=replace(raised.extra, output_ceiling=1024))
    verdict = check_output_limit(at_ceiling)
    assert verdict is not None
    assert verdict.status == "fail"  # 8,192 is above a ceiling of 1,024
    asked = raised.extra.asked_outputs
    assert asked is not None
    flat = tuple(replace(a, limit=1024) for a in asked)
    verdict = check_output_limit(replace(at_ceiling, extra=replace(at_ceiling.extra,
                                                                  asked_outputs=flat)))
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "no answer cut below the model's 1024 output tokens" in verdict.message


def test_no_verdict_without_a_ceiling_and_unknown_for_a_plain_agent(raised: Trace) -> None:
    assert check_output_limit(replace(raised, extra=replace(raised.extra,
                                                            output_ceiling=None))) is None
    plain = check_output_limit(replace(raised, extra=replace(raised.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"


def test_a_failure_report_points_at_the_ceiling_in_the_scenario() -> None:
    from harness._report_text import render_failure
    from harness.scenario import load_scenario

    result = run_kill(NEVER_RAISED.kills[0], NEVER_RAISED.factory)
    report = render_failure(result, load_scenario(SCENARIO))
    marked = [line for line in report.splitlines() if line.startswith(">")]
    assert any("max_output_tokens: 8192" in line for line in marked), report
