"""The shipped example agents, unchanged, under the harness: their real bugs, found and explained.

Each test runs one case the way ``harness run --agent examples.…:main`` does and reads
the verdicts and the failure report a stranger would read.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness._report_text import render_failure
from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, plan_cases, run_case
from harness.scenario import Scenario, load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOOLS = "examples.openai_agent.tools"


def send_then_note(**changes: Any) -> Scenario:
    """The openai examples' task with the send first, so a crash can land right after it."""
    fields: dict[str, Any] = {
        "name": "send-then-note", "dialect": "openai", "seed": 8,
        "description": "Mail the CFO the invoice, then note it.",
        "tools": {"send_mail": {"kind": "send", "target": f"{TOOLS}:send_mail"},
                  "append_note": {"kind": "append", "target": f"{TOOLS}:append_note"},
                  "read_outbox": {"kind": "inspect", "target": f"{TOOLS}:read_outbox"}},
        "model": [
            {"turn": 1, "calls": [{"tool": "send_mail",
                                   "args": {"to": "cfo@example.com", "body": "invoice 7"}}]},
            {"turn": 2, "calls": [{"tool": "append_note", "args": {"text": "invoice 7 sent"}}]},
            {"turn": 3, "text": "Sent and noted."},
        ],
        "expect": {"stop_state": "complete", "side_effects": {"send_mail": 1}},
    }
    fields.update(changes)
    return Scenario(**fields)


def run(entry: str, scenario: Scenario, crash: CrashSpec | None = None) -> CaseResult:
    case = Case(scenario.name, Path("scenario.yaml"), scenario.seed, crash, agent=entry)
    return run_case(case, scenario, PlainEntry(entry))


def report(result: CaseResult) -> str:
    return render_failure(result)


def test_the_naive_agent_sends_the_mail_twice_after_a_crash_right_after_the_send() -> None:
    result = run("examples.openai_agent:main", send_then_note(),
                 CrashSpec("after_tool:send_mail#1", "at", "process_killed"))

    assert result.status == "fail"
    assert {v.invariant for v in result.failed_verdicts} >= {"I1", "side_effects"}
    text = report(result)
    assert "I1 broken: 1 non-idempotent effect(s) applied more than once" in text
    assert ("send_mail ran 2 times with the same arguments (incarnations 1, 2): the crash at "
            "after_tool:send_mail#1 came after the side effect and before the agent recorded "
            "it") in text


def test_a_torn_state_file_breaks_the_naive_agents_restart() -> None:
    result = run("examples.openai_agent:main", send_then_note(),
                 CrashSpec("state:truncate#1", "after", "process_killed"))

    assert (result.status, result.stop_state) == ("fail", "failed")
    assert result.stop_reason.startswith("the agent raised JSONDecodeError: Expecting value")
    text = report(result)
    assert "in load_state" in text  # the agent's own traceback, pointing at its code
    assert ("the agent failed after restarting from the crash at state:truncate#1 "
            "(process_killed): it could not read its 'state' file (the crash hit its truncate)"
            in text)


def test_the_file_advice_is_given_only_for_a_file_the_restart_could_not_read() -> None:
    # The advice to write atomically fits a restart that could not read its file; after
    # a crash at a SQLite commit (committed whole or not at all) or a failure of another
    # kind, it misled (a LangGraph resume refused as INVALID_CHAT_HISTORY was told to fsync).
    result = run("examples.openai_agent:main", send_then_note(),
                 CrashSpec("state:truncate#1", "after", "process_killed"))
    assert result.trace is not None
    assert result.case.crash is not None
    advice = "it could not read its 'state' file"
    assert advice in report(result)

    other = "Traceback (most recent call last):\nopenai.BadRequestError: Error code: 400"
    failed_otherwise = replace(result, trace=replace(
        result.trace, extra=replace(result.trace.extra, agent_traceback=other)))
    assert "os.replace" not in report(failed_otherwise)
    at_a_commit = replace(result, case=replace(
        result.case, crash=replace(result.case.crash, point_id="sqlite:commit#1")))
    assert "os.replace" not in report(at_a_commit)


def test_the_naive_agent_does_not_retry_a_stream_reset_after_its_headers() -> None:
    scenario = send_then_note(faults=[{"at": {"turn": 1, "attempt": 1},
                                       "kind": "connection_reset", "after_events": 2}])
    result = run("examples.openai_agent:main", scenario)

    assert (result.status, result.stop_state) == ("fail", "infra_paused")
    assert ("the stream of turn 1 (request #1) broke after its response began "
            "(connection_reset)" in report(result))


def test_the_naive_agent_crashes_on_tool_arguments_cut_at_the_output_limit() -> None:
    scenario = send_then_note(faults=[{"at": {"turn": 1, "attempt": 1},
                                       "kind": "truncated_tool_arguments", "fraction": 0.5}])
    result = run("examples.openai_agent:main", scenario)

    assert (result.status, result.stop_state) == ("fail", "failed")
    assert "JSONDecodeError" in result.stop_reason
    assert ("turn 1's answer was cut at the output limit (finish_reason 'length') in the "
            "middle of a tool call's arguments, and the agent parsed them anyway and failed "
            "(JSONDecodeError)" in report(result))


def test_the_pydantic_ai_agent_sends_twice_after_a_crash_right_after_the_send() -> None:
    path = EXAMPLES / "scenarios/pydantic-ai-agent.yaml"
    scenario = load_scenario(path)
    entry = "examples.pydantic_ai_agent:main"
    cases = [c for c in plan_cases(scenario, path, PlainEntry(entry)) if c.crash]
    result = run_case(cases[0], scenario, PlainEntry(entry))

    assert result.status == "fail"
    assert result.duplicates == 1
    assert "I1" in {v.invariant for v in result.failed_verdicts}


@pytest.mark.parametrize("example", ["openai_agent", "anthropic_agent", "pydantic_ai_agent"])
def test_each_example_completes_when_nothing_goes_wrong(example: str) -> None:
    dialect = "anthropic" if example == "anthropic_agent" else "openai"
    tools = f"examples.{example}.tools"
    scenario = send_then_note(dialect=dialect, tools={
        "send_mail": {"kind": "send", "target": f"{tools}:send_mail"},
        "append_note": {"kind": "append", "target": f"{tools}:append_note"},
        "read_outbox": {"kind": "inspect", "target": f"{tools}:read_outbox"}})
    result = run(f"examples.{example}:main", scenario)

    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.side_effects == {"append_note": 1, "send_mail": 1}


CAREFUL = "examples.openai_careful:main"


@pytest.mark.parametrize("crash", [
    CrashSpec("after_tool:send_mail#1", "at", "process_killed"),
    CrashSpec("state:rename#1", "after", "unsynced_lost"),
    CrashSpec("state:fsync#2", "before", "process_killed"),
    CrashSpec("agent:fsync_dir#1", "after", "missing_dir_fsync"),
])
def test_the_careful_agent_survives_the_crashes_that_break_the_naive_one(
        crash: CrashSpec) -> None:
    result = run(CAREFUL, send_then_note(), crash)
    assert result.crash_reached
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.duplicates == 0


@pytest.mark.parametrize("fault", [
    {"kind": "connection_reset", "after_events": 2},
    {"kind": "truncated_tool_arguments", "fraction": 0.5},
])
def test_the_careful_agent_retries_a_cut_stream_and_runs_nothing_from_a_cut_answer(
        fault: dict[str, Any]) -> None:
    scenario = send_then_note(faults=[{"at": {"turn": 1, "attempt": 1}, **fault}], model=[
        {"turn": 1, "calls": [{"tool": "send_mail",
                               "args": {"to": "cfo@example.com", "body": "invoice 7"}}]},
        {"turn": 2, "when": {"tool": "send_mail", "outcome": "truncated"},
         "calls": [{"tool": "send_mail", "args": {"to": "cfo@example.com", "body": "invoice 7"}}]},
        {"turn": 2, "calls": [{"tool": "append_note", "args": {"text": "invoice 7 sent"}}]},
        {"turn": 3, "calls": [{"tool": "append_note", "args": {"text": "invoice 7 sent"}}]},
        {"turn": 3, "when": {"tool": "append_note"}, "text": "Sent and noted."},
        {"turn": 4, "text": "Sent and noted."},
    ])
    result = run(CAREFUL, scenario)
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.side_effects["send_mail"] == 1


@pytest.mark.system  # system tier: every case of a shipped scenario
def test_the_shipped_careful_scenario_passes_in_every_crash_case() -> None:
    path = EXAMPLES / "scenarios/openai-careful.yaml"
    scenario = load_scenario(path)
    cases = plan_cases(scenario, path, PlainEntry(CAREFUL))
    sample = cases[::15]  # every crash class and point kind, at a fraction of the time
    results = [run_case(case, scenario, PlainEntry(CAREFUL)) for case in sample]
    assert [r.case.case_id for r in results if r.status != "pass"] == []


def test_the_careful_agent_rebuilds_the_prefix_it_cached_after_every_crash() -> None:
    # seed 002 §19.7 (只有模型、配置和重建出的前缀都一致时,它才保留命中机会): state.json keeps
    # the messages as sent, so a restarted careful agent sends the same prefix and the
    # world's prompt cache, which outlived the crash, still serves it.
    plan = "Plan: note the approval, then mail it to the operations list, once. " * 40
    scenario = send_then_note(
        name="careful-cache", provider={"model": "fake-gpt", "prompt_cache": True},
        crash={"points": "all", "classes": ["unsynced_lost"]},
        model=[
            {"turn": 1, "text": plan, "calls": [{"tool": "append_note",
                                                "args": {"text": "deploy 42 approved"}}]},
            {"turn": 2, "when": {"tool": "append_note", "outcome": "unknown_after_restart"},
             "calls": [{"tool": "read_outbox", "args": {}}]},
            {"turn": 2, "calls": [{"tool": "send_mail",
                                   "args": {"to": "ops@example.com", "body": "approved"}}]},
            {"turn": 3, "text": "Noted and mailed."},
        ],
        expect={"stop_state": "complete"})
    cases = [c for c in plan_cases(scenario, Path("careful-cache.yaml"), PlainEntry(CAREFUL))
             if c.crash][::2]
    verdicts = [next((v for v in run_case(case, scenario, PlainEntry(CAREFUL)).verdicts
                      if v.invariant == "cache:restart"), None) for case in cases]
    judged = [v for v in verdicts if v is not None and v.status != "unknown"]
    assert len(judged) >= 3
    assert [v for v in judged if v.status != "pass"] == []
    assert any("1 hit" in v.message for v in judged)


def test_a_state_file_lost_with_the_power_is_explained_after_a_world_event_crash() -> None:
    # Never fsynced, state.json is empty after a power loss at any moment: the restart
    # cannot parse it, whatever the crash point was.
    result = run("examples.openai_agent:main", send_then_note(),
                 CrashSpec("before_request:2", "at", "unsynced_lost"))

    assert (result.status, result.stop_state) == ("fail", "failed")
    assert ("the agent failed after restarting from the crash at before_request:2 "
            "(unsynced_lost): it could not read a file it wrote before the crash"
            in report(result))


@pytest.mark.system  # some 70 cases, each run both ways
def test_the_careful_agents_crash_cases_start_from_its_recorded_run_as_replays_would() -> None:
    from harness.runner import _explore

    _explore._RECORDINGS.clear()
    _explore._MADE.clear()
    scenario = send_then_note(crash={"points": "all",
                                     "classes": ["unsynced_lost", "process_killed"]})
    entry = PlainEntry(CAREFUL)
    # Every point of the agent's own files and every world event, in two classes; one
    # case in five keeps it short.
    cases = [c for c in plan_cases(scenario, Path("scenario.yaml"), entry) if c.crash][::5]
    explored = [run_case(c, scenario, entry) for c in cases]
    replayed = [run_case(c, scenario, entry, replay=True) for c in cases]

    assert [(r.case.case_id, r.digest, r.verdicts) for r in explored] == \
        [(r.case.case_id, r.digest, r.verdicts) for r in replayed]
    assert all(r.fallback is None for r in _explore._RECORDINGS.values())
    # Most cases ran only the restart, from the world copied at their point.
    ways = [r.exploration for r in explored]
    assert ways.count("recorded") > len(cases) * 3 // 4, ways


def test_a_plain_agent_that_raises_on_a_disk_error_is_judged_by_what_it_can_say() -> None:
    # A plain main(prompt) cannot stop infra_paused: raising is its way to stop.
    result = run("examples.openai_agent:main", send_then_note(),
                 CrashSpec("state:write#2", "before", "eio_on_write"))

    i4 = next(v for v in result.verdicts if v.invariant == "I4")
    assert (result.stop_state, i4.status) == ("failed", "pass"), i4.message
    assert "expected 'failed'" in i4.message
    assert not any(v.invariant in ("I1", "side_effects") for v in result.failed_verdicts)


def test_a_plain_agent_held_to_infra_paused_gets_a_hint_naming_the_key() -> None:
    scenario = send_then_note(expect={"stop_state": "complete", "side_effects": {"send_mail": 1},
                                      "stop_state_after_disk_error": "infra_paused"})
    result = run("examples.openai_agent:main", scenario,
                 CrashSpec("state:write#2", "before", "eio_on_write"))

    assert [v.message for v in result.failed_verdicts if v.invariant == "I4"] == [
        "stopped 'failed' after the trusted log failed a write at state:write#2, expected "
        "'infra_paused'"]
    text = " ".join(report(result).split())
    assert ("a plain main(prompt) can only return (complete) or raise (failed)" in text)
    assert ("The scenario expects 'infra_paused', which a plain agent cannot end in: drop "
            "expect.stop_state_after_disk_error (a plain agent is then expected to fail) or "
            "write it as failed.") in text
