"""The mail assistant on AutoGen (``autogen-agentchat`` with ``autogen-ext[openai]``), as
its quickstart writes one.

An ``AssistantAgent`` on ``OpenAIChatCompletionClient(model="gpt-4o-mini")`` (which reads
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment through the openai SDK),
the tools passed as plain functions, ``reflect_on_tool_use=True`` and
``model_client_stream=True`` as in the quickstart, run with ``agent.run(task=...)``. Its
state is kept the way AutoGen's "Managing State" guide keeps it: ``save_state()`` dumped
to ``agent_state.json`` after the run, and ``load_state()`` from it before the next.
"""

from __future__ import annotations

import json
import os
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

from examples.frameworks import tools

STATE_FILE = "agent_state.json"


async def send_mail(to: str, subject: str, body: str) -> dict[str, Any]:
    """Send an e-mail to `to` with `subject` and `body`."""
    return tools.send_mail(to, subject, body)


async def read_outbox() -> dict[str, Any]:
    """List the e-mails the relay has accepted today."""
    return tools.read_outbox()


async def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes."""
    return tools.append_note(text)


async def main(prompt: str) -> str:
    model_client = OpenAIChatCompletionClient(model="gpt-4o-mini")
    agent = AssistantAgent(
        name="office_assistant",
        model_client=model_client,
        tools=[send_mail, read_outbox, append_note],
        system_message="You are an office assistant. Use the tools.",
        reflect_on_tool_use=True,
        model_client_stream=True,
    )
    if os.path.exists(STATE_FILE):
        with open(STATE_FILE) as file:
            await agent.load_state(json.load(file))
    result = await agent.run(task=prompt)
    with open(STATE_FILE, "w") as file:
        json.dump(await agent.save_state(), file)
    await model_client.close()
    return str(result.messages[-1].content)
