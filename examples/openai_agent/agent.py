"""An e-mail assistant on the official ``openai`` SDK, written the way a first version usually is.

It streams a chat completion, runs the tools the model asks for, and loops until the
model answers in text. Its progress lives in ``state.json`` in the working folder, so
a run that was interrupted picks up where it was when it is started again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI

from examples.openai_agent import tools

STATE_FILE = "state.json"
MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
SYSTEM = "You are an office assistant. Use the tools to send mail and keep notes."

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "send_mail",
            "description": "Send an e-mail.",
            "parameters": {
                "type": "object",
                "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
                "required": ["to", "body"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "append_note",
            "description": "Append a line to the team's notes.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_outbox",
            "description": "List the e-mails sent today.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def load_state(prompt: str) -> dict[str, Any]:
    if os.path.exists(STATE_FILE):
        with open(STATE_FILE) as f:
            state: dict[str, Any] = json.load(f)
            return state
    return {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
        ],
        "done": [],
        "answer": None,
    }


def save_state(state: dict[str, Any]) -> None:
    with open(STATE_FILE, "w") as f:
        json.dump(state, f)


def run_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    functions: dict[str, Callable[..., dict[str, Any]]] = {
        "send_mail": tools.send_mail,
        "append_note": tools.append_note,
        "read_outbox": tools.read_outbox,
    }
    return functions[name](**args)


async def complete(client: AsyncOpenAI, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed completion, put back together into an assistant message."""
    stream = await client.chat.completions.create(  # type: ignore[call-overload]
        model=MODEL,
        messages=messages,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(
                    delta.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if delta.id:
                    call["id"] = delta.id
                if delta.function and delta.function.name:
                    call["function"]["name"] = delta.function.name
                if delta.function and delta.function.arguments:
                    call["function"]["arguments"] += delta.function.arguments
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


async def main(prompt: str) -> str:
    client = AsyncOpenAI()
    state = load_state(prompt)
    if state["answer"] is not None:
        return str(state["answer"])

    while True:
        last = state["messages"][-1]
        if last["role"] != "assistant":
            last = await complete(client, state["messages"])
            state["messages"].append(last)
            save_state(state)
        if not last.get("tool_calls"):
            state["answer"] = last["content"] or ""
            save_state(state)
            return str(state["answer"])
        for call in last["tool_calls"]:
            if call["id"] in state["done"]:
                continue
            args = json.loads(call["function"]["arguments"] or "{}")
            result = run_tool(call["function"]["name"], args)
            state["messages"].append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
            )
            state["done"].append(call["id"])
            save_state(state)
