"""retry:backup: a model whose route stays down gives way to the declared backup, and a
bad request never does (seed 002 §19.2: 同请求退避重试或切备用线路; 把确定性失败当瞬态故障)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from reference_traces import reference_trace

from harness.checks._backup import check_backup
from harness.mutants import MUTANTS, Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.trace import Trace

TAKES_OVER = "scenarios/streaming/backup-model-takes-over.yaml"
BAD_REQUEST = "scenarios/streaming/backup-model-not-for-a-bad-request.yaml"
NO_BACKUP = next(m for m in MUTANTS if m.name == "S5-no-backup-model")
ON_4XX = next(m for m in MUTANTS if m.name == "S5-backup-on-4xx")


@pytest.fixture(scope="module")
def switched() -> Trace:
    return reference_trace(TAKES_OVER, "retry:backup")


def test_the_reference_agent_switches_to_the_backup(switched: Trace) -> None:
    verdict = check_backup(switched)
    assert verdict is not None
    assert (verdict.status, verdict.message) == (
        "pass", "after 3 route failure(s) of 'fake-sonnet', 2 request(s) named the backup "
        "model 'fake-haiku', none after a client error")


def test_an_agent_that_never_switches_fails() -> None:
    result = run_kill(NO_BACKUP.kills[0], NO_BACKUP.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert failed["retry:backup"].message == (
        "the run ended infra_paused on 6 failure(s) of the primary model 'fake-sonnet' (the "
        "last request #6: outage 529) without one request naming the backup model "
        "'fake-haiku'")


def test_an_agent_that_switches_after_a_client_error_fails() -> None:
    result = run_kill(ON_4XX.kills[0], ON_4XX.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert failed["retry:backup"].message == (
        "request #2 named the backup model 'fake-gpt-mini' right after request #1 on "
        "'fake-gpt' failed with 400: another model does not fix a bad request")


def test_no_declared_backup_is_not_judged(switched: Trace) -> None:
    bare = replace(switched, extra=replace(switched.extra, backup_model=None,
                                           primary_model=None))
    assert check_backup(bare) is None


def test_a_primary_that_never_failed_on_its_route_is_unknown() -> None:
    verdict = check_backup(reference_trace(BAD_REQUEST, "retry:backup"))
    assert verdict is not None
    assert (verdict.status, verdict.message) == (
        "unknown", "the primary model 'fake-gpt' never failed on its route (5xx, 529, a "
        "stall, a cut stream)")


def test_a_primary_that_recovered_within_the_retries_is_unknown(tmp_path: Path) -> None:
    text = Path(TAKES_OVER).read_text(encoding="utf-8")
    once = text.replace("  outages: [{start_seconds: 0, end_seconds: 100000, answer: 529, "
                        "model: fake-sonnet}]\n", "")
    once += "faults:\n  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 503}\n"
    path = tmp_path / "recovers.yaml"
    path.write_text(once.replace("points: all", "points: none"), encoding="utf-8")

    result = run_kill(Kill(str(path), "retry:backup"), reference())

    assert result.trace is not None
    verdict = check_backup(result.trace)
    assert verdict is not None
    assert (verdict.status, verdict.message) == (
        "unknown", "the primary model 'fake-sonnet' recovered within the agent's retries: no "
        "switch was needed")


def test_a_fallback_model_of_the_agents_own_naming_counts_as_the_switch(
        switched: Trace) -> None:
    # An agent of its own names its fallback itself (a framework's fallback model): any
    # model but the primary stands in for it, as the fake serves any model named.
    own = replace(switched, requests=tuple(
        replace(r, model="gpt-4o-mini") if r.model == "fake-haiku" else r
        for r in switched.requests))
    verdict = check_backup(own)
    assert verdict is not None
    assert (verdict.status, verdict.message) == (
        "pass", "after 3 route failure(s) of 'fake-sonnet', 2 request(s) named the fallback "
        "model 'gpt-4o-mini' (the declared backup: 'fake-haiku'), none after a client error")
