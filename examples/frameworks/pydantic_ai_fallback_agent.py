"""A mail assistant on pydantic-ai with a fallback model, as its FallbackModel docs show.

``FallbackModel("openai:gpt-4o-mini", "openai:gpt-4.1-mini")``: a request the first model
fails with an API error goes to the next one (``fallback_on`` left at its default). The
tools and the history file are ``pydantic_ai_agent``'s.
"""

from __future__ import annotations

import os

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.fallback import FallbackModel

from examples.frameworks import tools

HISTORY = "history.json"

agent = Agent(
    FallbackModel("openai:gpt-4o-mini", "openai:gpt-4.1-mini"),
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
