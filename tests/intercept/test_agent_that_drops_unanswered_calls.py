"""An agent that keeps every event and leaves unanswered calls out of its requests.

Google ADK's sessions work so: each event is stored as it happens, and a request is
rebuilt from them, a function call with no response (the one a crash cut off) dropped
and the rest paired by id. After a crash right after the send the restart asks turn 1
again. A real model's new call has a new id; given the old one, the agent paired its
old call with the new response and sent a history the API refuses (400), a failure of
the fake's, not the agent's. What the agent really does: it sends again (I1, I3) and
completes.
"""

from __future__ import annotations

from pathlib import Path

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, run_case
from harness.scenario import Scenario

from .conftest import TOOLS, AgentPackages

AGENT = '''
import json
import os

from openai import AsyncOpenAI

from {package}.tools import send_mail

STRING = {{"type": "string"}}
TOOLS = [{{"type": "function", "function": {{"name": "mail", "parameters": {{
    "type": "object", "properties": {{"to": STRING, "body": STRING}}}}}}}}]


def save(events):
    with open("events.json", "w") as file:
        json.dump(events, file)


def request(events):
    """The stored events as a request: calls without a response left out, by id."""
    answered = {{e["tool_call_id"] for e in events if e["role"] == "tool"}}
    messages = []
    for event in events:
        if event.get("tool_calls"):
            calls = [c for c in event["tool_calls"] if c["id"] in answered]
            if not calls:
                continue
            event = {{**event, "tool_calls": calls}}
        messages.append(event)
    return messages


async def main(prompt: str) -> str:
    client = AsyncOpenAI(max_retries=0)
    events = json.load(open("events.json")) if os.path.exists("events.json") else []
    events.append({{"role": "user", "content": prompt}})
    save(events)
    while True:
        response = await client.chat.completions.create(
            model="gpt-test", messages=request(events), tools=TOOLS)
        message = response.choices[0].message
        events.append(message.model_dump(exclude_none=True))
        save(events)
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            result = send_mail(**json.loads(call.function.arguments))
            events.append({{"role": "tool", "tool_call_id": call.id,
                           "content": json.dumps(result)}})
            save(events)
'''


def mail(package: str) -> Scenario:
    return Scenario(
        name="mail", dialect="openai", seed=5, description="Mail ops the deploy.",
        tools={"mail": {"kind": "send", "target": f"{package}.tools:send_mail"}},
        model=[{"turn": 1, "calls": [{"tool": "mail", "args": {"to": "ops@example.com",
                                                                "body": "deploy 42"}}]},
               {"turn": 2, "text": "Sent."}],
        expect={"stop_state": "complete", "side_effects": {"mail": 1}})


def run(package: str, crash: CrashSpec | None) -> CaseResult:
    scenario = mail(package)
    entry = f"{package}.agent:main"
    case = Case(scenario.name, Path("scenarios/mail.yaml"), scenario.seed, crash, agent=entry)
    return run_case(case, scenario, PlainEntry(entry))


def test_the_restart_sends_again_and_completes_as_the_agent_really_would(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"tools": TOOLS, "agent": AGENT})
    assert run(package, None).status == "pass"
    result = run(package, CrashSpec("after_tool:mail#1", "at", "process_killed"))
    assert result.stop_reason == "main returned its final answer"
    assert {v.invariant for v in result.failed_verdicts} == {"I1", "I3", "side_effects"}
    i3 = next(v for v in result.failed_verdicts if v.invariant == "I3")
    assert "call call_t1_0_r1 ran again in incarnation 2 (first in 1)" in i3.evidence[0]




def test_a_crash_between_the_saved_call_and_its_run_sends_once_as_a_real_model_would_let_it(
        agent_packages: AgentPackages) -> None:
    # The crash lands after the agent stored the model's call, before the tool ran. The
    # restart's request leaves the stored call out (it has no response) and carries the
    # prompt again: not the request that got the call, so the model's new call gets an
    # id of its own. With the first call's id the agent paired its stored call with the
    # new call's response, kept both in the next request, and the fake's 400 ended the
    # run: a failure no real model, whose ids are never given twice, brings about.
    package = agent_packages.write({"tools": TOOLS, "agent": AGENT})
    result = run(package, CrashSpec("events:write#2", "after", "process_killed"))
    assert result.crash_reached
    assert result.stop_reason == "main returned its final answer", result.stop_reason
    assert result.status == "pass", [(v.invariant, v.evidence) for v in result.failed_verdicts]
