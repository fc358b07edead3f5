"""J3 on a plain main(prompt): a tool-call log with raw arguments fails, a redacting one passes."""

from __future__ import annotations

from collections.abc import Callable

from harness.runner import CaseResult

from .conftest import OPENAI_AGENT, TOOLS
from .test_plain_agent import mail_scenario, run

SECRET_TOOLS = TOOLS.replace("send_mail(to: str, body: str)",
                             "send_mail(to: str, body: str, api_key: str, pin: str)")
RUN_TOOL = '            result = FUNCTIONS[call["name"]](**json.loads(call["args"]))\n'
# The agent keeps a log of its tool calls, rewritten whole before each call.
LOGGED = '''            arguments = shown(json.loads(call["args"]))
            CALLS.append({{"tool": call["name"], "arguments": arguments}})
            with open("tool-calls.json", "w") as log:
                json.dump(CALLS, log)
'''
RAW = "CALLS = []\n\n\ndef shown(arguments):\n    return arguments\n"
REDACTING = ('CALLS = []\nSECRET = {{"api_key", "pin"}}\n\n\ndef shown(arguments):\n'
             '    return {{k: "***" if k in SECRET else v for k, v in arguments.items()}}\n')


def logging_agent(shown: str) -> str:
    assert RUN_TOOL in OPENAI_AGENT
    source = OPENAI_AGENT.replace(RUN_TOOL, LOGGED + RUN_TOOL)
    return source.replace("SENT_THIS_PROCESS = []\n", f"SENT_THIS_PROCESS = []\n{shown}")


def run_logging(make: Callable[..., str], shown: str) -> CaseResult:
    package = make(tools=SECRET_TOOLS, agent=logging_agent(shown))
    call = {"tool": "mail", "args": {"to": "cfo@example.com", "body": "inv 7",
                                     "api_key": "sk-live-7f3a9c", "pin": "4711-0815"}}
    tools = {"mail": {"kind": "send", "secret": ["pin"],
                      "target": f"{package}.tools:send_mail"}}
    return run(package, mail_scenario(package, tools=tools, model=[
        {"turn": 1, "calls": [call]}, {"turn": 2, "text": "Sent."}]))


def j3(result: CaseResult) -> tuple[str, str, tuple[str, ...]]:
    verdict = next(v for v in result.verdicts if v.invariant == "J3")
    return verdict.status, verdict.message, verdict.evidence


def test_a_plain_agent_that_logs_raw_arguments_fails_j3_without_the_secret_in_the_evidence(
        openai_agent: Callable[..., str]) -> None:
    status, message, evidence = j3(run_logging(openai_agent, RAW))
    assert status == "fail"
    assert message == ("mail.api_key found in /agent/tool-calls.json at byte 86; a durable "
                       "file must never hold a secret argument")
    assert evidence == ("mail.api_key in /agent/tool-calls.json at byte 86 (after incarnation 1)",
                        "mail.pin in /agent/tool-calls.json at byte 111 (after incarnation 1)")
    assert not any(secret in " ".join((message, *evidence))
                   for secret in ("sk-live-7f3a9c", "4711-0815"))


def test_a_plain_agent_that_redacts_its_log_passes_j3(openai_agent: Callable[..., str]) -> None:
    status, message, _ = j3(run_logging(openai_agent, REDACTING))
    assert (status, message) == (
        "pass", "mail.api_key, mail.pin in none of the agent's 1 file(s)")


def test_an_agent_without_a_log_wrote_no_file_to_look_in(
        openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    call = {"tool": "mail", "args": {"to": "cfo@example.com", "body": "inv 7",
                                     "password": "correct-horse"}}
    scenario = mail_scenario(package, model=[{"turn": 1, "calls": [call]},
                                             {"turn": 2, "text": "Sent."}])
    status, message, _ = j3(run(package, scenario))
    assert (status, message) == ("unknown", "the agent wrote no durable file to look in")
