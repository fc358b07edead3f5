"""A mail assistant on Google's Agent Development Kit, as its quickstart and sessions docs show.

An ``Agent`` on ``gemini-2.5-flash`` with the plain tool functions (ADK wraps each in a
``FunctionTool``), a ``Runner`` over a ``DatabaseSessionService`` kept in ``sessions.db``
in the working folder (SQLite through ``aiosqlite``), the session fetched or created
under fixed ids, so a second run goes on with the same conversation, and
``runner.run_async`` iterated until the final response. The model's client is the
default ``google.genai.Client``: ``GOOGLE_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL`` from
the environment.
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types

from examples.frameworks import tools

APP_NAME, USER_ID, SESSION_ID = "mail", "office", "mail"

root_agent = Agent(
    name="mail_assistant",
    model="gemini-2.5-flash",
    instruction="You are an office assistant. Use the tools to send mail and keep notes.",
    tools=[tools.send_mail, tools.append_note, tools.read_outbox],
)


async def main(prompt: str) -> str:
    session_service = DatabaseSessionService(db_url="sqlite+aiosqlite:///./sessions.db")
    session = await session_service.get_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    if session is None:
        session = await session_service.create_session(
            app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    runner = Runner(agent=root_agent, app_name=APP_NAME, session_service=session_service)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    answer = ""
    async for event in runner.run_async(user_id=USER_ID, session_id=session.id,
                                        new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    return answer
