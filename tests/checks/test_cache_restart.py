"""cache:restart: a restarted agent rebuilds the prefix it cached (seed 002 §19.7)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.checks._cache import check_cache_after_restart
from harness.checks._verdict import Verdict
from harness.mutants import MUTANTS, Kill
from harness.mutants._build import reference
from harness.mutants._run import run_kill
from harness.ports import AgentFactory
from harness.trace import RequestRecord, Trace

SCENARIO = "scenarios/crash/restored-prefix-hits-openai.yaml"
RESPONSES = "scenarios/crash/restored-prefix-hits-openai-responses.yaml"
GEMINI = "scenarios/crash/restored-prefix-hits-gemini.yaml"
ANTHROPIC = "scenarios/crash/restored-prefix-hits-anthropic.yaml"
# A crash after the notes call, once the report's long prefix is cached.
MID_RUN = "journal:fsync#5:after:unsynced_lost"


@pytest.fixture(scope="module")
def restarted() -> Trace:
    result = run_kill(Kill(SCENARIO, "cache:restart", MID_RUN), reference())
    assert result.trace is not None
    return result.trace


def _first_after_restart(trace: Trace) -> RequestRecord:
    return next(r for r in trace.requests if r.incarnation == 2 and r.cache is not None)


def _with_miss(trace: Trace, miss: str | None) -> Trace:
    judged = _first_after_restart(trace)
    assert judged.cache is not None
    changed = replace(judged, cache=replace(judged.cache, miss=miss))
    return replace(trace, requests=tuple(changed if r is judged else r for r in trace.requests))


def test_the_reference_agent_rebuilds_the_cached_prefix_after_a_crash(restarted: Trace) -> None:
    verdict = check_cache_after_restart(restarted)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    assert "1 hit" in verdict.message
    first = _first_after_restart(restarted)
    assert first.cache is not None
    assert first.cache.miss is None


@pytest.mark.parametrize("miss", ["prefix_changed:history", "prefix_changed:tools", "cold",
                                  "no_breakpoint"])
def test_a_restored_request_whose_prefix_changed_fails(restarted: Trace, miss: str) -> None:
    verdict = check_cache_after_restart(_with_miss(restarted, miss))
    assert verdict is not None
    assert verdict.status == "fail"
    assert miss in verdict.evidence[0]


@pytest.mark.parametrize("miss", ["ttl_expired", "server_miss"])
def test_a_miss_on_the_servers_side_is_not_the_agents(restarted: Trace, miss: str) -> None:
    verdict = check_cache_after_restart(_with_miss(restarted, miss))
    assert verdict is not None
    assert verdict.status == "pass"
    assert "1 missed on the server's side" in verdict.message


def test_a_restored_request_below_the_minimum_leaves_the_next_one_to_judge(
        restarted: Trace) -> None:
    # The next request of the same incarnation is the one judged: here it changed.
    later = [r for r in restarted.requests if r.incarnation == 2 and r.cache is not None]
    assert len(later) >= 2
    first, second = later[0], later[1]
    assert first.cache is not None
    assert second.cache is not None
    changed = {first.index: replace(first, cache=replace(first.cache, miss="below_min")),
               second.index: replace(second, cache=replace(second.cache, miss="cold"))}
    trace = replace(restarted, requests=tuple(changed.get(r.index, r)
                                              for r in restarted.requests))
    verdict = check_cache_after_restart(trace)
    assert verdict is not None
    assert verdict.status == "fail"
    assert f"request #{second.index}" in verdict.evidence[0]


def test_a_crash_before_anything_was_cached_is_unknown() -> None:
    result = run_kill(Kill(SCENARIO, "cache:restart", "session:fsync#2:after:unsynced_lost"),
                      reference())
    verdicts = {v.invariant: v for v in result.verdicts}
    assert verdicts["cache:restart"].status == "unknown"


def test_a_run_without_a_restart_or_without_a_cache_gets_no_verdict(restarted: Trace) -> None:
    assert check_cache_after_restart(replace(restarted, final_incarnation=1)) is None
    uncached = tuple(replace(r, cache=None) for r in restarted.requests)
    assert check_cache_after_restart(replace(restarted, requests=uncached)) is None
    assert Path(SCENARIO).exists()


def _mutant(name: str) -> AgentFactory:
    return next(m.factory for m in MUTANTS if m.name == name)


def _cache_verdict(scenario: str, factory: AgentFactory) -> Verdict:
    result = run_kill(Kill(scenario, "cache:restart", MID_RUN), factory)
    return next(v for v in result.verdicts if v.invariant == "cache:restart")


@pytest.mark.parametrize("scenario", [RESPONSES, GEMINI, ANTHROPIC])
def test_the_reference_agent_rebuilds_the_cached_prefix_in_each_dialect(scenario: str) -> None:
    verdict = _cache_verdict(scenario, reference())
    assert verdict.status == "pass", verdict
    assert "1 hit" in verdict.message


@pytest.mark.parametrize("scenario", [SCENARIO, RESPONSES, GEMINI, ANTHROPIC])
def test_a_system_prompt_stamped_at_each_start_fails(scenario: str) -> None:
    verdict = _cache_verdict(scenario, _mutant("CACHE-system-prompt-stamped-per-process"))
    assert verdict.status == "fail"
    assert verdict.evidence[0].endswith("prefix_changed:system")


def test_a_history_rebuilt_shorter_and_different_fails_though_too_short_to_cache() -> None:
    # Its text dropped, the restored history falls under the cacheable minimum: the
    # change, not the length, is what the world's cache names, and what fails.
    verdict = _cache_verdict(SCENARIO, _mutant("CACHE-text-dropped-after-restart"))
    assert verdict.status == "fail"
    assert verdict.evidence[0].endswith("prefix_changed:history")


def test_the_anthropic_restart_reads_what_the_crashed_process_wrote_at_its_breakpoint() -> None:
    # Anthropic caches only what the request marks (the scenario's cache_breakpoints):
    # the restarted agent's first request reaches the crashed process's last mark.
    trace = run_kill(Kill(ANTHROPIC, "cache:restart", MID_RUN), reference()).trace
    assert trace is not None
    first = _first_after_restart(trace)
    assert first.cache is not None
    assert first.cache.miss is None
    assert first.usage is not None
    written_before = sum(r.cache.write_5m_tokens for r in trace.requests
                         if r.incarnation == 1 and r.cache is not None)
    assert 0 < first.usage.cache_read_tokens <= written_before
    assert first.usage.cache_write_tokens == first.cache.write_5m_tokens


@pytest.mark.parametrize(("mutant", "miss"), [
    ("CACHE-tool-order-per-process", "prefix_changed:tools"),
    ("CACHE-text-dropped-after-restart", "prefix_changed:history"),
    ("CACHE-key-per-process", "cold"),
    ("CACHE-marks-dropped-after-restart", "no_breakpoint"),
])
def test_an_anthropic_restart_that_changes_the_prefix_fails(mutant: str, miss: str) -> None:
    verdict = _cache_verdict(ANTHROPIC, _mutant(mutant))
    assert verdict.status == "fail"
    assert verdict.evidence[0].endswith(miss)


def test_an_anthropic_tool_input_rebuilt_with_sorted_keys_fails() -> None:
    # The mail call's two keys come back sorted; a crash once a request carried it.
    result = run_kill(Kill(ANTHROPIC, "cache:restart", "session:fsync#23:before:unsynced_lost"),
                      _mutant("CACHE-history-rerendered-after-restart"))
    verdict = next(v for v in result.verdicts if v.invariant == "cache:restart")
    assert verdict.status == "fail"
    assert verdict.evidence[0].endswith("prefix_changed:history")
