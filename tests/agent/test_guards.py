"""L3 and L4: repetition, error fingerprints, repair counts and the stop-state table."""

from __future__ import annotations

from typing import Any

import pytest

from harness import ConfigError
from harness.agent import Budget, CompletionResult, GuardLimits
from harness.agent._classify import ProviderError
from harness.agent._guards import (
    REPETITION_REMINDER,
    argument_repairs,
    fingerprint,
    fingerprint_decision,
    fingerprint_repeats,
    normalise_arguments,
    repetition_decision,
    repetition_run,
)
from harness.agent._loop import failure_stop
from harness.agent._messages import ToolCall
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry
from harness.agent._tools import ToolReply
from harness.runner import plan_cases, run_trace
from harness.scenario import load_scenario


def _turn(turn: str, *calls: tuple[str, dict[str, Any]]) -> AssistantEntry:
    built = tuple(ToolCall(f"c{i}", name, "", args) for i, (name, args) in enumerate(calls))
    return AssistantEntry(turn, f"a_{turn}", "", "tool_calls", built)


def _reply(turn: str, status: str, content: Any, call: str = "c0") -> ReplyEntry:
    return ReplyEntry(ToolReply(turn, call, status, content))  # type: ignore[arg-type]


def test_argument_order_and_spacing_do_not_make_calls_differ() -> None:
    assert normalise_arguments({"b": [1, 2], "a": "x"}) == '{"a":"x","b":[1,2]}'


def test_repetition_counts_identical_messages_in_a_row() -> None:
    same = ("read", {"path": "x"})
    history = [_turn("t1", ("read", {"path": "y"})), _turn("t2", same), _turn("t3", same)]
    assert repetition_run(history) == 2
    assert repetition_decision(history) == "remind"
    assert repetition_decision([*history, _turn("t4", same)]) == "stop"
    assert repetition_decision([*history, _turn("t4", ("read", {"path": "z"}))]) == "ok"


def test_asking_again_for_a_call_a_crash_kept_from_starting_is_no_repetition() -> None:
    # Seed 002 §19.1: TOOL_NOT_STARTED "若仍需要可重新调度" (it may be scheduled again).
    same = ("read", {"path": "x"})
    interrupted = ReplyEntry(ToolReply("t1", "c0", "not_started", {}, synthetic=True))
    history: list[Entry] = [_turn("t1", same), interrupted, _turn("t2", same)]
    assert repetition_decision(history) == "ok"
    assert repetition_decision([*history, _reply("t2", "ok", {}), _turn("t3", same)]) == "remind"


def test_the_model_is_not_told_a_call_that_never_started_ran_again() -> None:
    path = "scenarios/compaction/appended-during-compaction-kept.yaml"
    scenario = load_scenario(path)
    case = next(c for c in plan_cases(scenario, path)
                if c.crash is not None and c.crash.label == "session:fsync#10:after:unsynced_lost")
    outcome = run_trace(case, scenario).outcome  # the pager call never started
    assert outcome is not None
    asked = [m.tool_calls[0].name for m in outcome.transcript if m.role == "assistant"
             and m.tool_calls]
    assert asked == ["status_page", "pager", "pager", "notes"]
    assert REPETITION_REMINDER not in [m.text for m in outcome.transcript if m.role == "user"]


def test_a_call_refused_again_and_again_is_still_a_repetition() -> None:
    same = ("nope", {})
    history: list[Entry] = []
    for turn in ("t1", "t2", "t3"):
        history += [_turn(turn, same), _reply(turn, "not_started", {})]  # unknown tool
    assert repetition_decision(history[:-1]) == "stop"


def test_a_message_without_calls_is_never_a_repetition() -> None:
    answer = AssistantEntry("t2", "a2", "done", "stop", ())
    assert repetition_run([answer, answer]) == 0


def test_an_error_fingerprint_names_type_tool_and_arguments() -> None:
    reply = ToolReply("t", "c", "timeout", {"message": "slow"})
    assert fingerprint(reply, "send", {"to": "x"}) == 'timeout|send|{"to":"x"}'


def _failing_history(evidence: Any = None) -> list[Entry]:
    history: list[Entry] = []
    for n in (1, 2, 3):
        turn = f"t{n}"
        history += [_turn(turn, ("send", {"to": "x"})), _reply(turn, "error", {"error": "E"})]
        if evidence is not None and n == 2:
            history += [_reply(turn, "ok", evidence, call="c9")]
    return history


def test_the_same_error_without_new_evidence_reminds_then_stops() -> None:
    history = _failing_history()
    assert fingerprint_decision(history[:2], "t1") == "ok"
    assert fingerprint_decision(history[:4], "t2") == "remind"
    assert fingerprint_decision(history, "t3") == "stop"


def test_new_evidence_between_two_errors_resets_the_chain() -> None:
    history = _failing_history(evidence={"outbox": []})
    assert fingerprint_repeats(history, "t3") == {'E|send|{"to":"x"}': 1}


def test_argument_repairs_count_cut_and_unparseable_messages() -> None:
    cut = AssistantEntry("t1", "a1", "", "length", (), rejected=True)
    bad = ToolCall("c", "send", "{", {}, "not JSON")
    assert argument_repairs([cut, AssistantEntry("t2", "a2", "", "tool_calls", (bad,))]) == 2


def test_limits_are_checked_when_built() -> None:
    expected = r"^max_argument_repairs: got 0; expected an integer >= 1$"
    with pytest.raises(ConfigError, match=expected):
        GuardLimits(max_argument_repairs=0)


def _failed(error: ProviderError, reason: str = "not retryable") -> CompletionResult:
    return CompletionResult("failed", None, error, (), None, reason)


@pytest.mark.parametrize(
    ("error", "reason", "state", "infra"),
    [
        (ProviderError("http_status", "no", 401), "401 is not retryable", "blocked", False),
        (ProviderError("http_status", "no", 403), "403 is not retryable", "blocked", False),
        (
            ProviderError("http_status", "slow down", 429),
            "3 consecutive 429s",
            "usage_limited",
            False,
        ),
        (
            ProviderError("http_status", "x", 429, error_code="insufficient_quota"),
            "quota",
            "usage_limited",
            False,
        ),
        (
            ProviderError("http_status", "down", 503),
            "local cap of 6 attempts reached",
            "infra_paused",
            True,
        ),
        (
            ProviderError("stream_error", "Overloaded", error_type="overloaded_error"),
            "cap",
            "infra_paused",
            True,
        ),
        (ProviderError("idle_timeout", "no data"), "cap", "infra_paused", True),
        (ProviderError("http_status", "bad", 400), "400 is not retryable", "failed", False),
        (ProviderError("deadline_exceeded", "late"), "deadline", "budget_limited", False),
        (
            ProviderError("http_status", "down", 503),
            "waiting 30s would pass the deadline 50s",
            "budget_limited",
            True,
        ),
    ],
)
def test_failure_stop_maps_each_failure_to_its_stop_state(
    error: ProviderError, reason: str, state: str, infra: bool
) -> None:
    stop = failure_stop(_failed(error, reason), Budget(deadline=100.0, max_attempts=9), 10.0)
    assert (stop.state, stop.infra_failure) == (state, infra)


def test_an_exhausted_attempt_budget_is_budget_limited() -> None:
    budget = Budget(deadline=None, max_attempts=1, attempts_used=1)
    error = ProviderError("http_status", "down", 503)
    assert failure_stop(_failed(error), budget, 0.0).state == "budget_limited"
