"""A mail assistant on the OpenAI Agents SDK, as its quickstart and sessions docs show.

``Agent`` with ``function_tool`` tools, ``Runner.run`` with a ``SQLiteSession`` kept in
``conversations.db`` in the working folder, so a second run goes on with the same
conversation. Tracing is left on, as it is by default. The client is the SDK's default
``AsyncOpenAI()``: ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` from the environment, the
Responses API.
"""

from __future__ import annotations

from agents import Agent, Runner, SQLiteSession, function_tool

from examples.frameworks import tools

agent = Agent(
    name="Mail assistant",
    instructions="You are an office assistant. Use the tools to send mail and keep notes.",
    model="gpt-4.1-mini",
    tools=[function_tool(tools.send_mail), function_tool(tools.append_note),
           function_tool(tools.read_outbox)],
)


async def main(prompt: str) -> str:
    session = SQLiteSession("mail", "conversations.db")
    result = await Runner.run(agent, prompt, session=session)
    return str(result.final_output)
