"""The reference agent's goal discipline (seed 002 §19.2-§19.3), read from its trusted log.

Each test runs a shipped goal scenario in a world and reads what the agent wrote
(``session.jsonl``) and what the goal service saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes import SimulatedCrash
from harness.agent import Discipline, ReferenceAgent
from harness.agent._goal import GoalKeeper
from harness.agent._lease import StaleLeaseError
from harness.ports import AgentOutcome
from harness.runner import World, task_for
from harness.scenario import Scenario, load_scenario

GOALS = Path(__file__).resolve().parents[2] / "scenarios" / "goals"


def _scenario(name: str) -> Scenario:
    return load_scenario(GOALS / f"{name}.yaml")


def _run(world: World, incarnation: int = 1) -> tuple[ReferenceAgent, AgentOutcome]:
    agent = ReferenceAgent(world.ports(incarnation))
    outcome = world.clock.run(agent.run(task_for(world.scenario)))
    return agent, outcome


def _records(world: World, kind: str) -> list[dict[str, Any]]:
    lines = world.disk.files()["/state/session.jsonl"].decode().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == kind]


def test_an_edit_discards_the_stale_auto_continue_and_the_next_turn_takes_the_new_revision() \
        -> None:
    world = World(_scenario("edited-goal-is-reverified"), seed=51)
    _, outcome = _run(world)
    assert outcome.stop_state == "complete"
    discarded = [g for g in _records(world, "goal") if g["source"] == "continuation_discarded"]
    assert [(g["discarded"]["revision"], g["goal"]["revision"]) for g in discarded] == [(1, 2)]
    edits = [u["text"] for u in _records(world, "user") if u["source"] == "goal"]
    assert edits
    assert "revision 2" in edits[0]
    assert "the changelog link works" in edits[0]
    assert world.goals is not None
    declared = [(e.action, e.declared_revision) for e in world.goals.events
                if e.kind == "declare" and e.declared is not None]
    assert declared[0] == ("turn", 1)
    assert all(revision == 2 for action, revision in declared[2:])


def test_recovery_records_are_written_at_the_safe_boundaries_with_the_goal_revision() -> None:
    world = World(_scenario("edited-goal-is-reverified"), seed=51)
    _run(world)
    records = _records(world, "recovery")
    assert {r["boundary"] for r in records} == {"before_request", "before_tools",
                                                "after_results", "turn_end"}
    assert [r["goal"]["revision"] for r in records][:4] == [1, 1, 1, 1]
    assert records[-1]["goal"]["revision"] == 2
    assert records[-1]["lastVerification"]["outcome"] == "fail"
    assert {r["epoch"] for r in records} == {1}


def test_the_verified_completion_is_bound_to_the_final_revision() -> None:
    world = World(_scenario("edited-goal-is-reverified"), seed=51)
    _, outcome = _run(world)
    done = [g for g in _records(world, "goal") if g["source"] == "complete"]
    proof = done[-1]["proof"]
    assert (proof["goalId"], proof["revision"]) == ("release-notes-1.4", 2)
    assert [c["verdict"] for c in proof["criteria"]] == ["pass", "pass"]
    assert [c["exitCode"] for c in proof["checks"]] == [0, 0]
    assert outcome.reason.startswith("verified: proof for goal release-notes-1.4 revision 2")
    assert [v["outcome"] for v in _records(world, "verification")] == ["fail", "pass"]


def _crash_after_first_tool(world: World) -> None:
    """Run incarnation 1 until the ledger holds the first side effect, then crash it."""
    agent = ReferenceAgent(world.ports(1))
    first_tool = next(iter(world.scenario.tools))

    def crash_on_effect(tool: str) -> None:
        if tool == first_tool:
            raise world.disk.crash_at_event(f"after_tool:{tool}#1", "unsynced_lost")

    world.effect_applied = crash_on_effect  # type: ignore[method-assign]
    with pytest.raises(SimulatedCrash):
        world.clock.run(agent.run(task_for(world.scenario)))
    del world.effect_applied
    world.disk.restart()


def test_a_restart_takes_a_new_epoch_and_continues_under_it() -> None:
    world = World(_scenario("edited-goal-is-reverified"), seed=51)
    _crash_after_first_tool(world)
    agent, outcome = _run(world, incarnation=2)
    assert outcome.stop_state == "complete"
    assert agent.lease.epoch == 2
    assert [(r["epoch"], r["tookOver"]) for r in _records(world, "lease")] == [(1, None), (2, 1)]
    with pytest.raises(StaleLeaseError):
        agent.lease.guard(1, "a watcher of incarnation 1")


def test_the_pause_policy_keeps_the_goal_but_takes_authority_back() -> None:
    world = World(_scenario("restart-pauses-the-goal"), seed=52)
    _crash_after_first_tool(world)
    sent = len(world.requests)
    _, outcome = _run(world, incarnation=2)
    assert outcome.stop_state == "paused"
    assert "restart policy pause, epoch 1 -> 2" in outcome.reason
    assert len(world.requests) == sent  # no turn under the taken-back authority
    assert world.goals is not None
    assert world.goals.status == "paused"


def test_a_verifier_outage_ends_infra_paused_never_complete() -> None:
    world = World(_scenario("verifier-outage-is-not-complete"), seed=53)
    _, outcome = _run(world)
    assert (outcome.stop_state, outcome.infra_failure) == ("infra_paused", True)
    assert world.goals is not None
    assert world.goals.status == "infra_paused"


def test_the_same_gap_after_a_rework_pauses_with_no_progress() -> None:
    world = World(_scenario("same-gap-twice-pauses"), seed=54)
    agent, outcome = _run(world)
    assert outcome.stop_state == "paused"
    assert outcome.reason.startswith("no progress: the verifier named the same gaps again")
    assert agent.counters.verification_rework == 2
    assert len(_records(world, "verification")) == 2


def test_without_a_goal_port_the_lease_epoch_is_the_incarnation() -> None:
    scenario = Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
                        expect={"stop_state": "complete"})
    world = World(scenario, seed=1)
    agent, outcome = _run(world)
    assert outcome.stop_state == "complete"
    assert (agent.lease.epoch, agent.lease.source) == (1, "incarnation")
    assert not _records(world, "recovery")  # no goal, no recovery records: nothing to judge


def test_after_a_compaction_the_goal_is_read_again_from_the_service() -> None:
    world = World(_scenario("edited-goal-is-reverified"), seed=51)
    ports = world.ports(1)
    agent = ReferenceAgent(ports)
    world.clock.run(agent.recover())
    assert ports.goals is not None
    keeper = GoalKeeper(ports.goals, agent.log, world.clock, 1, lambda: "turn_next")
    agent.log.append("session", "", epoch=1)
    assert keeper.start() is None
    world.clock.advance(30)  # the user's edit is due
    keeper.after_compaction("turn_1")
    record = _records(world, "recovery")[-1]
    assert (record["boundary"], record["goal"]["revision"]) == ("after_compaction", 2)
    assert [g["source"] for g in _records(world, "goal")] == ["service", "user_edit"]


def test_spent_verifier_rounds_end_budget_limited_without_another_rework() -> None:
    world = World(_scenario("verifier-rounds-run-out"), seed=56)
    _, outcome = _run(world)
    assert outcome.stop_state == "budget_limited"
    assert outcome.reason.startswith("the goal's budget of 2 verifier round(s) is spent")
    assert [v["outcome"] for v in _records(world, "verification")] == ["fail", "fail"]
    assert [u["source"] for u in _records(world, "user")] == ["task", "verifier"]
    assert world.goals is not None
    assert world.goals.status == "budget_limited"



def _edited(world: World) -> list[str]:
    """The paths of the edits the world ran, in order."""
    return [str(i.arguments["path"]) for i in world.invocations if not i.refused]


def test_an_edit_of_a_protected_test_is_answered_unrun_and_the_goal_waits_blocked() -> None:
    world = World(_scenario("tests-stay-protected"), seed=62)
    _, outcome = _run(world)
    assert outcome.stop_state == "blocked"
    assert "tests/test_login.py holds the checks that prove goal expired-tokens" \
        in outcome.reason
    assert world.goals is not None
    assert world.goals.status == "blocked"
    assert _edited(world) == ["src/login.py"]  # the fix ran, the skip did not
    replies = [r for r in _records(world, "tool_reply") if r["status"] == "not_started"]
    assert len(replies) == 1
    assert "needs the user's approval" in replies[0]["content"]["message"]


def test_a_restart_of_a_blocked_goal_stays_blocked_and_asks_the_model_nothing() -> None:
    world = World(_scenario("tests-stay-protected"), seed=62)
    _run(world)
    world.disk.restart()
    sent = len(world.requests)
    _, outcome = _run(world, incarnation=2)
    assert outcome.stop_state == "blocked"
    assert len(world.requests) == sent
    assert _edited(world) == ["src/login.py"]


def test_a_crash_before_the_goal_is_set_blocked_blocks_it_on_restart() -> None:
    world = World(_scenario("tests-stay-protected"), seed=62)
    assert world.goals is not None
    set_status = world.goals.set_status

    def crash_before_blocking(incarnation: int, epoch: int, revision: int, status: Any,
                              reason: str) -> Any:
        if status == "blocked" and incarnation == 1:
            raise world.disk.crash_at_event("goal:status", "unsynced_lost")
        return set_status(incarnation, epoch, revision, status, reason)

    world.goals.set_status = crash_before_blocking  # type: ignore[method-assign]
    agent = ReferenceAgent(world.ports(1))
    with pytest.raises(SimulatedCrash):
        world.clock.run(agent.run(task_for(world.scenario)))
    assert world.goals.status == "active"
    world.disk.restart()
    _, outcome = _run(world, incarnation=2)
    assert outcome.stop_state == "blocked"
    assert world.goals.status == "blocked"
    assert _edited(world) == ["src/login.py"]


def test_without_the_guard_the_skipped_test_passes_the_verifier_and_the_goal_completes() -> None:
    # What the scenario catches: the verifier is fooled by a skipped test, so only the
    # agent stands between the goal and a completion that proves nothing.
    world = World(_scenario("tests-stay-protected"), seed=62)
    agent = ReferenceAgent(world.ports(1), discipline=Discipline(keep_protected_paths=False))
    outcome = world.clock.run(agent.run(task_for(world.scenario)))
    assert outcome.stop_state == "complete"
    assert _edited(world) == ["src/login.py", "tests/test_login.py"]


def _requests_after_a_crash(budget_policy: Any = None) -> list[tuple[int, int]]:
    """(incarnation, status) of each turn-2 request when incarnation 1 crashes right after
    writing down its second 429's retry."""
    from harness.mutants import Kill
    from harness.mutants._build import reference
    from harness.mutants._run import run_kill

    kill = Kill("scenarios/goals/rate-limit-parks-the-goal.yaml", "S5:429",
                "session:fsync#18:after:unsynced_lost")
    result = run_kill(kill, reference(budget_policy=budget_policy))
    assert result.trace is not None
    return [(r.incarnation, r.status) for r in result.trace.requests if r.turn == 2]


def test_a_restart_counts_on_the_429s_in_a_row_its_log_holds() -> None:
    # The cap is three: two were written down before the crash, so one more ends the run.
    assert _requests_after_a_crash() == [(1, 429), (1, 429), (2, 429)]


def test_counted_in_memory_only_a_restart_buys_a_fresh_run_of_429s() -> None:
    from harness.agent import BudgetPolicy

    forgetful = _requests_after_a_crash(BudgetPolicy(count_rate_limits_durably=False))
    assert forgetful == [(1, 429), (1, 429), (2, 429), (2, 429), (2, 429)]


def test_a_usage_limited_run_leaves_its_goal_usage_limited_and_a_restart_keeps_it() -> None:
    world = World(_scenario("rate-limit-parks-the-goal"), seed=63)
    _, outcome = _run(world)
    assert outcome.stop_state == "usage_limited"
    assert world.goals is not None
    assert world.goals.status == "usage_limited"
    world.disk.restart()
    sent = len(world.requests)
    _, again = _run(world, incarnation=2)
    assert again.stop_state == "usage_limited"
    assert len(world.requests) == sent


def test_a_reader_may_name_a_protected_path_and_the_goal_goes_on() -> None:
    # Reading the failing test before fixing the code is the usual way: only a tool that
    # may change something waits for the user's approval.
    scenario = Scenario.model_validate({
        "name": "read-the-test", "dialect": "openai", "seed": 5,
        "tools": {"edit": {"kind": "put"}, "show": {"kind": "read"}},
        "goal": {"id": "fix-parser", "objective": "Fix the CSV parser",
                 "acceptance": ["tests pass"], "protected": ["tests/*"]},
        "verifier": [{"when": {"applied": {"edit": 1}}, "verdict": "pass"},
                     {"verdict": "fail", "gaps": ["test_parser fails"]}],
        "model": [{"turn": 1, "calls": [{"tool": "show",
                                         "args": {"path": "tests/test_parser.py"}}]},
                  {"turn": 2, "calls": [{"tool": "edit",
                                         "args": {"path": "src/parser.py", "value": "fix"}}]},
                  {"turn": 3, "text": "Fixed."}],
        "expect": {"stop_state": "complete"}})
    world = World(scenario, seed=5)
    _, outcome = _run(world)
    assert outcome.stop_state == "complete"
    assert world.goals is not None
    assert world.goals.status == "complete"
    assert [str(i.arguments["path"]) for i in world.invocations] == [
        "tests/test_parser.py", "src/parser.py"]
