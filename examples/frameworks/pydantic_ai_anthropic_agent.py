"""A mail assistant on pydantic-ai with Anthropic's model, as its models and history docs show.

``Agent("anthropic:claude-sonnet-5-5", tools=[...])`` with the plain functions as tools
(the provider's ``AsyncAnthropic`` reads ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``);
the conversation is kept as JSON in ``history.json`` through ``ModelMessagesTypeAdapter``
after each run and handed back as ``message_history`` on the next.
"""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter

from examples.frameworks import tools

HISTORY = "history.json"

agent = Agent(
    "anthropic:claude-sonnet-5-5",
    instructions="You are an office assistant. Use the tools to send mail and keep notes.",
    tools=[tools.send_mail, tools.append_note, tools.read_outbox],
)


async def main(prompt: str) -> str:
    history = []
    if os.path.exists(HISTORY):
        with open(HISTORY, "rb") as f:
            history = ModelMessagesTypeAdapter.validate_json(f.read())
    result = await agent.run(prompt, message_history=history)
    with open(HISTORY, "wb") as f:
        f.write(result.all_messages_json())
    return result.output
