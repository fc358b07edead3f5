"""Each checker passes on the correct minimal agent and FAILS on one deliberately broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mail_scenarios import mail_scenario
from minimal_agent import minimal_factory

from harness.checks import Verdict
from harness.runner import Case, CaseResult, CrashSpec, run_case
from harness.scenario import Scenario

SOURCE = Path("scenarios/mail.yaml")
UNKNOWN_AFTER_START = CrashSpec("journal:fsync#2", "after", "unsynced_lost")
BEFORE_START = CrashSpec("journal:fsync#1", "after", "unsynced_lost")


def run(scenario: Scenario, *flaws: str, crash: CrashSpec | None = None) -> CaseResult:
    return run_case(Case(scenario.name, SOURCE, 0, crash), scenario, minimal_factory(*flaws))


def verdict(result: CaseResult, invariant: str) -> Verdict:
    return next(v for v in result.verdicts if v.invariant == invariant)


def both(scenario: Scenario, flaw: str, invariant: str,
         crash: CrashSpec | None = None) -> tuple[Verdict, Verdict]:
    good = verdict(run(scenario, crash=crash), invariant)
    bad = verdict(run(scenario, flaw, crash=crash), invariant)
    return good, bad


def mail_with(**overrides: Any) -> Scenario:
    return mail_scenario(**overrides)


def test_i1_fails_when_nothing_is_made_durable_and_the_mail_is_sent_again() -> None:
    # A crash right after the result record's write: the correct agent fsynced
    # the start record and inspects; one that never fsyncs lost everything.
    crash = CrashSpec("journal:write#3", "after", "unsynced_lost")
    good, bad = both(mail_with(), "no_fsync", "I1", crash)
    assert good.status == "pass"
    assert bad.status == "fail"
    assert bad.message == "1 non-idempotent effect(s) applied more than once"
    assert any("ledger #2 mail" in line for line in bad.evidence)


def test_i2_fails_when_a_tool_reply_is_dropped() -> None:
    good, bad = both(mail_with(), "drop_reply", "I2")
    assert (good.status, bad.status) == ("pass", "fail")
    assert bad.message == "call call_t1_0 has no reply"


def test_i3_fails_when_recovery_blindly_reruns_an_unknown_call() -> None:
    good, bad = both(mail_with(), "rerun_unknown", "I3", UNKNOWN_AFTER_START)
    assert (good.status, bad.status) == ("pass", "fail")
    assert "ran in incarnation 2, asked for only in [1]" in bad.evidence[0]


def test_i3_is_unknown_when_no_outcome_was_unknown() -> None:
    assert verdict(run(mail_with()), "I3").status == "unknown"


FAILING_503 = [{"at": {"turn": 1, "attempt": n}, "kind": "http_error", "status": 503}
               for n in range(1, 7)]


def test_i4_fails_when_complete_is_reported_after_503s() -> None:
    scenario = mail_with(faults=FAILING_503, expect={"stop_state": "infra_paused"})
    good, bad = both(scenario, "complete_after_failure", "I4")
    assert (good.status, bad.status) == ("pass", "fail")
    assert bad.message.startswith("complete after an infrastructure failure")


def test_i4_fails_on_an_unexpected_stop_state() -> None:
    result = run(mail_with(expect={"stop_state": "blocked"}))
    assert verdict(result, "I4").message == "stopped 'complete', expected 'blocked'"


def test_i6_fails_when_usage_is_counted_twice() -> None:
    good, bad = both(mail_with(), "double_usage", "I6")
    assert (good.status, bad.status) == ("pass", "fail")
    assert "counted twice" in bad.message


TRUNCATED = [{"at": {"turn": 1}, "kind": "truncated_tool_arguments", "fraction": 0.5}]


def test_i7_fails_when_a_truncated_call_runs() -> None:
    scenario = mail_with(faults=TRUNCATED, expect={"stop_state": "complete"})
    good, bad = both(scenario, "run_truncated", "I7")
    assert (good.status, bad.status) == ("pass", "fail")
    assert bad.message == "a tool ran with arguments no complete answer sent"


def test_i7_leaves_alone_a_tool_run_from_the_models_text_when_no_call_was_cut() -> None:
    # smolagents' CodeAgent runs the code the model wrote: no answer carries a call of
    # the tool, and no cut call can have given it its arguments.
    from dataclasses import replace

    from harness.checks import check_i7

    trace = run(mail_with()).trace
    assert trace is not None
    assert trace.invocations
    from_text = replace(
        trace, requests=tuple(replace(r, calls=()) for r in trace.requests),
        invocations=tuple(replace(i, call_id=f"unmatched_{i.seq}") for i in trace.invocations))
    assert check_i7(from_text).status == "unknown"
    # A tool an answer did call, run under no call of it, is still judged.
    unmatched = replace(trace, invocations=tuple(
        replace(i, call_id=f"unmatched_{i.seq}") for i in trace.invocations))
    assert check_i7(unmatched).status == "fail"


RESET_MID_TEXT = [{"at": {"turn": 1}, "kind": "connection_reset", "after_events": 3}]


def test_i8_fails_when_partial_text_is_joined_to_the_retry() -> None:
    scenario = mail_with(faults=RESET_MID_TEXT)
    good, bad = both(scenario, "join_partial", "I8")
    assert (good.status, bad.status) == ("pass", "fail")
    assert "matches no complete answer" in bad.evidence[0]


SLOW_503 = [{"at": {"turn": 1, "attempt": n}, "kind": "http_error", "status": 503,
             "retry_after": 25} for n in range(1, 5)]


def test_i9_fails_when_retries_ignore_the_deadline() -> None:
    scenario = mail_with(faults=SLOW_503, budget={"deadline_seconds": 40},
                         expect={"stop_state": "infra_paused"})
    good, bad = both(scenario, "ignore_deadline", "I9")
    assert (good.status, bad.status) == ("pass", "fail")
    assert "after the 40s deadline" in bad.message


def test_i10_fails_when_a_dangling_call_is_repaired_as_done() -> None:
    # Crash before the start record: the mail never ran, but the flawed repair says ok.
    good, bad = both(mail_with(), "ok_without_effect", "I10", BEFORE_START)
    assert good.status == "pass"
    assert bad.status == "fail"
    assert bad.message == "an effect reported done is missing from the ledger"


def test_i11_fails_when_recover_is_not_idempotent() -> None:
    good, bad = both(mail_with(), "unstable_recover", "I11")
    assert (good.status, bad.status) == ("pass", "fail")
    assert bad.message.startswith("the second recover still repaired")


def test_side_effect_counts_are_exact() -> None:
    scenario = mail_with(expect={"stop_state": "complete", "side_effects": {"mail": 2}})
    check = verdict(run(scenario), "side_effects")
    assert (check.status, check.message) == ("fail", "mail: 1 effect(s), expected 2")
    assert check.evidence[-1].startswith("ledger #1 mail")


def test_an_invariant_without_a_checker_is_unknown_not_pass() -> None:
    scenario = mail_with(expect={"stop_state": "complete", "invariants": ["I5"]})
    # Then the checks every case gets (harness.checks._always); no timing fault was met.
    assert [(v.invariant, v.status) for v in run(scenario).verdicts] == [
        ("I5", "unknown"), ("outcome", "pass"), ("S1", "unknown"), ("S5", "unknown"),
        ("S5:429", "unknown"), ("S5:backoff", "unknown"), ("J7", "unknown"), ("L2", "unknown"),
        ("L2:results", "unknown"), ("L6", "unknown"), ("J3", "unknown")]


@pytest.mark.parametrize("flaw", ["no_fsync", "drop_reply", "double_usage"])
def test_a_broken_agent_fails_its_case(flaw: str) -> None:
    crash = CrashSpec("journal:write#3", "after", "unsynced_lost")
    assert not run(mail_with(), flaw, crash=crash).passed
