"""The goal and verifier blocks build the world's goal service and scripted verifier."""

from __future__ import annotations

from harness.scenario import Scenario


def test_a_goal_builds_revision_one_and_the_verifier_its_rules() -> None:
    scenario = Scenario.model_validate({
        "name": "t", "dialect": "openai", "tools": {"notes": {"kind": "append"}},
        "model": [{"turn": 1, "text": "hi"}], "expect": {"stop_state": "complete"},
        "goal": {"id": "notes-1.4", "objective": "Publish the notes",
                 "acceptance": ["every PR listed"], "budget": {"tokens": 5000, "rounds": 3},
                 "restart_policy": "pause",
                 "edits": [{"at_seconds": 30.0,
                            "acceptance": ["every PR listed", "links work"]}]},
        "verifier": [{"when": {"applied": {"notes": 0}}, "verdict": "fail",
                      "gaps": ["nothing written"]}, {"verdict": "pass"}],
    })
    assert scenario.goal is not None
    goal = scenario.goal.fake_goal()
    assert (goal.revision, goal.restart_policy, goal.budget.tokens) == (1, "pause", 5000)
    assert (goal.budget.rounds, goal.identity()["budget"]["rounds"]) == (3, 3)
    assert scenario.goal.fake_edits()[0].acceptance == ("every PR listed", "links work")
    rules = [rule.fake_rule() for rule in scenario.verifier]
    assert [(r.verdict, dict(r.applied)) for r in rules] == [("fail", {"notes": 0}),
                                                             ("pass", {})]


def test_protected_paths_reach_the_goal_and_its_identity_only_when_declared() -> None:
    base = {
        "name": "t", "dialect": "openai", "tools": {"edit": {"kind": "put"}},
        "model": [{"turn": 1, "text": "hi"}], "expect": {"stop_state": "complete"},
        "verifier": [{"verdict": "pass"}],
    }
    goal = {"id": "g", "objective": "fix login", "acceptance": ["tests pass"]}
    guarded = Scenario.model_validate({**base, "goal": {**goal, "protected": ["tests/*"]}})
    assert guarded.goal is not None
    fake = guarded.goal.fake_goal()
    assert fake.protected == ("tests/*",)
    assert fake.identity()["protected"] == ["tests/*"]
    assert fake.protects("tests/unit/test_login.py") == "tests/*"
    assert fake.protects("src/login.py") is None
    plain = Scenario.model_validate({**base, "goal": goal})
    assert plain.goal is not None
    assert "protected" not in plain.goal.fake_goal().identity()
