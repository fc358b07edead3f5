"""A mail assistant on Semantic Kernel, as its agent and plugin docs show.

A ``ChatCompletionAgent`` on ``OpenAIChatCompletion`` (its default ``AsyncOpenAI``:
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment, Chat Completions) with
a plugin of ``@kernel_function`` methods over the plain functions of ``tools.py``;
function calling is automatic, the agent's default when it has plugins.
``get_response`` runs it on a ``ChatHistoryAgentThread`` of its own, kept in memory.
"""

from __future__ import annotations

from typing import Annotated, Any

from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

from examples.frameworks import tools


class MailPlugin:
    """The relay's mail and notes."""

    @kernel_function(description="Send an e-mail.")
    def send_mail(self, to: Annotated[str, "The recipient's address."],
                  subject: Annotated[str, "The subject line."],
                  body: Annotated[str, "The text of the mail."]) -> dict[str, Any]:
        return tools.send_mail(to, subject, body)

    @kernel_function(description="Append a line to the team's notes.")
    def append_note(self, text: Annotated[str, "The line to append."]) -> dict[str, Any]:
        return tools.append_note(text)

    @kernel_function(description="List the e-mails sent today.")
    def read_outbox(self) -> dict[str, Any]:
        return tools.read_outbox()


async def main(prompt: str) -> str:
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini"),
        name="MailAssistant",
        instructions="You are an office assistant. Use the tools to send mail and keep notes.",
        plugins=[MailPlugin()],
    )
    response = await agent.get_response(messages=prompt)
    return str(response.content)
