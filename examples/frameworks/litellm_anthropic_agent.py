"""A mail assistant on litellm with an Anthropic model, as its streaming and tool-calling docs show.

``litellm.acompletion(model="anthropic/...", stream=True, tools=...)`` with OpenAI tool
schemas and its default transport (the key and address from ``ANTHROPIC_API_KEY`` /
``ANTHROPIC_BASE_URL``); the chunks are printed as they come and put back together by
``litellm.stream_chunk_builder``; each tool call runs and its result goes back as a
``tool`` message, until the model answers in text.
"""

from __future__ import annotations

import json
from typing import Any

import litellm

from examples.frameworks import tools

MODEL = "anthropic/claude-sonnet-5-5"


def _schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties,
                       "required": list(properties)}}}


TOOLS = [
    _schema("send_mail", "Send an e-mail.", {
        "to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}}),
    _schema("append_note", "Append a line to the team's notes.", {"text": {"type": "string"}}),
    _schema("read_outbox", "List the e-mails sent today.", {}),
]


def _run(name: str, arguments: dict[str, Any]) -> Any:
    functions = {"send_mail": tools.send_mail, "append_note": tools.append_note,
                 "read_outbox": tools.read_outbox}
    return functions[name](**arguments)


async def main(prompt: str) -> str:
    messages: list[Any] = [
        {"role": "system", "content": "You are an office assistant. Use the tools."},
        {"role": "user", "content": prompt},
    ]
    while True:
        response = await litellm.acompletion(model=MODEL, messages=messages, tools=TOOLS,
                                             stream=True)
        chunks = []
        async for chunk in response:
            chunks.append(chunk)
            if chunk.choices[0].delta.content:
                print(chunk.choices[0].delta.content, end="")
        message = litellm.stream_chunk_builder(chunks, messages=messages).choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return str(message.content)
        for call in message.tool_calls:
            result = _run(call.function.name, json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "name": call.function.name, "content": json.dumps(result)})
