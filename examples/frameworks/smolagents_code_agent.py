"""A mail assistant on smolagents' ``CodeAgent``, as its guided tour shows.

``CodeAgent`` with ``@tool``-wrapped functions (their docstrings give the arguments'
descriptions) on ``OpenAIServerModel``, pointed at ``OPENAI_BASE_URL`` with
``OPENAI_API_KEY``. The model answers in text: a thought, then Python code between
``<code>`` and ``</code>`` that calls the tools as functions, which smolagents runs in
its local Python executor; the run ends when the code calls ``final_answer(...)``.
"""

from __future__ import annotations

import os

from smolagents import CodeAgent, OpenAIServerModel, tool

from examples.frameworks import tools

model = OpenAIServerModel(
    model_id="gpt-4o-mini",
    api_base=os.environ.get("OPENAI_BASE_URL"),
    api_key=os.environ.get("OPENAI_API_KEY"),
)


def main(prompt: str) -> str:
    agent = CodeAgent(
        tools=[tool(tools.send_mail), tool(tools.append_note), tool(tools.read_outbox)],
        model=model,
    )
    return str(agent.run(prompt))
