"""Every diagnosis says what the trace shows; a case that never met its crash or fault is
``unknown``; a grouped report line never merges cases that failed differently."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness._report_text import diagnosis, fold_failures
from harness.checks import check_i4
from harness.runner import Case, CaseResult, CrashSpec, Verdict, run_case
from harness.trace import InvocationRecord, Trace

SOURCE = Path("scenarios/mail.yaml")
TRUNCATED = [{"at": {"turn": 1}, "kind": "truncated_tool_arguments", "fraction": 0.5}]
I4_FAILED = Verdict("I4", "fail", "stopped 'failed', expected 'complete'")


def _cut_trace() -> Trace:
    """A run whose first answer's tool arguments were cut; the minimal agent ran none."""
    scenario = mail_scenario(faults=TRUNCATED)
    result = run_case(Case(scenario.name, SOURCE, 0), scenario, minimal_factory())
    assert result.trace is not None
    assert any(r.truncated and r.calls for r in result.trace.requests)
    return result.trace


def _failed(trace: Trace, *verdicts: Verdict) -> CaseResult:
    return CaseResult(Case("mail", SOURCE, 0), "failed", "stopped", verdicts or (I4_FAILED,),
                      "d", crash_reached=True, trace=trace)


def _traceback(last_line: str) -> str:
    return f'Traceback (most recent call last):\n  File "agent.py", line 9, in main\n{last_line}'


def _with(trace: Trace, **extra: object) -> Trace:
    return replace(trace, extra=replace(trace.extra, **extra))


def test_an_agent_that_refused_cut_arguments_and_stopped_is_told_so_not_that_it_used_them(
) -> None:
    refused = _with(_cut_trace(), agent_traceback=_traceback(
        "RuntimeError: the answer was cut at the output limit"))
    [line] = diagnosis(_failed(refused))
    assert "used them" not in line
    assert line == (
        "turn 1's answer was cut at the output limit (finish_reason 'length') in the middle of "
        "a tool call's arguments, and the agent ran none of its calls and stopped "
        "(RuntimeError: the answer was cut at the output limit): refusing them was right; "
        "tell the model its answer was cut and ask again instead of stopping.")


def test_an_agent_that_failed_parsing_cut_arguments_is_told_it_parsed_them() -> None:
    parsed = _with(_cut_trace(), agent_traceback=_traceback(
        "json.decoder.JSONDecodeError: Unterminated string starting at: line 1 column 18"))
    [line] = diagnosis(_failed(parsed))
    assert line.endswith("and the agent parsed them anyway and failed (JSONDecodeError). Check "
                         "finish_reason before parsing or running tool calls.")


def test_an_agent_that_ran_a_cut_call_is_told_it_ran_it() -> None:
    trace = _cut_trace()
    cut = next(r for r in trace.requests if r.truncated and r.calls)
    ran = InvocationRecord(99, "mail", "send", cut.calls[0].call_id, {"to": "a"}, 1, 0.0, 0.0,
                           False, "ok")
    [line] = diagnosis(_failed(replace(trace, invocations=(*trace.invocations, ran))))
    assert "and the agent ran mail with them anyway." in line


@pytest.mark.parametrize(("dialect", "named"), [
    ("anthropic", "stop_reason 'max_tokens'"),
    ("openai-responses", "status 'incomplete' (incomplete_details.reason 'max_output_tokens')"),
    ("gemini", "finishReason 'MAX_TOKENS'"),
])
def test_a_cut_is_named_by_the_dialects_own_word(dialect: str, named: str) -> None:
    parsed = _with(replace(_cut_trace(), dialect=dialect),
                   agent_traceback=_traceback("ValueError: bad JSON in the call's input"))
    [line] = diagnosis(_failed(parsed))
    assert f"cut at the output limit ({named}) in the middle" in line
    assert "finish reason 'length'" not in line


# ------------------------------------------------------------- never reached


CRASH = CrashSpec("journal:fsync#9", "after", "unsynced_lost")


def test_a_crash_case_whose_point_was_never_reached_is_unknown_even_with_failed_checks(
) -> None:
    # A resumed conversation (an agent's store left over from an earlier case) never
    # meets the crash: what it then does proves nothing about the crash.
    result = CaseResult(Case("mail", SOURCE, 0, CRASH), "complete", "done",
                        (Verdict("side_effects", "fail", "mail: 0 effect(s), expected 1"),
                         Verdict("crash", "unknown", "the agent never reached journal:fsync#9")),
                        "d", crash_reached=False)
    assert result.status == "unknown"
    assert not result.passed


def test_a_case_whose_fault_was_never_reached_is_unknown_even_with_failed_checks() -> None:
    result = CaseResult(Case("mail", SOURCE, 0), "complete", "done",
                        (Verdict("I4", "fail", "stopped 'complete', expected 'infra_paused'"),
                         Verdict("faults", "unknown", "turn 3 attempt 1 http_error was never "
                                 "reached", ("never reached: turn 3 attempt 1 http_error",))),
                        "d", crash_reached=True)
    assert result.status == "unknown"


@pytest.mark.parametrize("verdict", [
    Verdict("harness_limit", "fail", "2000 model requests"),
    Verdict("network", "fail", "the agent sent 1 request(s) to hosts that are not a fake "
            "provider"),
    Verdict("tools", "fail", "the scenario's model calls ['mail'], tools this agent does not "
            "offer"),
    Verdict("dialect", "fail", "this scenario speaks openai; the agent sent 1 request(s) in "
            "another dialect"),
])
def test_a_failure_that_needs_no_crash_still_fails_an_unreached_case(verdict: Verdict) -> None:
    # These judge the agent's setup, not what it did at the crash: they hold either way.
    result = CaseResult(Case("mail", SOURCE, 0, CRASH), None, "stopped", (verdict,), "d",
                        crash_reached=False)
    assert result.status == "fail"


def test_a_harness_error_still_fails_an_unreached_case() -> None:
    result = CaseResult(Case("mail", SOURCE, 0, CRASH), None, "died", (), "",
                        crash_reached=False, error="the agent's process exited with code 1")
    assert result.status == "fail"


# ------------------------------------------------------------------ grouping


def _case(point: str) -> Case:
    return Case("mail", SOURCE, 0, CrashSpec(point, "after", "unsynced_lost"))


def test_cases_with_different_stop_reasons_are_never_grouped() -> None:
    same = Verdict("I1", "fail", "1 non-idempotent effect(s) applied more than once")
    a = CaseResult(_case("journal:fsync#1"), "complete", "main returned its final answer",
                   (same,), "a", crash_reached=True)
    b = CaseResult(_case("journal:fsync#2"), "failed", "the agent raised KeyError: 'to'",
                   (same,), "b", crash_reached=True)
    assert [len(group) for group in fold_failures([a, b])] == [1, 1]


def test_cases_whose_warnings_differ_are_never_grouped() -> None:
    same = Verdict("I1", "fail", "1 non-idempotent effect(s) applied more than once")
    a = CaseResult(_case("journal:fsync#1"), "complete", "done", (same,), "a",
                   crash_reached=True)
    b = CaseResult(_case("journal:fsync#2"), "complete", "done",
                   (same, Verdict("S5:backoff", "warn", "no backoff between retries")),
                   "b", crash_reached=True)
    assert [len(group) for group in fold_failures([a, b])] == [1, 1]


def test_a_case_that_met_its_crash_is_never_grouped_with_one_that_did_not() -> None:
    network = Verdict("network", "fail", "the agent sent 1 request(s) to hosts that are not a "
                      "fake provider")
    a = CaseResult(_case("journal:fsync#1"), "complete", "done", (network,), "a",
                   crash_reached=True)
    b = CaseResult(_case("journal:fsync#2"), "complete", "done", (network,), "b",
                   crash_reached=False)
    assert (a.status, b.status) == ("fail", "fail")
    assert [len(group) for group in fold_failures([a, b])] == [1, 1]


def test_cases_that_failed_alike_are_still_grouped() -> None:
    same = Verdict("I1", "fail", "1 non-idempotent effect(s) applied more than once")
    results = [CaseResult(_case(f"journal:fsync#{n}"), "complete", "done",
                          (same, Verdict("I4", "pass", "stopped 'complete'")), str(n),
                          crash_reached=True) for n in (1, 2, 3)]
    assert [len(group) for group in fold_failures(results)] == [3]


def test_a_request_in_another_dialect_is_a_verdict_of_its_own() -> None:
    # It meets no fault and no crash point; the case fails on it, not on being unreached.
    from harness.checks._invariants import check_dialect_spoken

    trace = _with(_cut_trace(), misdialed_requests=["POST /v1/responses (openai-responses)"])
    verdict = check_dialect_spoken(trace)
    assert verdict is not None
    assert (verdict.invariant, verdict.status) == ("dialect", "fail")
    assert verdict.evidence == ("POST /v1/responses (openai-responses)",)
    assert check_dialect_spoken(_cut_trace()) is None


def test_an_agent_that_called_its_tool_with_cut_arguments_is_told_it_called_it() -> None:
    # The Anthropic SDK hands over what it could parse of a cut input; the call then fails.
    called = _with(_cut_trace(), agent_traceback=_traceback(
        "TypeError: mail() missing 1 required positional argument: 'to'"))
    [line] = diagnosis(_failed(called))
    assert "and the agent called mail with them anyway and it failed (TypeError)." in line


def test_cases_of_different_scenarios_are_never_grouped() -> None:
    # Each scenario's failure needs its own report: its file's lines and its replay command.
    same = Verdict("I7", "fail", "a tool ran with arguments no complete answer sent")
    a = CaseResult(Case("s4-truncated", Path("s4.yaml"), 4), "complete", "done", (same,), "a",
                   crash_reached=True)
    b = CaseResult(Case("s6-truncated-late", Path("s6.yaml"), 6), "complete", "done", (same,),
                   "b", crash_reached=True)
    assert [len(group) for group in fold_failures([a, b, replace(a, digest="c")])] == [2, 1]


def _completed(crash: CrashSpec | None) -> Trace:
    """The minimal agent's run, as if it had returned a final answer however it went."""
    scenario = mail_scenario()
    result = run_case(Case(scenario.name, SOURCE, 0, crash), scenario, minimal_factory())
    assert result.trace is not None
    assert result.trace.outcome is not None
    return replace(result.trace, outcome=replace(result.trace.outcome, stop_state="complete"))


KILLED = CrashSpec("journal:fsync#1", "after", "process_killed")


@pytest.mark.parametrize(("crash", "said"), [
    (None, "the agent returned a final answer the model never gave"),
    (KILLED, "the agent, restarted after the crash, returned a final answer the model never "
             "gave"),
])
def test_a_complete_stop_no_request_backs_names_no_infrastructure_failure(
        crash: CrashSpec | None, said: str) -> None:
    # A restarted agent that found a checkpoint and returned from it asked the model nothing:
    # no provider failed, so the words must not say one did.
    unasked = replace(_completed(crash), requests=())
    verdict = check_i4(unasked)
    assert (verdict.status, verdict.message) == (
        "fail", f"complete, but no request reached the model: {said}")


def test_a_last_request_cut_by_the_crash_is_the_crashs_and_a_faulted_one_the_providers(
) -> None:
    crashed = _completed(KILLED)
    assert crashed.final_incarnation == 2
    first = [r for r in crashed.requests if r.incarnation == 1]
    cut = replace(first[-1], delivery="broken", faults=())
    verdict = check_i4(replace(crashed, requests=(*first[:-1], cut)))
    assert verdict.message == (
        "complete, but the last request (incarnation 1) ended broken when the crash killed "
        "its process, and the restarted agent returned a final answer without asking the "
        "model again")
    faulted = replace(cut, faults=("stall",))
    verdict = check_i4(replace(crashed, requests=(*first[:-1], faulted)))
    assert verdict.message == "complete after an infrastructure failure: the last request " \
        "ended broken"


def test_the_first_line_names_a_verdict_that_holds_of_any_run_before_the_rest() -> None:
    """An agent in another dialect fails I4 too; "I4 broken … (and 2 more)" hid the cause."""
    from harness._report_text import _verdict_line

    dialect = Verdict("dialect", "fail", "the agent speaks openai-responses; the scenario openai")
    side = Verdict("side_effects", "fail", "mail: 0 effect(s), expected 1")
    line = _verdict_line(_failed(_cut_trace(), I4_FAILED, side, dialect))
    assert line.startswith("dialect broken: the agent speaks openai-responses")
    assert line.endswith("(and 2 more)")
    assert _verdict_line(_failed(_cut_trace(), I4_FAILED, side)).startswith("I4 broken")


def test_an_agent_that_ran_the_whole_call_of_a_cut_answer_is_told_so_not_that_it_used_cut_ones(
) -> None:
    """LangGraph runs the whole first call of an answer cut in its second; "ran append_note
    with them anyway" said the note's arguments were the cut ones."""
    from harness.mutants import MUTANTS
    from harness.runner import plan_cases
    from harness.scenario import load_scenario

    source = Path("scenarios/streaming/cut-answer-with-a-whole-call.yaml")
    scenario = load_scenario(source)
    ignores = next(m for m in MUTANTS if m.name == "S6-ignores-length-finish")
    result = run_case(plan_cases(scenario, source)[0], scenario, ignores.factory)
    assert "I7" in {v.invariant for v in result.failed_verdicts}
    [line] = [line for line in diagnosis(result) if "output limit" in line]
    assert "the agent ran notes, whose arguments came through whole, anyway" in line
    assert "with them anyway" not in line
