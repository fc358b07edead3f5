"""Good scenario files load into the typed values they spell, defaults applied."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness.scenario as scenario_api
from harness.scenario import (
    CRASH_CLASSES,
    DEFAULT_INVARIANTS,
    FAULT_KINDS,
    HttpErrorFault,
    Reply,
    Scenario,
    ScenarioError,
    SlowBehaviour,
    StallFault,
    ToolDeclaration,
    check_crash_points,
    load_scenario,
    load_scenarios,
    validate_paths,
)

DATA = Path(__file__).parent / "data"
GOOD = DATA / "good"


def test_the_documented_example_loads_with_every_value_typed() -> None:
    scenario = load_scenario(GOOD / "parallel-append-crash.yaml")

    assert scenario.name == "parallel-append-crash"
    assert scenario.dialect == "openai"
    assert scenario.seed == 7
    assert scenario.tools["notes"] == ToolDeclaration(
        kind="append", concurrency_safe=False,
        behaviour=SlowBehaviour(kind="slow", seconds=2.0), timeout_seconds=30.0,
    )
    assert scenario.model[0].calls[1].args == {"to": "a@example.com", "body": "hi"}
    assert scenario.model[1].when is not None
    assert scenario.model[1].when.outcome == "unknown_after_restart"
    assert scenario.faults[0] == StallFault(
        kind="stall", at={"turn": 1, "attempt": 1}, after_bytes=120, seconds=120.0
    )
    assert isinstance(scenario.faults[1], HttpErrorFault)
    assert scenario.faults[1].retry_after == 60
    assert scenario.crash.points == "all"
    assert scenario.crash.classes == ["unsynced_lost", "torn_append_short"]
    assert scenario.budget.deadline_seconds == 900.0
    assert scenario.expect.side_effects == {"notes": 1, "mail": 1}


def test_a_minimal_scenario_gets_every_default() -> None:
    scenario = load_scenario(GOOD / "minimal.yaml")

    assert (scenario.description, scenario.seed, scenario.tools, scenario.faults) == ("", 0, {}, [])
    assert scenario.crash.points == "none"
    assert scenario.crash.classes == list(CRASH_CLASSES)
    assert scenario.crash.during_recovery is False
    assert (scenario.budget.max_turns, scenario.budget.max_attempts) == (20, 40)
    assert scenario.expect.invariants == list(DEFAULT_INVARIANTS)
    assert "I5" not in scenario.expect.invariants
    assert scenario.model[0].finish_reason == "stop"


def test_every_fault_kind_has_an_example_and_loads() -> None:
    scenario = load_scenario(GOOD / "every-fault.yaml")

    assert [fault.kind for fault in scenario.faults] == list(FAULT_KINDS)
    assert scenario.crash.points == ["journal:fsync#1", "journal:write#2"]


@pytest.mark.parametrize(
    ("kind", "declared", "safe"),
    [("read", None, True), ("inspect", None, True), ("append", None, False),
     ("send", None, False), ("put", True, True), ("read", False, False)],
)
def test_concurrency_safety_defaults_by_kind(kind: str, declared: bool | None, safe: bool) -> None:
    tool = ToolDeclaration.model_validate({"kind": kind, "concurrency_safe": declared})
    assert tool.is_concurrency_safe is safe


def test_finish_reason_defaults_to_tool_calls_when_there_are_calls() -> None:
    reply = Reply(turn=1, calls=[{"tool": "t"}])
    assert reply.finish_reason == "tool_calls"
    assert Reply(turn=1, text="", finish="length").finish_reason == "length"


def test_retry_after_accepts_whole_seconds_written_as_a_number(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    text = (GOOD / "parallel-append-crash.yaml").read_text().replace('"60"', "60")
    path.write_text(text)
    fault = load_scenario(path).faults[1]
    assert isinstance(fault, HttpErrorFault)
    assert fault.retry_after == 60


def test_scenarios_are_frozen() -> None:
    scenario = load_scenario(GOOD / "minimal.yaml")
    with pytest.raises(ValueError, match="frozen"):
        scenario.seed = 3  # type: ignore[misc]


def test_a_folder_loads_every_yaml_file_in_path_order() -> None:
    names = [scenario.name for scenario in load_scenarios([GOOD])]
    assert names == ["every-fault", "minimal", "parallel-append-crash"]
    assert validate_paths([GOOD]) == []


def test_a_scenario_built_in_python_obeys_the_same_rules() -> None:
    with pytest.raises(ValueError, match="tool is not declared"):
        Scenario(name="x", dialect="openai", model=[{"turn": 1, "calls": [{"tool": "mail"}]}],
                 expect={"stop_state": "complete"})


def test_crash_points_are_checked_against_a_recorded_run_with_file_positions() -> None:
    path = GOOD / "every-fault.yaml"
    scenario = load_scenario(path)
    check_crash_points(scenario, ["journal:write#2", "journal:fsync#1", "journal:fsync#2"])
    with pytest.raises(ScenarioError) as caught:
        check_crash_points(scenario, ["journal:fsync#2", "journal:write#2"])
    assert str(caught.value) == (
        f"{path}:41:12: crash.points[0]: crash point was never reached in the recorded run: "
        "got 'journal:fsync#1'; expected one of 'journal:fsync#2', 'journal:write#2'. "
        "Did you mean 'journal:fsync#2'?"
    )
    error = caught.value
    assert (error.line, error.column, error.value) == (41, 12, "journal:fsync#1")


def test_crash_points_of_a_scenario_built_in_python_name_the_scenario() -> None:
    scenario = Scenario(name="x", dialect="openai", model=[{"turn": 1, "text": "hi"}],
                        crash={"points": ["disk:rename#1"]}, expect={"stop_state": "complete"})
    with pytest.raises(ScenarioError, match=r"^<scenario x>: crash\.points\[0\]: crash point "
                       r"was never reached in the recorded run: got 'disk:rename#1'; expected "
                       r"none \(the recorded run reached no persistence point\)$"):
        check_crash_points(scenario, [])


def test_every_exported_name_exists() -> None:
    for name in scenario_api.__all__:
        assert hasattr(scenario_api, name), name


def test_a_stall_at_byte_zero_is_a_position_not_a_missing_field(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    text = (GOOD / "parallel-append-crash.yaml").read_text()
    path.write_text(text.replace("after_bytes: 120", "after_bytes: 0"))
    fault = load_scenario(path).faults[0]
    assert fault.after_bytes == 0  # type: ignore[union-attr]


def test_a_reused_anchor_name_loads_without_a_raw_library_warning(
        recwarn: pytest.WarningsRecorder) -> None:
    # Valid YAML (the later anchor wins); ruamel printed its own warning, naming neither
    # the file nor anything to do, in the middle of the harness's output.
    raw = (b"name: x\ndialect: openai\nmodel:\n  - {turn: 1, text: &a Hi.}\n"
           b"  - {turn: 2, text: &a Bye.}\n  - {turn: 3, text: *a}\n"
           b"expect: {stop_state: complete}\n")
    scenario = scenario_api.parse_scenario(raw, "reused.yaml")
    assert [step.text for step in scenario.model] == ["Hi.", "Bye.", "Bye."]
    assert [str(w.message) for w in recwarn.list] == []
