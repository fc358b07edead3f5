"""JOBS, JOBS:wakeup and CANCEL: what they say of agents without the optional ports, and
of broken cancel and attempt handling (seed 002 §19.4)."""

from __future__ import annotations

from minimal_agent import minimal_factory

from harness.agent import ReferenceAgent
from harness.agent._cancel import CancelRouter
from harness.checks import Verdict
from harness.ports import CancelAck, CancelRequest
from harness.runner import plan_cases, run_case
from harness.scenario import load_scenario
from harness.trace import trace_from_json

BUILD = "scenarios/jobs/build-survives-a-crash.yaml"
CANCEL_CALL = "scenarios/cancel/cancel-the-build-call.yaml"
ATTEMPT = "scenarios/cancel/attempt-then-turn.yaml"


def verdict(path: str, check: str, factory: object = None, label: str = "none") -> Verdict:
    scenario = load_scenario(path)
    case = next(c for c in plan_cases(scenario, path)
                if (c.crash.label if c.crash else "none") == label)
    result = run_case(case, scenario, factory)  # type: ignore[arg-type]
    found = [v for v in result.verdicts if v.invariant == check]
    assert found, [v.invariant for v in result.verdicts]
    return found[0]


def test_an_agent_without_the_job_port_is_unknown_with_the_reason() -> None:
    found = verdict(BUILD, "JOBS", minimal_factory())
    assert found.status == "unknown"
    assert "no job reached the job runner" in found.message


def test_an_agent_without_a_cancel_hook_is_unknown_with_the_reason() -> None:
    found = verdict(CANCEL_CALL, "CANCEL", minimal_factory())
    assert (found.status, found.message.split(",")[0]) == \
        ("unknown", "the agent offers no cancel(request) hook")


class _ClaimsWithoutActing:
    """A cancel hook that answers "cancelled" for an attempt and drops nothing."""

    def __init__(self, agent: ReferenceAgent) -> None:
        self._agent = agent

    async def recover(self) -> object:
        return await self._agent.recover()

    async def run(self, task: object) -> object:
        return await self._agent.run(task)  # type: ignore[arg-type]

    def cancel(self, request: CancelRequest) -> CancelAck:
        if request.target != "attempt":
            return self._agent.cancel(request)
        self.seen = getattr(self, "seen", 0) + 1
        return CancelAck("cancelled" if self.seen == 1 else "already_cancelled", "noted")


def test_an_attempt_cancel_that_drops_nothing_fails() -> None:
    found = verdict(ATTEMPT, "CANCEL", lambda ports: _ClaimsWithoutActing(ReferenceAgent(ports)))
    assert found.status == "fail"
    assert "was in flight when its attempt was cancelled at 3s" in found.message


def test_the_reference_agent_passes_every_target_it_offers() -> None:
    assert verdict(ATTEMPT, "CANCEL").status == "pass"
    assert verdict(CANCEL_CALL, "CANCEL").status == "pass"


def test_the_router_acts_once_per_request_and_names_missing_targets() -> None:
    acted: list[str] = []
    router = CancelRouter()
    router.register("job", lambda request: acted.append(request.ref or "") or
                    CancelAck("cancelled"))
    request = CancelRequest("c-1", "job", "s", "job-1")
    assert [router.cancel(request).status for _ in range(2)] == ["cancelled", "already_cancelled"]
    again = CancelRequest("c-2", "job", "s", "job-1")
    assert router.cancel(again).status == "already_cancelled"
    assert acted == ["job-1"]
    assert router.cancel(CancelRequest("c-3", "goal", "s")).status == "unsupported"


def test_a_run_only_a_cancel_could_end_is_unknown_for_an_agent_without_the_hook() -> None:
    found = verdict(ATTEMPT, "I4", minimal_factory())
    assert found.status == "unknown"
    assert "cancel hook, which it does not offer" in found.message


STOPPING = "scenarios/cancel/stopping-job-after-restart.yaml"
AFTER_TERM = "after_signal:build#1:at:unsynced_lost"


def test_a_job_left_stopping_by_a_crash_is_killed_after_the_restart() -> None:
    # The crash comes right after the build's TERM, which it ignores: the reference agent
    # finds its stopping record and goes on, TERM→KILL.
    found = verdict(STOPPING, "JOBS", label=AFTER_TERM)
    assert found.status == "pass", found
    assert any("signals TERM@12s, TERM@12s, KILL@17s" in line for line in found.evidence)


def test_an_agent_that_waits_for_its_stopping_job_fails_jobs() -> None:
    from harness.mutants._jobs import waits_for_stopping_jobs

    found = verdict(STOPPING, "JOBS", waits_for_stopping_jobs(), AFTER_TERM)
    assert found.status == "fail", found
    assert found.message.startswith("job exec-2 (build, call call_t1_0) got TERM at 12s "
                                    "(incarnation 1) and ran on to its own exit at 60s, "
                                    "never killed"), found.message


class _AnswersOffTheList(_ClaimsWithoutActing):
    """A cancel hook whose status is none of harness.ports.CancelStatus."""

    def cancel(self, request: CancelRequest) -> CancelAck:
        return CancelAck("maybe", "later")  # type: ignore[arg-type]


def test_a_cancel_status_off_the_list_is_recorded_as_an_error() -> None:
    # The trace types the answer: a status it does not know would not decode again.
    scenario = load_scenario(CANCEL_CALL)
    case = next(c for c in plan_cases(scenario, CANCEL_CALL) if c.crash is None)
    result = run_case(case, scenario,
                      lambda ports: _AnswersOffTheList(ReferenceAgent(ports)))
    [cancel, *_] = result.trace.cancels
    assert (cancel.ack, cancel.detail) == (
        "error", "cancel() answered status 'maybe', not one of cancelled, already_cancelled, "
                 "not_found, unsupported")
    assert trace_from_json(result.trace.to_json()) == result.trace
