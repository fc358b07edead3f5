"""A mail assistant on LangChain 1.x, as its agents and short-term memory docs show.

``create_agent("openai:gpt-4o-mini", tools=...)`` (the model string picks ``ChatOpenAI``,
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment) with the plain tool
functions and a system prompt, checkpointed by LangGraph's ``AsyncSqliteSaver`` in
``checkpoints.sqlite`` in the working folder under one thread id, so a second run goes
on with the same conversation. ``ainvoke`` runs it.
"""

from __future__ import annotations

from langchain.agents import create_agent
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from examples.frameworks import tools

CONFIG = {"configurable": {"thread_id": "mail"}}


async def main(prompt: str) -> str:
    async with AsyncSqliteSaver.from_conn_string("checkpoints.sqlite") as checkpointer:
        agent = create_agent(
            "openai:gpt-4o-mini",
            tools=[tools.send_mail, tools.append_note, tools.read_outbox],
            system_prompt="You are an office assistant. Use the tools to send mail and keep notes.",
            checkpointer=checkpointer,
        )
        result = await agent.ainvoke({"messages": [{"role": "user", "content": prompt}]}, CONFIG)
    return str(result["messages"][-1].content)
