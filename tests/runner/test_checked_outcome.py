"""What the runner accepts from an agent's run(): an outcome whose words the trace knows."""

from __future__ import annotations

import pytest

from harness.ports import AgentOutcome, TranscriptMessage
from harness.runner._run import MalformedOutcome, checked_outcome


def _outcome(stop_state: str = "complete", status: str | None = "ok") -> AgentOutcome:
    reply = TranscriptMessage("tool", "turn_1", "{}", call_id="call_1",
                              status=status)  # type: ignore[arg-type]
    return AgentOutcome(stop_state, "done", (reply,), None, None, 1)  # type: ignore[arg-type]


def test_an_outcome_in_the_trace_s_words_is_taken_as_it_is() -> None:
    outcome = _outcome()
    assert checked_outcome(outcome) is outcome
    assert checked_outcome(_outcome(status=None)).transcript[0].status is None


def test_a_misspelt_stop_state_is_refused_with_the_words_it_may_be() -> None:
    with pytest.raises(MalformedOutcome, match=r"^AgentOutcome\.stop_state: got 'completed'; "
                                               r"expected one of 'complete', 'blocked', "):
        checked_outcome(_outcome(stop_state="completed"))


def test_a_misspelt_reply_status_is_refused_naming_its_call() -> None:
    with pytest.raises(MalformedOutcome, match=r"^the transcript's reply to call_1: status: got "
                                               r"'failed'; expected one of 'ok', 'error', "):
        checked_outcome(_outcome(status="failed"))


def test_what_is_no_outcome_is_refused_as_before() -> None:
    with pytest.raises(MalformedOutcome, match=r"^run\(\) returned NoneType None; expected an "
                                               r"AgentOutcome \(harness\.ports\.AgentOutcome\)"):
        checked_outcome(None)
