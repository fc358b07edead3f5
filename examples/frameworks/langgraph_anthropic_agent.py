"""A mail assistant on LangGraph with Anthropic's model, as its agent and persistence docs show.

``create_react_agent`` on langchain-anthropic's ``ChatAnthropic`` (``ANTHROPIC_API_KEY``
and ``ANTHROPIC_BASE_URL`` from the environment) with the plain tool functions,
checkpointed by ``SqliteSaver`` in ``checkpoints.sqlite`` in the working folder under one
thread id, so a second run goes on with the same conversation.
"""

from __future__ import annotations

from langchain_anthropic import ChatAnthropic
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

from examples.frameworks import tools

model = ChatAnthropic(model="claude-sonnet-5-5")
CONFIG = {"configurable": {"thread_id": "mail"}}


def main(prompt: str) -> str:
    with SqliteSaver.from_conn_string("checkpoints.sqlite") as checkpointer:
        agent = create_react_agent(
            model,
            tools=[tools.send_mail, tools.append_note, tools.read_outbox],
            prompt="You are an office assistant. Use the tools to send mail and keep notes.",
            checkpointer=checkpointer,
        )
        result = agent.invoke({"messages": [{"role": "user", "content": prompt}]}, CONFIG)
    return str(result["messages"][-1].content)
