"""env:children: a child process the world starts for the agent gets a cleaned environment
(seed 000 §5), judged from the names the world saw it receive."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from reference_traces import reference_trace

from harness.checks._children import check_child_environments
from harness.intercept import FAKE_API_KEY
from harness.mutants import MUTANTS, Kill
from harness.mutants._run import run_kill
from harness.runner._child_env import unwanted_variables
from harness.trace import Trace

SCENARIO = "scenarios/tools/children-get-a-clean-environment.yaml"
WHOLE_ENVIRON = next(m for m in MUTANTS if m.name == "ENV-whole-environ-to-children")


@pytest.fixture(scope="module")
def clean() -> Trace:
    return reference_trace(SCENARIO, "env:children")


def test_the_reference_agent_hands_its_child_a_cleaned_environment(clean: Trace) -> None:
    verdict = check_child_environments(clean)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    children = clean.extra.child_environments
    assert children is not None
    assert [(c.tool, c.handed, c.unwanted) for c in children] == [("build", True, ())]


def test_handing_the_whole_os_environ_fails_naming_the_key_but_not_its_value() -> None:
    result = run_kill(Kill(SCENARIO, "env:children"), WHOLE_ENVIRON.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert "env:children" in failed, result.failed_verdicts
    assert "OPENAI_API_KEY: a model provider variable" in failed["env:children"].message
    assert result.trace is not None
    assert FAKE_API_KEY not in result.trace.canonical_json()


def test_without_a_child_or_a_subprocess_tool_there_is_nothing_to_judge(clean: Trace) -> None:
    none_started = replace(clean, extra=replace(clean.extra, child_environments=()))
    verdict = check_child_environments(none_started)
    assert verdict is not None
    assert verdict.status == "unknown"
    no_tool = replace(clean, extra=replace(clean.extra, child_environments=None))
    assert check_child_environments(no_tool) is None


def test_a_plain_agent_that_handed_nothing_is_unknown(clean: Trace) -> None:
    children = clean.extra.child_environments
    assert children is not None
    unseen = tuple(replace(c, handed=False) for c in children)
    plain = replace(clean, extra=replace(clean.extra, agent="plain", child_environments=unseen))
    verdict = check_child_environments(plain)
    assert verdict is not None
    assert verdict.status == "unknown"
    assert "cannot be seen" in verdict.message
    # An agent on the ports that handed nothing got the world's clean environment.
    ported = replace(clean, extra=replace(clean.extra, child_environments=unseen))
    verdict = check_child_environments(ported)
    assert verdict is not None
    assert verdict.status == "pass"


def test_what_a_child_should_not_have() -> None:
    found = unwanted_variables({
        "PATH": "/bin", "LANG": "C.UTF-8", "PYTHONPATH": "/src",
        "ANTHROPIC_BASE_URL": "http://fake", "MY_KEY_COPY": FAKE_API_KEY,
        "HARNESS_PASS_ENV": "X", "GITHUB_TOKEN": "ghp_x", "BUILD_SIGNING_TOKEN": "s",
    }, declared=("BUILD_SIGNING_TOKEN",))
    assert [line.partition(":")[0] for line in found] == [
        "ANTHROPIC_BASE_URL", "GITHUB_TOKEN", "HARNESS_PASS_ENV", "MY_KEY_COPY"]


def test_the_record_keeps_no_value(clean: Trace) -> None:
    said = json.loads(clean.canonical_json())["extra"]["child_environments"]
    assert said == [{"seq": 1, "tool": "build", "call_id": said[0]["call_id"],
                     "incarnation": 1, "handed": True, "unwanted": []}]


JOB_SCENARIO = "scenarios/jobs/job-gets-a-clean-environment.yaml"
JOBS_WHOLE_ENVIRON = next(m for m in MUTANTS if m.name == "ENV-whole-environ-to-jobs")


def test_the_reference_agent_hands_its_background_job_a_cleaned_environment() -> None:
    trace = reference_trace(JOB_SCENARIO, "env:children")
    verdict = check_child_environments(trace)
    assert verdict is not None
    assert verdict.status == "pass", verdict
    children = trace.extra.child_environments
    assert children is not None
    assert [(c.seq, c.tool, c.handed, c.unwanted) for c in children] == [
        (1, "build", True, ())]
    assert [j.tool for j in trace.jobs] == ["build"]


@pytest.mark.parametrize("kill", JOBS_WHOLE_ENVIRON.kills, ids=lambda k: k.crash or "no crash")
def test_a_job_handed_the_whole_os_environ_fails_naming_the_key(kill: Kill) -> None:
    result = run_kill(kill, JOBS_WHOLE_ENVIRON.factory)
    failed = {v.invariant: v for v in result.failed_verdicts}
    assert set(failed) == {"env:children"}, result.failed_verdicts
    assert "OPENAI_API_KEY: a model provider variable" in failed["env:children"].message
    assert " of build (incarnation " in failed["env:children"].message
    assert result.trace is not None
    assert FAKE_API_KEY not in result.trace.canonical_json()


def test_a_job_that_declares_no_environment_is_not_judged() -> None:
    # Every job scenario shipped before the declaration keeps its trace: nothing recorded.
    trace = reference_trace("scenarios/jobs/build-survives-a-crash.yaml", "env:children")
    assert trace.extra.child_environments is None
    assert check_child_environments(trace) is None
