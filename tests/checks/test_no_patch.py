"""train:no-patch: a session collected as training data never sends a placeholder reply; a
cut call or a call a crash left unsettled stops the run (seed 002 §19.1 ①, truncation
level 4; 训练数据收集模式则拒绝修补)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._invariants import check_i2, check_i4
from harness.checks._training import check_no_patch
from harness.checks._verdict import Verdict
from harness.mutants import MUTANTS, Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import SentReply, Trace

SCENARIO = "scenarios/streaming/training-session-never-patched.yaml"
CUT = "scenarios/streaming/training-cut-call-stops.yaml"
PATCHED = next(m for m in MUTANTS if m.name == "S6-training-data-patched")
UNKNOWN_MAIL = "journal:fsync#3:before:unsynced_lost"  # the mail ran; its result never saved


@pytest.fixture(scope="module")
def cut() -> Trace:
    return reference_trace(CUT, "train:no-patch")


@pytest.fixture(scope="module")
def crashed() -> Trace:
    result = run_kill(Kill(SCENARIO, "train:no-patch", UNKNOWN_MAIL), reference())
    assert result.passed, result.failed_verdicts
    assert result.trace is not None
    return result.trace


def test_the_reference_agent_stops_at_a_cut_call_instead_of_answering_it(cut: Trace) -> None:
    verdict = check_no_patch(cut)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "1 never answered" in verdict.message
    assert cut.outcome is not None
    assert cut.outcome.stop_state == "blocked"
    assert "truncation level 4" in cut.outcome.reason
    # The cut mail call never ran, and no request answered it.
    assert cut.invocations == ()
    assert [(r.turn, r.finish) for r in cut.requests] == [(1, "length")]


def test_a_call_a_crash_left_unsettled_stops_the_run_and_is_named(crashed: Trace) -> None:
    verdict = check_no_patch(crashed)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert crashed.outcome is not None
    assert crashed.outcome.stop_state == "blocked"
    assert crashed.outcome.reason.startswith(
        "call call_t1_0 of mail: its outcome is unknown after the restart.")
    # No request of the restarted incarnation: nothing reached the model after the crash.
    assert {r.incarnation for r in crashed.requests} == {1}
    # Its last call stays unanswered: I2 takes that from a run that stopped short, and
    # I4 the stop, though the scenario ends 'complete' when nothing is in doubt.
    assert check_i2(crashed).status == "pass"
    i4 = check_i4(crashed)
    assert i4.status == "pass", i4
    assert i4.message.startswith("stopped 'blocked' rather than patch call call_t1_0 (mail,")


def _failed_by_the_patching_agent(kill: Kill) -> dict[str, Verdict]:
    result = run_kill(kill, PATCHED.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "train:no-patch" in failed, result.failed_verdicts
    return failed


def test_an_agent_that_patches_a_cut_call_fails() -> None:
    failed = _failed_by_the_patching_agent(PATCHED.kills[0])
    assert failed["train:no-patch"].message.startswith(
        "1 call(s) put in doubt were patched with a placeholder reply: request #2 answered "
        "call call_t1_0 (mail, cut in the answer to request #1) with a reply no tool run "
        "returned: ")
    assert set(failed) == {"train:no-patch", "I4"}  # and it went on to 'complete'


def test_an_agent_that_patches_a_call_a_crash_left_unsettled_fails() -> None:
    lines = _failed_by_the_patching_agent(PATCHED.kills[1])["train:no-patch"].evidence
    assert any("call call_t1_0 (mail, whose incarnation 1 crashed before it sent the reply)"
               in line and "TOOL_OUTCOME_UNKNOWN" in line for line in lines), lines


def test_a_reply_carrying_the_result_a_run_returned_passes(crashed: Trace) -> None:
    # A restart that ran the call again and sent what it returned patched nothing.
    mail = crashed.invocations[0]
    assert mail.result is not None
    wrapped = f'{{"status": "ok", "result": {mail.result}}}'
    late = replace(crashed.requests[-1], index=99, incarnation=2,
                   started_at=(mail.ended_at or 0) + 1,
                   replies=(SentReply(mail.call_id, wrapped),))
    verdict = check_no_patch(replace(crashed, requests=(*crashed.requests, late)))
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "1 answered with what a tool run returned" in verdict.message
    made_up = replace(late, replies=(SentReply(mail.call_id, '{"error": "unknown"}'),))
    verdict = check_no_patch(replace(crashed, requests=(*crashed.requests, made_up)))
    assert verdict is not None
    assert verdict.status == "fail"
    assert "request #99 answered call call_t1_0" in verdict.message


def test_no_doubt_no_verdict_and_other_modes(cut: Trace) -> None:
    whole = tuple(replace(r, truncated=False, finish="tool_calls") for r in cut.requests)
    verdict = check_no_patch(replace(cut, requests=whole))
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "nothing tempted a placeholder reply" in verdict.message
    product = replace(cut, extra=replace(cut.extra, training_data=None))
    assert check_no_patch(product) is None
    plain = check_no_patch(replace(cut, extra=replace(cut.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"


def test_a_product_session_keeps_its_header_bytes() -> None:
    from harness.agent._loop import _task_json
    from harness.ports import Task

    assert "trainingData" not in _task_json(Task(prompt="p"))
    assert _task_json(Task(prompt="p", training_data=True))["trainingData"] is True


def test_a_training_run_blocked_with_nothing_in_doubt_fails_i4(crashed: Trace) -> None:
    # Without the crash, no call was in doubt: stopping was no level 4, only a stop.
    calm = tuple(replace(i, crashed_at=None) for i in crashed.incarnations)
    verdict = check_i4(replace(crashed, incarnations=calm))
    assert verdict.status == "fail"
    assert verdict.message == "stopped 'blocked', expected 'complete'"
