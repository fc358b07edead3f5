"""A mail assistant on smolagents, as its guided tour shows for a tool-calling agent.

``ToolCallingAgent`` with ``@tool``-wrapped functions (their docstrings give the
arguments' descriptions) on ``OpenAIServerModel``, pointed at ``OPENAI_BASE_URL`` with
``OPENAI_API_KEY``. The run ends when the model calls the ``final_answer`` tool.
"""

from __future__ import annotations

import os

from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from examples.frameworks import tools

model = OpenAIServerModel(
    model_id="gpt-4o-mini",
    api_base=os.environ.get("OPENAI_BASE_URL"),
    api_key=os.environ.get("OPENAI_API_KEY"),
)


def main(prompt: str) -> str:
    agent = ToolCallingAgent(
        tools=[tool(tools.send_mail), tool(tools.append_note), tool(tools.read_outbox)],
        model=model,
    )
    return str(agent.run(prompt))
