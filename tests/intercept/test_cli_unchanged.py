"""The unchanged agent from the command line and from pytest: one flag, nothing in the agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness._cli import main

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios"
WORLD_EVENTS = SHIPPED / "crash/mail-at-every-world-event.yaml"



def test_one_flag_runs_the_shipped_world_event_scenario_and_finds_the_double_send(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # The shipped scenario names no target: --target maps its tools onto the agent's.
    package = openai_agent()
    code = main(["run", str(WORLD_EVENTS), "--agent", f"{package}.agent:main",
                 "--target", f"mail={package}.tools:send_mail",
                 "--target", f"notes={package}.tools:append_note",
                 "--crash-at", "after_tool:mail#1:at:unsynced_lost", "--out", str(tmp_path)])

    out = capsys.readouterr().out
    assert code == 1
    # It starts over: the note and the mail both go out a second time.
    assert "I1 broken: 2 non-idempotent effect(s) applied more than once" in out
    # The replay repeats the agent and its targets: run alone, it tests the same thing.
    assert (f"replay: harness run {WORLD_EVENTS} --seed 35 --agent {package}.agent:main "
            f"--target mail={package}.tools:send_mail "
            f"--target notes={package}.tools:append_note "
            "--crash-at 'after_tool:mail#1:at:unsynced_lost'") in out


def test_a_scenario_naming_tools_the_agent_does_not_offer_says_so(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Written for another agent: its case proves nothing about this one, and --strict
    # refuses a run in which the scenario was never played.
    package = openai_agent()
    scenario = tmp_path / "other-tools.yaml"
    scenario.write_text(WORLD_EVENTS.read_text().replace("mail", "invoice").replace(
        "notes", "ledger"))
    run = ["run", str(scenario), "--agent", f"{package}.agent:main", "--no-crash"]
    assert main([*run, "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    assert "1 of 1 cases proved nothing" in said.out
    assert ("UNKNOWN invoice-at-every-world-event: the scenario's model calls ['ledger'], "
            "tools this agent does not offer in any request (it offers ['mail', 'notes', "
            "'outbox']): the scenario is not written for this agent, so its case proves "
            "nothing") in said.err

    assert main([*run, "--strict", "--out", str(tmp_path / "strict")]) == 1
    said = capsys.readouterr()
    assert "the scenario's model calls ['ledger']" in said.out + said.err


def test_a_target_for_a_tool_no_scenario_declares_is_refused(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    package = openai_agent()
    assert main(["run", str(WORLD_EVENTS), "--agent", f"{package}.agent:main",
                 "--target", f"mial={package}.tools:send_mail", "--out", str(tmp_path)]) == 2
    assert ("--target: got 'mial=" in capsys.readouterr().err)


def test_a_scenario_in_a_dialect_the_agent_does_not_speak_is_skipped(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    package = openai_agent()
    anthropic = SHIPPED / "crash/mail-at-every-world-event-anthropic.yaml"
    code = main(["run", str(anthropic), "--agent", f"{package}.agent:main", "--dialect", "openai",
                 "--no-crash", "--out", str(tmp_path)])

    assert code == 0
    assert (f"SKIPPED {anthropic}: this scenario speaks anthropic; the agent speaks openai only"
            in capsys.readouterr().err)


def test_a_bad_target_is_refused_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", str(WORLD_EVENTS), "--target", "mail:send_mail"])
    assert exited.value.code == 2
    assert ("argument --target: got 'mail:send_mail'; expected TOOL=MODULE:FUNCTION, such as "
            "'mail=mypackage.tools:send_mail'") in capsys.readouterr().err


def test_points_lists_the_world_events_an_agent_reaches(
        openai_agent: Callable[..., str], capsys: pytest.CaptureFixture[str]) -> None:
    package = openai_agent()
    assert main(["points", str(WORLD_EVENTS), "--agent", f"{package}.agent:main",
                 "--target", f"mail={package}.tools:send_mail",
                 "--target", f"notes={package}.tools:append_note"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines][:4] == [
        "before_request:1", "mid_stream:1", "after_response:1", "after_tool:notes#1"]
    assert all("role=world" in line for line in lines)  # this agent keeps no files


def test_pytest_runs_a_plain_agent_named_in_the_ini_file(
        openai_agent: Callable[..., str], pytester: pytest.Pytester) -> None:
    package = openai_agent()
    pytester.makeini(f"""
        [pytest]
        filterwarnings = error
        harness_agent = {package}.agent:main
        harness_dialects = openai
        harness_targets = mail={package}.tools:send_mail
    """)
    pytester.mkdir("scenarios")
    scenario = (SHIPPED / "crash/unknown-send-is-inspected.yaml").read_text()
    (pytester.path / "scenarios/send.yaml").write_text(scenario)
    anthropic = (SHIPPED / "crash/mail-at-every-world-event-anthropic.yaml").read_text()
    (pytester.path / "scenarios/other.yaml").write_text(anthropic)

    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")

    # The crash right after the send makes the naive agent send twice; the journal
    # points of the reference agent's layout are not this agent's: unknown, skipped.
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 1
    result.stdout.fnmatch_lines([
        "*I1 broken: 1 non-idempotent effect(s) applied more than once*",
        f"replay: harness run scenarios/send.yaml --seed 33 --agent {package}.agent:main "
        f"--target mail={package}.tools:send_mail --crash-at 'after_tool:mail#1:at:*",
        "*or: pytest 'scenarios/send.yaml::unknown-send-is-inspected[after_tool:mail#1:at:*",
    ])
    result.stdout.fnmatch_lines([
        "SKIPPED * this scenario speaks anthropic; the agent speaks openai only",
        "SKIPPED * unknown: the agent never reached journal:fsync#2, so this case proves *",
    ], consecutive=False)


def test_a_target_naming_no_function_is_refused_at_its_line_before_any_case_runs(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    package = openai_agent()
    scenario = tmp_path / "typo.yaml"
    scenario.write_text(WORLD_EVENTS.read_text().replace(
        "  mail: {kind: send}", f'  mail: {{kind: send, target: "{package}.tools:send_mial"}}'))

    code = main(["run", str(scenario), "--agent", f"{package}.agent:main",
                 "--out", str(tmp_path / "out")])

    assert code == 2
    err = capsys.readouterr().err
    assert (f"{scenario}:13:30: tools.mail.target: the target cannot be used: got "
            f"'{package}.tools:send_mial'; expected 'module:function' naming a function of the "
            f"agent's code. '{package}.tools' has no function 'send_mial'") in err
    assert not (tmp_path / "out").exists()


def test_a_hanging_tool_on_a_plain_target_is_refused_at_its_line_before_any_case(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Before, the case failed inside asyncio ('NoneType' object has no attribute
    # 'create_future') and the report blamed the agent's own code.
    package = openai_agent()
    scenario = tmp_path / "hangs.yaml"
    scenario.write_text(
        "name: hangs\ndialect: openai\ntools:\n  mail: {kind: send, behaviour: {kind: hanging},"
        " timeout_seconds: 5}\nmodel:\n  - turn: 1\n"
        "    calls: [{tool: mail, args: {to: a, body: hi}}]\n  - turn: 2\n    text: Sent.\n"
        "expect:\n  stop_state: complete\n", encoding="utf-8")

    code = main(["run", str(scenario), "--agent", f"{package}.agent:main",
                 "--target", f"mail={package}.tools:send_mail", "--out", str(tmp_path / "r")])

    assert code == 2
    assert capsys.readouterr().err == (
        f"harness: error: {scenario}:4:40: tools.mail.behaviour.kind: the behaviour waits on "
        "the event loop, but the tool's target is a plain function called from blocking "
        "code: got 'hanging'; expected one of 'instant', 'slow', 'failing', 'reply_lost'. "
        "Make the target async, or give the tool another behaviour\n")
    assert not (tmp_path / "r").exists()


REACHING_TOOLS = '''
import httpx


def send_mail(to: str, body: str) -> dict:
    return httpx.post("https://mail.example.com/send", json={"to": to, "body": body}).json()


def append_note(text: str) -> dict:
    return {"ok": True}


def read_outbox() -> dict:
    return {"sent": []}
'''


def test_a_tool_without_a_target_that_reaches_out_is_told_to_get_a_target_at_its_line(
        openai_agent: Callable[..., str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    package = openai_agent(tools=REACHING_TOOLS)
    code = main(["run", str(WORLD_EVENTS), "--agent", f"{package}.agent:main", "--no-crash",
                 "--out", str(tmp_path)])

    out = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert ("network: the agent's process made 1 outside call(s) that no fake provider "
            "serves (refused: a case has no network), 1 of them while its own function for "
            "the tool `mail` ran (the tool has no target:, so the harness did not run it): "
            "give the tool `mail` a `target:` (module:function), or pass `--target "
            "mail=MODULE:FUNCTION` for a scenario you do not edit, so the harness can count "
            "its side effects") in out
    assert (f"the tool `mail` has no target, so the agent's own function ran and called out "
            f"({WORLD_EVENTS}:13): give the tool `mail` a `target:`") in out
    assert "point its model clients at the base URL" not in out
    assert "a tool's own call to its service: give the tool a target: in the scenario" in out
