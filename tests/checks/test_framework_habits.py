"""The checkers judge what the world saw, not one framework's way of ending a run or keeping
its memory: a run that ends on a final tool call is complete, and tool calls a framework
echoes back as assistant text are no joined attempts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness.checks import check_i4, check_i8
from harness.runner import Case, run_case
from harness.trace import MessageRecord, SentCall, Trace

SOURCE = Path("scenarios/mail.yaml")
RESET_MID_TEXT = [{"at": {"turn": 1}, "kind": "connection_reset", "after_events": 3}]


def _trace(**overrides: object) -> Trace:
    scenario = mail_scenario(**overrides)
    result = run_case(Case(scenario.name, SOURCE, 0), scenario, minimal_factory())
    assert result.trace is not None
    return result.trace


def _ended_on_a_final_call(trace: Trace, *, answer: str | None) -> Trace:
    """``trace`` whose last answer was a final tool call, as smolagents' ``final_answer``."""
    last = trace.requests[-1]
    final = replace(last, text="", finish="tool_calls",
                    calls=(SentCall(f"call_t{last.turn}_0", "final_answer",
                                    '{"answer": "Done."}'),))
    extra = replace(trace.extra, final_answer=answer)
    return replace(trace, requests=(*trace.requests[:-1], final), extra=extra)


def test_i4_a_run_that_ends_on_a_final_tool_call_with_an_answer_is_complete() -> None:
    verdict = check_i4(_ended_on_a_final_call(_trace(), answer="Done."))
    assert (verdict.status, verdict.message) == ("pass", "stopped 'complete' (expected "
                                                 "'complete')")


def test_i4_tool_calls_left_unanswered_without_a_final_answer_are_no_completion() -> None:
    verdict = check_i4(_ended_on_a_final_call(_trace(), answer=None))
    assert verdict.status == "fail"
    assert verdict.message == ("complete, but the last answer (turn 2) asked for tool call(s) "
                               "final_answer#call_t2_0 and the run ended without a final answer")


@pytest.mark.parametrize(("dialect", "named"), [
    ("openai", "finish_reason 'length'"),
    ("anthropic", "stop_reason 'max_tokens'"),
    ("openai-responses", "status 'incomplete' (incomplete_details.reason 'max_output_tokens')"),
    ("gemini", "finishReason 'MAX_TOKENS'"),
])
def test_i4_names_an_answer_cut_at_the_output_limit_by_the_dialects_word_not_as_infra(
        dialect: str, named: str) -> None:
    trace = _trace()
    cut = replace(trace.requests[-1], truncated=True, finish="length")
    verdict = check_i4(replace(trace, dialect=dialect, requests=(*trace.requests[:-1], cut)))
    assert verdict.status == "fail"
    assert verdict.message == (f"complete, but the last answer (turn 2) was cut at the output "
                               f"limit ({named}): the model never finished")
    assert "infrastructure" not in verdict.message


def _with_transcript_text(trace: Trace, turn: int, text: str) -> Trace:
    assert trace.outcome is not None
    messages = list(trace.outcome.transcript)
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    at = assistants[turn - 1]
    messages[at] = replace(messages[at], text=text)
    return replace(trace, outcome=replace(trace.outcome, transcript=tuple(messages)))


SMOLAGENTS_ECHO = ("Calling tools:\n[{'id': 'call_t1_0', 'type': 'function', 'function': "
                   "{'name': 'mail', 'arguments': {'to': 'a', 'body': 'hi'}}}]")


def test_i8_tool_calls_echoed_back_as_text_are_no_joined_attempt() -> None:
    # smolagents keeps "Calling tools: [...]" in its memory as assistant text, after the
    # answer's own text, and sends it back so.
    trace = _trace(faults=RESET_MID_TEXT)
    echoed = _with_transcript_text(trace, 1, "Sending.\n" + SMOLAGENTS_ECHO)
    verdict = check_i8(echoed)
    assert verdict.status == "pass", verdict


def test_i8_an_echo_alone_is_no_joined_attempt() -> None:
    trace = _trace(faults=RESET_MID_TEXT)
    assert check_i8(_with_transcript_text(trace, 1, SMOLAGENTS_ECHO)).status == "pass"


def test_i8_still_fails_a_joined_text_in_front_of_an_echo() -> None:
    trace = _trace(faults=RESET_MID_TEXT)
    partial = next(r for r in trace.requests if r.delivery == "partial")
    joined = _with_transcript_text(trace, 1, partial.text + "Sending.\n" + SMOLAGENTS_ECHO)
    verdict = check_i8(joined)
    assert verdict.status == "fail"
    assert verdict.message == "a committed message is not the text of one attempt"


def test_i8_a_stop_sequence_put_back_after_the_answer_is_no_joined_attempt() -> None:
    # smolagents' CodeAgent asks to stop at "</code>"; the API leaves it out, and the agent
    # closes its code block with it again before it keeps the answer in its memory.
    trace = _trace(faults=RESET_MID_TEXT)
    whole = next(r for r in trace.requests if r.turn == 1 and r.complete)
    closed = _with_transcript_text(trace, 1, whole.text + "</code>\n" + SMOLAGENTS_ECHO)
    asked = replace(closed, extra=replace(closed.extra, stop_sequences=("Observation:",
                                                                        "</code>")))
    assert check_i8(asked).status == "pass", check_i8(asked)
    # Text the agent never asked to stop at is still not the answer's.
    verdict = check_i8(closed)
    assert verdict.status == "fail"
    assert verdict.message == "a committed message is not the text of one attempt"


def test_the_transcript_helpers_see_the_assistant_turns() -> None:
    # The cases above rewrite the first assistant message of a real run; it must exist.
    trace = _trace(faults=RESET_MID_TEXT)
    assert trace.outcome is not None
    first = next(m for m in trace.outcome.transcript if m.role == "assistant")
    assert isinstance(first, MessageRecord)
    assert first.text == "Sending."
