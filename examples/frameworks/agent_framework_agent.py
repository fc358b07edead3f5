"""A mail assistant on Microsoft Agent Framework, as its quickstart, tools and storage docs show.

``Agent`` on ``OpenAIChatClient`` (the Responses API; ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL`` from the environment), the plain functions of ``tools.py`` as its
tools (the framework wraps each, its docstring and type hints giving the schema), and a
``FileHistoryProvider`` that keeps the conversation in ``./history`` under the session
``mail``, so a second run goes on with the same conversation. ``agent.run(prompt,
session=session)`` runs the tool loop.
"""

from __future__ import annotations

from agent_framework import Agent, FileHistoryProvider
from agent_framework.openai import OpenAIChatClient

from examples.frameworks import tools


async def main(prompt: str) -> str:
    agent = Agent(
        client=OpenAIChatClient(model="gpt-4o-mini"),
        name="MailAssistant",
        instructions="You are an office assistant. Use the tools to send mail and keep notes.",
        tools=[tools.send_mail, tools.append_note, tools.read_outbox],
        context_providers=[FileHistoryProvider("./history")],
    )
    session = agent.create_session(session_id="mail")
    result = await agent.run(prompt, session=session)
    return result.text
