"""``tools``: a call to a tool the agent offers in no request says the scenario is not about
this agent (``unknown``); a call to one it offered before but dropped is the agent's fault."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness.checks import Verdict, check_trace
from harness.checks._invariants import check_tool_names
from harness.runner import Case, CaseResult, run_case
from harness.trace import Trace

SOURCE = Path("scenarios/mail.yaml")


@pytest.fixture(scope="module")
def mailed() -> CaseResult:
    scenario = mail_scenario()
    result = run_case(Case(scenario.name, SOURCE, 0), scenario, minimal_factory())
    assert result.passed, result.failed_verdicts
    return result


def _offering(trace: Trace, *offers: tuple[str, ...] | None) -> Trace:
    """``trace`` whose requests offered ``offers`` in order (the last one for the rest)."""
    requests = [replace(r, offered_tools=offers[min(i, len(offers) - 1)])
                for i, r in enumerate(trace.requests)]
    return replace(trace, requests=tuple(requests))


def _with_verdicts(result: CaseResult, trace: Trace) -> CaseResult:
    return replace(result, verdicts=check_trace(trace), trace=trace)


def test_a_run_whose_model_calls_only_offered_tools_gets_no_verdict(mailed: CaseResult) -> None:
    assert mailed.trace is not None
    assert check_tool_names(_offering(mailed.trace, ("mail", "look"))) is None


def test_a_tool_the_agent_offers_in_no_request_makes_the_case_prove_nothing(
        mailed: CaseResult) -> None:
    assert mailed.trace is not None
    trace = _offering(mailed.trace, ("send_email",))

    verdict = check_tool_names(trace)

    assert verdict is not None
    assert verdict.status == "unknown"
    assert verdict.message == (
        "the scenario's model calls ['mail'], tools this agent does not offer in any request "
        "(it offers ['send_email']): the scenario is not written for this agent, so its case "
        "proves nothing")
    assert verdict.evidence == ("the model called 'mail'; the agent offers ['send_email']",)
    judged = _with_verdicts(mailed, trace)
    assert judged.status == "unknown"
    # The reason says what to do about it too: the run line shows no more.
    assert judged.unknown_reason == f"{verdict.message}; {verdict.advice}"


def test_a_tool_offered_in_no_request_is_so_named_when_a_request_was_sent_again(
        mailed: CaseResult) -> None:
    # Semantic Kernel offers its plugin's functions as "MailPlugin-send_mail": a scenario
    # that calls "mail" is not written for it. The first request got a 429 and was sent
    # again with the same tools; that is no step of the agent the script failed to follow.
    assert mailed.trace is not None
    called = mailed.trace.requests[0]
    offered = ("MailPlugin-send_mail",)
    trace = _offering(replace(mailed.trace, requests=(
        replace(called, calls=()), *mailed.trace.requests)), offered)

    verdict = check_tool_names(trace)

    assert verdict is not None
    assert verdict.status == "unknown"
    assert verdict.message == (
        "the scenario's model calls ['mail'], tools this agent does not offer in any request "
        "(it offers ['MailPlugin-send_mail']): the scenario is not written for this agent, so "
        "its case proves nothing")


def test_a_tool_the_agent_offered_before_but_dropped_fails_the_case(mailed: CaseResult) -> None:
    # A first request offered mail and was answered in text; the next one, which the model
    # answered with its call of mail, offered only look (a tool list rebuilt without it).
    assert mailed.trace is not None
    called = mailed.trace.requests[0]
    assert [c.name for c in called.calls] == ["mail"]
    trace = replace(mailed.trace, requests=(
        replace(called, calls=(), offered_tools=("mail", "look")),
        replace(called, offered_tools=("look",)), *mailed.trace.requests[1:]))

    verdict = check_tool_names(trace)

    assert verdict is not None
    assert verdict.status == "fail"
    assert verdict.message.startswith(
        "the scenario's model calls ['mail'], which the agent offered in an earlier request "
        "of this case but not in the one it answered")
    assert verdict.evidence == ("the model called 'mail'; the agent offers ['look']",)
    assert _with_verdicts(mailed, trace).status == "fail"


def test_a_call_at_a_step_the_agent_took_before_is_the_scripts_mismatch(
        mailed: CaseResult) -> None:
    # A triage agent hands off to a mail agent; after a restart the run begins again at
    # the triage agent, whose one tool is the hand-off, and the script calls mail there.
    # A real model would hand off again: the script does not follow the agent's steps.
    assert mailed.trace is not None
    called = mailed.trace.requests[0]
    trace = replace(mailed.trace, requests=(
        replace(called, calls=(), offered_tools=("transfer_to_mailer",)),
        replace(called, calls=(), offered_tools=("mail",)),
        replace(called, offered_tools=("transfer_to_mailer",)), *mailed.trace.requests[1:]))

    verdict = check_tool_names(trace)

    assert verdict is not None
    assert verdict.status == "unknown"
    assert "a list the agent offered in an earlier request too" in verdict.message
    assert verdict.evidence == (
        "the model called 'mail'; the agent offers ['transfer_to_mailer']",)
    assert _with_verdicts(mailed, trace).status == "unknown"


def test_requests_whose_tools_are_unknown_are_not_judged(mailed: CaseResult) -> None:
    assert mailed.trace is not None
    assert check_tool_names(_offering(mailed.trace, None)) is None


@pytest.mark.parametrize(("failed", "status"), [
    ("S5:429", "fail"), ("S5:4xx", "fail"), ("network", "fail"), ("I4", "unknown"),
    ("I1", "unknown")])
def test_a_script_not_written_for_the_agent_keeps_only_what_any_run_proves(
        mailed: CaseResult, failed: str, status: str) -> None:
    # Retrying a refusal is wrong in any run; a stop state or a double send judged on a
    # conversation the scenario was not written for proves nothing.
    assert mailed.trace is not None
    judged = _with_verdicts(mailed, _offering(mailed.trace, ("send_email",)))
    broken = replace(judged, verdicts=(*judged.verdicts, Verdict(failed, "fail", "broken")))
    assert broken.status == status
