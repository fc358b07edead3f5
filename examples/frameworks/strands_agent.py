"""A mail assistant on Strands Agents, as its quickstart and model-provider docs show.

``Agent`` on ``OpenAIModel`` (the openai client, its key and address from
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``), the plain functions wrapped with ``@tool``
(their docstrings give the descriptions), and a ``FileSessionManager`` that keeps the
conversation in ``./sessions`` under the session ``mail``, so a restart resumes it.
``agent.invoke_async(prompt)`` runs the tool loop.
"""

from __future__ import annotations

from typing import Any

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.session.file_session_manager import FileSessionManager

from examples.frameworks import tools


@tool
def send_mail(to: str, subject: str, body: str) -> dict[str, Any]:
    """Send an e-mail.

    Args:
        to: The recipient's address.
        subject: The subject line.
        body: The text of the mail.
    """
    return tools.send_mail(to, subject, body)


@tool
def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes.

    Args:
        text: The line to append.
    """
    return tools.append_note(text)


@tool
def read_outbox() -> dict[str, Any]:
    """List the e-mails sent today."""
    return tools.read_outbox()


async def main(prompt: str) -> str:
    agent = Agent(
        model=OpenAIModel(model_id="gpt-4o-mini"),
        tools=[send_mail, append_note, read_outbox],
        system_prompt="You are an office assistant. Use the tools.",
        session_manager=FileSessionManager(session_id="mail", storage_dir="./sessions"),
        callback_handler=None,
    )
    result = await agent.invoke_async(prompt)
    return str(result)
