"""The mail assistant on CrewAI as its quickstart writes a crew: memory off, its default.

An ``Agent`` with a role, a goal and a backstory, the tools wrapped by ``@tool``, one
``Task`` and a sequential ``Crew`` with ``verbose=True`` and no ``memory`` (the
template ``crewai create crew`` writes, inline instead of in YAML), started by
``kickoff``. ``LLM("gpt-4o-mini")`` is CrewAI's own OpenAI provider, which reads
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment.
``crewai_agent.py`` is the same crew with ``memory=True``.

CrewAI pins ``openai<3`` (and ``mcp<2``), so it does not install beside this project's
test extra: run it from an environment of its own (see ``examples/frameworks/README.md``).
"""

from __future__ import annotations

from typing import Any

from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool

from examples.frameworks import tools


@tool("send_mail")
def send_mail(to: str, subject: str, body: str) -> dict[str, Any]:
    """Send an e-mail to `to` with `subject` and `body`."""
    return tools.send_mail(to, subject, body)


@tool("read_outbox")
def read_outbox() -> dict[str, Any]:
    """List the e-mails the relay has accepted today."""
    return tools.read_outbox()


@tool("append_note")
def append_note(text: str) -> dict[str, Any]:
    """Append a line to the team's notes."""
    return tools.append_note(text)


def main(prompt: str) -> str:
    assistant = Agent(
        role="Office assistant",
        goal="Carry out the user's office requests with the tools at hand",
        backstory="You handle the team's mail and notes.",
        tools=[send_mail, read_outbox, append_note],
        llm=LLM(model="gpt-4o-mini"),
        verbose=True,
    )
    request = Task(
        description="{request}",
        expected_output="A short confirmation of what was done.",
        agent=assistant,
    )
    crew = Crew(agents=[assistant], tasks=[request], process=Process.sequential, verbose=True)
    return str(crew.kickoff(inputs={"request": prompt}).raw)
