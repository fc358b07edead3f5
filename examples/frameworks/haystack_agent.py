"""A mail assistant on Haystack, as its ``Agent`` docs show.

The ``Agent`` component on an ``OpenAIChatGenerator`` (``OPENAI_API_KEY`` as its
``Secret``, ``OPENAI_BASE_URL`` read by the ``openai`` client underneath), each plain
tool function made a ``Tool`` by ``create_tool_from_function``, and ``agent.run`` with
the user's message; the answer is the last message's text. Haystack keeps the
conversation in the run's messages only: nothing on disk. Its usage telemetry is left
on, as it is by default.
"""

from __future__ import annotations

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import create_tool_from_function

from examples.frameworks import tools


def main(prompt: str) -> str:
    agent = Agent(
        chat_generator=OpenAIChatGenerator(model="gpt-4o-mini"),
        tools=[create_tool_from_function(tools.send_mail),
               create_tool_from_function(tools.append_note),
               create_tool_from_function(tools.read_outbox)],
        system_prompt="You are an office assistant. Use the tools to send mail and keep notes.",
    )
    result = agent.run(messages=[ChatMessage.from_user(prompt)])
    return result["last_message"].text or ""
