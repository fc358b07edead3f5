"""CANCEL:goal: after an acknowledged goal cancel nothing acts for the goal (seed 002 §19.4)."""

from __future__ import annotations

from minimal_agent import minimal_factory

from harness.agent import ReferenceAgent
from harness.checks import Verdict
from harness.ports import AgentPorts, CancelAck, CancelRequest
from harness.runner import plan_cases, run_case
from harness.scenario import load_scenario

GOAL = "scenarios/cancel/cancel-the-goal.yaml"


def verdict(factory: object = None, label: str = "none", check: str = "CANCEL:goal") -> Verdict:
    scenario = load_scenario(GOAL)
    case = next(c for c in plan_cases(scenario, GOAL)
                if (c.crash.label if c.crash else "none") == label)
    result = run_case(case, scenario, factory)  # type: ignore[arg-type]
    return next(v for v in result.verdicts if v.invariant == check)


def test_the_reference_agent_passes_with_and_without_a_crash() -> None:
    for label in ("none", "cancels:fsync#1:after:unsynced_lost"):
        found = verdict(label=label)
        assert found.status == "pass", found.message
        assert found.message.startswith("the goal cancel acknowledged at 5s")


def test_an_agent_without_a_cancel_hook_is_unknown_with_the_reason() -> None:
    found = verdict(minimal_factory())
    assert (found.status, found.message.split(",")[0]) == \
        ("unknown", "the agent offers no cancel(request) hook")


def test_an_agent_without_the_goal_target_is_unknown_with_the_reason() -> None:
    def without_goal_target(ports: AgentPorts) -> ReferenceAgent:
        agent = ReferenceAgent(ports)
        del agent.cancels.handlers["goal"]
        return agent

    found = verdict(without_goal_target)
    assert found.status == "unknown"
    assert found.message == ("the agent answered the goal cancel ['unsupported']: it does not "
                             "implement the goal target")
    cancel = verdict(without_goal_target, check="CANCEL")
    assert cancel.status == "unknown"
    assert "no ['goal'] target" in cancel.message


def test_an_acknowledged_cancel_that_changes_nothing_fails_on_every_count() -> None:
    def acknowledges_only(ports: AgentPorts) -> ReferenceAgent:
        agent = ReferenceAgent(ports)

        def noted(_request: CancelRequest) -> CancelAck:
            return CancelAck("cancelled", "noted")

        agent.cancels.register("goal", noted)
        return agent

    found = verdict(acknowledges_only)
    assert found.status == "fail"
    assert found.evidence[:4] == (
        "request #2 (turn 2, incarnation 1) started at 8s, after the goal was cancelled at 5s: "
        "the auto-continue was left armed",
        "tool publish (call call_t2_0, incarnation 1) started at 8s, after the goal was "
        "cancelled at 5s",
        "a verifier round or completion (goal event #8, verify) came at 8s, after the goal was "
        "cancelled at 5s",
        "the goal was cancelled at 5s, but the goal service holds it 'complete': the next "
        "session would resume it")
