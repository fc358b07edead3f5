"""A mail assistant on Google's ``google-genai`` SDK, with its automatic function calling.

As the SDK's function-calling docs show: ``genai.Client()`` (the key and address from
``GOOGLE_API_KEY`` / ``GOOGLE_GEMINI_BASE_URL``), and ``generate_content`` on
``gemini-2.5-flash`` with the plain Python functions as ``tools`` in a
``GenerateContentConfig``: the SDK builds their declarations from the signatures and
docstrings, runs each call the model asks for, sends the result back, and returns the
model's final text (``response.text``). Nothing is kept between runs.
"""

from __future__ import annotations

from google import genai
from google.genai import types

from examples.frameworks import tools

MODEL = "gemini-2.5-flash"
INSTRUCTIONS = "You are an office assistant. Use the tools to send mail and keep notes."


async def main(prompt: str) -> str:
    client = genai.Client()
    response = await client.aio.models.generate_content(
        model=MODEL,
        contents=prompt,
        config=types.GenerateContentConfig(
            system_instruction=INSTRUCTIONS,
            tools=[tools.send_mail, tools.append_note, tools.read_outbox],
        ),
    )
    return response.text or ""
