"""A mail assistant on pydantic-ai with DBOS durable execution, as pydantic-ai's DBOS docs show.

``DBOS(config=...)`` with a SQLite system database (``dbos.sqlite``), an ``Agent`` named
``mail_assistant`` with ``capabilities=[DBOSDurability()]`` (its model requests run as
DBOS steps) and the plain functions as tools, each decorated ``DBOS.step()`` as the docs
ask of a tool that does I/O; the run is ``agent.run`` inside a ``@DBOS.workflow()``.
The workflow's id is derived from the request (``SetWorkflowID``), so a process started
again on the same request joins the same workflow: DBOS resumes it from its last
checkpointed step instead of starting afresh.
"""

from __future__ import annotations

import hashlib

from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability

from examples.frameworks import tools

dbos_config: DBOSConfig = {
    "name": "mail_assistant",
    "system_database_url": "sqlite:///dbos.sqlite",
}
DBOS(config=dbos_config)

agent = Agent(
    "openai:gpt-4o-mini",
    instructions="You are an office assistant. Use the tools to send mail and keep notes.",
    name="mail_assistant",
    tools=[DBOS.step()(tools.send_mail), DBOS.step()(tools.append_note),
           DBOS.step()(tools.read_outbox)],
    capabilities=[DBOSDurability()],
)


@DBOS.workflow()
async def answer(prompt: str) -> str:
    result = await agent.run(prompt)
    return result.output


async def main(prompt: str) -> str:
    DBOS.launch()
    with SetWorkflowID(f"mail-{hashlib.sha256(prompt.encode()).hexdigest()[:16]}"):
        return await answer(prompt)
