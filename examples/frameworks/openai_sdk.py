"""The baseline: the same mail assistant on the official ``openai`` SDK, with no framework.

``AsyncOpenAI()`` from the environment, ``chat.completions.create`` with the tools'
JSON schemas, each call run and its result sent back as a ``tool`` message, until the
model answers in text: the loop every framework here wraps. The benchmark
``benchmarks/bench_framework_agents.py`` measures each framework's cases beside this
one's, on the same scenarios.
"""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI

from examples.frameworks import tools

FUNCTIONS = {"send_mail": tools.send_mail, "append_note": tools.append_note,
             "read_outbox": tools.read_outbox}
STRING = {"type": "string"}
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "send_mail", "description": "Send an e-mail.",
     "parameters": {"type": "object", "required": ["to", "subject", "body"],
                    "properties": {"to": STRING, "subject": STRING, "body": STRING}}}},
    {"type": "function", "function": {"name": "append_note", "description": "Note a line.",
     "parameters": {"type": "object", "required": ["text"], "properties": {"text": STRING}}}},
    {"type": "function", "function": {"name": "read_outbox", "description": "Today's mail.",
     "parameters": {"type": "object", "properties": {}}}},
]


async def main(prompt: str) -> str:
    client = AsyncOpenAI()
    messages: list[Any] = [
        {"role": "system", "content": "You are an office assistant. Use the tools."},
        {"role": "user", "content": prompt},
    ]
    while True:
        response = await client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            result = FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(result)})
