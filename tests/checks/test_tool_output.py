"""context:tool-output: a tool result longer than the scenario's limit is not carried whole in
the requests after it (seed 002 §19.2: 超长输出有稳定引用; §19.6: 只保存证据引用), judged from
what the provider saw."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import mutant_trace, reference_trace

from harness.checks._tool_output import check_tool_output
from harness.trace import InlineResult, Trace

SCENARIO = "scenarios/budgets/long-tool-output-by-reference.yaml"


@pytest.fixture(scope="module")
def by_reference() -> Trace:
    return reference_trace(SCENARIO, "context:tool-output")


def test_the_reference_agent_sends_a_part_and_passes(by_reference: Trace) -> None:
    verdict = check_tool_output(by_reference)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert verdict.message.startswith(
        "1 tool result(s) were longer than 8,000 characters (the longest, call_t1_0 (build), "
        "61,735); the 2 request(s) that carried them carried at most ")
    assert "not seen from outside" in verdict.message
    extra = by_reference.extra
    assert extra.max_tool_result_chars == 8_000
    carried = [r for r in extra.inline_results or () if r.call_id == "call_t1_0"]
    assert [r.request for r in carried] == [2, 3]
    assert all(r.chars <= 8_000 for r in carried)


def test_an_agent_that_inlines_the_whole_log_fails() -> None:
    trace = mutant_trace(SCENARIO, "context:tool-output", "L4-tool-output-inline")
    verdict = check_tool_output(trace)
    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message == ("request #2 carried the result of call_t1_0 (build) inline: "
                               "61,735 characters; the most one request may carry is 8,000")
    assert len(verdict.evidence) == 2  # turn 3's request carried it again
    assert verdict.advice is not None


def test_nothing_long_is_unknown(by_reference: Trace) -> None:
    short = replace(by_reference, invocations=tuple(
        replace(i, result='{"output": "ok"}') for i in by_reference.invocations))
    verdict = check_tool_output(short)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert verdict.message == ("no tool returned a result longer than 8,000 characters: "
                               "nothing to judge")


def test_a_long_result_no_request_carried_is_unknown(by_reference: Trace) -> None:
    unsent = replace(by_reference, extra=replace(by_reference.extra, inline_results=tuple(
        r for r in by_reference.extra.inline_results or () if r.call_id != "call_t1_0")))
    verdict = check_tool_output(unsent)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "no request after them carried their reply" in verdict.message


def test_one_request_over_the_limit_fails_though_others_kept_to_it(by_reference: Trace) -> None:
    extra = by_reference.extra
    over = replace(by_reference, extra=replace(extra, inline_results=(
        *(extra.inline_results or ()), InlineResult(3, "call_t2_0", 8_001))))
    verdict = check_tool_output(over)
    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message.startswith("request #3 carried the result of call_t2_0 (notes) "
                                      "inline: 8,001 characters")


def test_no_limit_no_verdict(by_reference: Trace) -> None:
    undeclared = replace(by_reference, extra=replace(
        by_reference.extra, max_tool_result_chars=None, inline_results=None))
    assert check_tool_output(undeclared) is None
