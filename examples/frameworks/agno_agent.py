"""A mail assistant on Agno, as its agent, tools and SQLite storage docs show.

``Agent`` on ``OpenAIChat`` (Chat Completions; ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL`` from the environment through the openai client), the plain
functions of ``tools.py`` as its tools, and a ``SqliteDb`` on ``agno.db`` in the
working folder with a fixed ``session_id`` and ``add_history_to_context``, so a second
run goes on with the same session. ``arun`` runs it.
"""

from __future__ import annotations

from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.models.openai import OpenAIChat

from examples.frameworks import tools


async def main(prompt: str) -> str:
    agent = Agent(
        model=OpenAIChat(id="gpt-4o-mini"),
        instructions="You are an office assistant. Use the tools to send mail and keep notes.",
        tools=[tools.send_mail, tools.append_note, tools.read_outbox],
        db=SqliteDb(db_file="agno.db"),
        session_id="mail",
        add_history_to_context=True,
    )
    response = await agent.arun(prompt)
    return str(response.content)
