"""An e-mail assistant built with pydantic-ai, written the way a first version usually is.

A ``pydantic_ai.Agent`` on an OpenAI chat model, streamed, with the mail tools. The
conversation and the answer are kept in ``state.json`` in the working folder once the
run is over, so starting it again after it finished does not ask the model twice.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic_ai import Agent, AgentRunResultEvent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel

from examples.pydantic_ai_agent import tools

STATE_FILE = "state.json"
MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")

agent = Agent(
    OpenAIChatModel(MODEL),
    instructions="You are an office assistant. Use the tools to send mail and keep notes.",
)


@agent.tool_plain
def send_mail(to: str, body: str) -> dict[str, Any]:
    """Send an e-mail."""
    return tools.send_mail(to, body)


@agent.tool_plain
def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes."""
    return tools.append_note(text)


@agent.tool_plain
def read_outbox() -> dict[str, Any]:
    """List the e-mails sent today."""
    return tools.read_outbox()


async def main(prompt: str) -> str:
    if os.path.exists(STATE_FILE):
        with open(STATE_FILE) as f:
            state = json.load(f)
        if state["answer"] is not None:
            return str(state["answer"])

    async with agent.run_stream_events(prompt) as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                result = event.result
    history = json.loads(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    with open(STATE_FILE, "w") as f:
        json.dump({"messages": history, "answer": result.output}, f)
    return result.output
