"""Unchanged agents on the Responses API and on google-genai, under the harness.

Each is written the way its SDK's quick start reads: the client takes its base URL
and key from the environment (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``), the
agent streams, runs the tools the model asks for, and loops. The world serves the
scenario's dialect; a crash right after the send shows the naive loop sends twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, run_case
from harness.scenario import Scenario

from .conftest import TOOLS, AgentPackages

SOURCE = Path("scenarios/mail.yaml")

RESPONSES_AGENT = '''
import json

from openai import AsyncOpenAI

from {package}.tools import send_mail

TOOLS = [{"type": "function", "name": "mail", "parameters": {"type": "object", "properties": {
    "to": {"type": "string"}, "body": {"type": "string"}}}}]


async def main(prompt: str) -> str:
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    items = [{"role": "user", "content": prompt}]
    while True:
        async with client.responses.stream(model="gpt-test", input=items,
                                           tools=TOOLS) as stream:
            response = await stream.get_final_response()
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id,
                          "name": call.name, "arguments": call.arguments})
            result = send_mail(**json.loads(call.arguments))
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": json.dumps(result)})
'''

GEMINI_AGENT = '''
from google import genai
from google.genai import types

from {package}.tools import send_mail

MAIL = types.FunctionDeclaration(name="mail", parameters={"type": "OBJECT", "properties": {
    "to": {"type": "STRING"}, "body": {"type": "STRING"}}})
CONFIG = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[MAIL])])


async def main(prompt: str) -> str:
    client = genai.Client()
    contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
    while True:
        text, calls = "", []
        async for chunk in await client.aio.models.generate_content_stream(
                model="gemini-test", contents=contents, config=CONFIG):
            for part in chunk.candidates[0].content.parts or []:
                text += part.text or ""
                if part.function_call:
                    calls.append(part.function_call)
        if not calls:
            return text
        contents.append(types.Content(role="model", parts=[
            types.Part(function_call=call) for call in calls]))
        contents.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                id=call.id, name=call.name, response={"output": send_mail(**call.args)}))
            for call in calls]))
'''


def mail_scenario(dialect: str, package: str) -> Scenario:
    return Scenario(
        name="mail", dialect=dialect, seed=4, description="Mail the CFO the invoice.",
        tools={"mail": {"kind": "send", "target": f"{package}.tools:send_mail"}},
        model=[{"turn": 1, "text": "Sending — 送信.",
                "calls": [{"tool": "mail", "args": {"to": "cfo@example.com", "body": "inv 7"}}]},
               {"turn": 2, "text": "Sent."}],
        faults=[{"at": {"turn": 1, "attempt": 1}, "kind": "split_inside_utf8"}],
        expect={"stop_state": "complete", "side_effects": {"mail": 1}})


def run(package: str, scenario: Scenario, crash: CrashSpec | None = None) -> CaseResult:
    entry = f"{package}.agent:main"
    case = Case(scenario.name, SOURCE, scenario.seed, crash, agent=entry)
    return run_case(case, scenario, PlainEntry(entry))


AGENTS = {"openai-responses": RESPONSES_AGENT, "gemini": GEMINI_AGENT}


@pytest.mark.parametrize("dialect", sorted(AGENTS))
def test_an_unchanged_sdk_agent_passes_on_its_dialect(
        agent_packages: AgentPackages, dialect: str) -> None:
    package = agent_packages.write({"tools": TOOLS, "agent": AGENTS[dialect]})
    result = run(package, mail_scenario(dialect, package))
    assert result.status == "pass", (result.failed_verdicts, result.stop_reason)
    assert result.side_effects == {"mail": 1}
    assert result.trace is not None
    assert result.trace.extra.final_answer == "Sent."


@pytest.mark.parametrize("dialect", sorted(AGENTS))
def test_a_crash_right_after_the_send_makes_the_naive_loop_send_twice(
        agent_packages: AgentPackages, dialect: str) -> None:
    package = agent_packages.write({"tools": TOOLS, "agent": AGENTS[dialect]})
    result = run(package, mail_scenario(dialect, package),
                 CrashSpec("after_tool:mail#1", "at", "process_killed"))
    assert result.status == "fail"
    assert {v.invariant for v in result.failed_verdicts} >= {"I1", "side_effects"}


def test_an_agent_on_the_other_openai_api_is_told_which_one_the_scenario_speaks(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"tools": TOOLS, "agent": RESPONSES_AGENT})
    result = run(package, mail_scenario("openai", package))
    assert result.status == "fail"
    assert "this scenario speaks openai; the agent called /v1/responses" in result.stop_reason


