"""J6: after a disk error no side effect starts; an agent that drops log errors is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks import Verdict
from harness.mutants import MUTANTS
from harness.mutants._run import crash_spec
from harness.runner import Case, CaseResult, CrashSpec, run_case
from harness.scenario import load_scenario
from harness.trace import NeverStartedCall

SOURCE = Path("scenarios/crash/notes-and-mail-everywhere.yaml")
CRASH = crash_spec("session:fsync#2:after:eio_on_fsync")


def run(mutant: str | None = None) -> CaseResult:
    scenario = load_scenario(SOURCE)
    factory = next(m.factory for m in MUTANTS if m.name == mutant) if mutant else None
    return run_case(Case(scenario.name, SOURCE, scenario.seed, CRASH), scenario, factory)


def test_j6_passes_the_reference_and_fails_an_agent_that_shrugs_off_log_errors() -> None:
    good = next(v for v in run().verdicts if v.invariant == "J6")
    assert (good.status, good.message) == (
        "pass", "no side effect started after the disk error at session:fsync#2")
    bad = next(v for v in run("J6-shrugs-off-log-errors").verdicts if v.invariant == "J6")
    assert bad.status == "fail"
    assert bad.message.endswith("started after the disk error at session:fsync#2; no side "
                                "effect may run once the trusted log cannot be written")


def test_j6_says_nothing_about_a_case_without_a_disk_error() -> None:
    scenario = load_scenario(SOURCE)
    result = run_case(Case(scenario.name, SOURCE, scenario.seed), scenario)
    assert "J6" not in [v.invariant for v in result.verdicts]


SECRETS = Path("scenarios/crash/secret-arguments-stay-out.yaml")


def j3(crash: str | None = None, mutant: str | None = None) -> Verdict:
    scenario = load_scenario(SECRETS)
    factory = next(m.factory for m in MUTANTS if m.name == mutant) if mutant else None
    case = Case(scenario.name, SECRETS, scenario.seed, crash_spec(crash) if crash else None)
    return next(v for v in run_case(case, scenario, factory).verdicts if v.invariant == "J3")


def test_j3_passes_the_reference_agent_whose_logs_redact_secret_arguments() -> None:
    verdict = j3("after_tool:mail#1:at:process_killed")
    assert (verdict.status, verdict.message) == (
        "pass", "mail.api_key, portal.password, portal.pin in none of the agent's 2 file(s)")


def test_j3_fails_a_raw_argument_log_with_path_and_offset_never_the_secret() -> None:
    verdict = j3(mutant="J3-raw-arguments-in-a-log")
    assert verdict.status == "fail"
    assert verdict.message == ("portal.password found in /state/tool-calls.log at byte 101; a "
                               "durable file must never hold a secret argument")
    shown = " ".join((verdict.message, *verdict.evidence))
    for secret in ("correct-horse-battery-staple", "4711-0815", "sk-live-7f3a9c"):
        assert secret not in shown
    assert len(verdict.evidence) == 3


def test_j3_is_unknown_when_nothing_is_secret() -> None:
    scenario = load_scenario(SOURCE)
    result = run_case(Case(scenario.name, SOURCE, scenario.seed), scenario)
    verdict = next(v for v in result.verdicts if v.invariant == "J3")
    assert (verdict.status, verdict.message) == (
        "unknown", "nothing secret to look for: the scenario marks no argument secret and no "
        "call passed a value under a secret-looking key")


def _verdict(result: CaseResult, invariant: str) -> tuple[str, str]:
    found = next(v for v in result.verdicts if v.invariant == invariant)
    return found.status, found.message


def _run_at(label: str, mutant: str | None = None) -> CaseResult:
    scenario = load_scenario(SOURCE)
    factory = next(m.factory for m in MUTANTS if m.name == mutant) if mutant else None
    return run_case(Case(scenario.name, SOURCE, scenario.seed, crash_spec(label)), scenario,
                    factory)


def test_after_a_log_write_failure_the_stop_state_is_exactly_the_declared_one() -> None:
    label = "session:fsync#13:after:eio_on_fsync"  # the stop record, after the final answer
    assert _verdict(_run_at(label), "I4") == (
        "pass", "stopped 'infra_paused' after the disk error at session:fsync#13 "
                "(expected 'infra_paused')")
    bad = _run_at(label, "J6-log-failure-after-answer-is-complete")
    assert _verdict(bad, "I4") == (
        "fail", "stopped 'complete' after the trusted log failed a write at session:fsync#13, "
                "expected 'infra_paused'")


def test_after_a_log_write_failure_the_ledger_stays_as_it_stood() -> None:
    assert _verdict(run(), "side_effects") == ("pass", "mail=0, notes=0")
    status, message = _verdict(run("J6-shrugs-off-log-errors"), "side_effects")
    assert status == "fail"
    assert message.endswith("effect(s) after the disk error at session:fsync#2, expected none "
                            "(the trusted log could not record them)")


# J4: a call whose journal, as the crash left it, ends at its intent never started.
NEVER_STARTED = crash_spec("journal:write#2:before:unsynced_lost")


def j4(crash: CrashSpec | None, mutant: str | None = None) -> list[Verdict]:
    scenario = load_scenario(SOURCE)
    factory = next(m.factory for m in MUTANTS if m.name == mutant) if mutant else None
    result = run_case(Case(scenario.name, SOURCE, scenario.seed, crash), scenario, factory)
    return [v for v in result.verdicts if v.invariant == "J4"]


def test_j4_passes_the_reference_agent_that_reports_the_call_not_started() -> None:
    [verdict] = j4(NEVER_STARTED)
    assert (verdict.status, verdict.message) == (
        "pass", "1 call(s) the journal proves never started, none reported unknown")
    assert verdict.evidence == ("notes call call_t1_0: its last durable record was intent; "
                                "replied not_started",)


def test_j4_fails_an_agent_that_reports_a_call_that_never_started_unknown() -> None:
    # Every other check passes it: the model inspects, finds nothing, sends once.
    [verdict] = j4(NEVER_STARTED, "J4-not-started-as-unknown")
    assert verdict.status == "fail"
    assert verdict.message.startswith("notes call call_t1_0 never started (the journal the "
                                      "crash left ends at its intent")


def test_j4_says_nothing_where_no_crash_left_a_call_at_its_intent() -> None:
    # Its start record durable: unknown is right, and there is no evidence (nor digest change).
    assert j4(crash_spec("journal:fsync#2:after:unsynced_lost")) == []
    assert j4(None) == []


@pytest.mark.parametrize("crash", ["journal:write#2:before:unsynced_lost",
                                   "journal:fsync#2:before:unsynced_lost"])
def test_a_case_explored_from_the_recording_holds_the_evidence_a_replayed_one_does(
        crash: str) -> None:
    # The second crash leaves the first's files: explored, it shares that case's restart.
    from harness.runner._case import traced
    from harness.runner._run import default_agent_factory

    scenario = load_scenario(SOURCE)
    case = Case(scenario.name, SOURCE, scenario.seed, crash_spec(crash))
    explored, how = traced(case, scenario, default_agent_factory, False)
    replayed, _ = traced(case, scenario, default_agent_factory, True)
    assert how != "replayed"
    assert explored.extra.never_started == (NeverStartedCall(2, "call_t1_0", "notes"),)
    assert explored.digest == replayed.digest
