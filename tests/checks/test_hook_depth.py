"""L3:hook: an after-tool hook never fires within its own run past its depth bound
(seed 002 §19.1 ③, 钩子死循环防护), judged from the world's record of what ran."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._hooks import check_hook_depth
from harness.checks._invariants import check_i7
from harness.mutants import MUTANTS
from harness.mutants._run import run_kill
from harness.trace import Trace

SCENARIO = "scenarios/tools/hook-never-fires-within-itself.yaml"
PAST_DEPTH = next(m for m in MUTANTS if m.name == "L3-hook-fires-past-its-depth")


@pytest.fixture(scope="module")
def hooked() -> Trace:
    return reference_trace(SCENARIO, "L3:hook")


def test_the_reference_agent_fires_the_hook_to_its_bound_and_no_deeper(hooked: Trace) -> None:
    verdict = check_hook_depth(hooked)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    # Each call the model asked for fires status, which fires status once more (depth 2).
    assert [i.call_id for i in hooked.invocations] == [
        "call_t1_0", "hook_call_t1_0_1", "hook_call_t1_0_2",
        "call_t2_0", "hook_call_t2_0_1", "hook_call_t2_0_2"]
    i7 = check_i7(hooked)
    assert i7.status != "fail", i7


def test_an_agent_whose_hook_fires_past_its_depth_fails() -> None:
    result = run_kill(PAST_DEPTH.kills[0], PAST_DEPTH.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "L3:hook" in failed, result.failed_verdicts
    assert "ran 3 times in a row after 1 call(s); at most 2" in failed["L3:hook"].message
    assert "hook_call_t1_0_3 fired within its own hook" in failed["L3:hook"].message


def test_a_hook_run_by_nothing_the_model_asked_counts_against_the_bound(hooked: Trace) -> None:
    # A hook that keeps firing itself without end: a third run after the first call.
    first = hooked.invocations[2]
    again = replace(first, call_id="hook_call_t1_0_3", seq=first.seq)
    later = tuple(replace(i, seq=i.seq + 1) for i in hooked.invocations[3:])
    verdict = check_hook_depth(replace(hooked, invocations=(*hooked.invocations[:3], again,
                                                            *later)))
    assert verdict is not None
    assert verdict.status == "fail"


def test_a_lower_bound_fails_the_same_runs(hooked: Trace) -> None:
    verdict = check_hook_depth(replace(hooked, extra=replace(hooked.extra, hook_max_depth=1)))
    assert verdict is not None
    assert verdict.status == "fail"  # depth 2 under a bound of 1


def test_a_tool_the_model_asked_for_is_no_hook_run(hooked: Trace) -> None:
    # Were save the hook's tool, its runs carry the ids the model sent: none is a hook run.
    verdict = check_hook_depth(replace(hooked, extra=replace(hooked.extra, hook_tool="save")))
    assert verdict is not None
    assert verdict.status == "unknown", verdict


def test_no_verdict_without_a_hook_and_unknown_for_a_plain_agent_or_no_run(
        hooked: Trace) -> None:
    assert check_hook_depth(replace(hooked, extra=replace(hooked.extra, hook_tool=None,
                                                          hook_max_depth=None))) is None
    plain = check_hook_depth(replace(hooked, extra=replace(hooked.extra, agent="plain")))
    assert plain is not None
    assert plain.status == "unknown"
    quiet = check_hook_depth(replace(hooked, invocations=tuple(
        i for i in hooked.invocations if not i.call_id.startswith("hook_"))))
    assert quiet is not None
    assert quiet.status == "unknown"
