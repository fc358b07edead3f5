"""An e-mail assistant on the ``anthropic`` SDK, written the way a first version usually is.

It streams a message with ``messages.stream``, runs the tools the model asks for, and
loops until the model stops asking. Its progress lives in ``state.json`` in the working
folder, so a run that was interrupted picks up where it was when it is started again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from anthropic import AsyncAnthropic

from examples.anthropic_agent import tools

STATE_FILE = "state.json"
MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-6")
SYSTEM = "You are an office assistant. Use the tools to send mail and keep notes."

TOOLS: list[dict[str, Any]] = [
    {
        "name": "send_mail",
        "description": "Send an e-mail.",
        "input_schema": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to", "body"],
        },
    },
    {
        "name": "append_note",
        "description": "Append a line to the team's notes.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "read_outbox",
        "description": "List the e-mails sent today.",
        "input_schema": {"type": "object", "properties": {}},
    },
]


def load_state(prompt: str) -> dict[str, Any]:
    if os.path.exists(STATE_FILE):
        with open(STATE_FILE) as f:
            state: dict[str, Any] = json.load(f)
            return state
    return {"messages": [{"role": "user", "content": prompt}], "results": [], "answer": None}


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


async def ask(client: AsyncAnthropic, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed message, as the assistant turn to keep in the conversation."""
    async with client.messages.stream(
        model=MODEL,
        max_tokens=1024,
        system=SYSTEM,
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    ) as stream:
        message = await stream.get_final_message()
    content = [block.model_dump(exclude_none=True) for block in message.content]
    return {"role": "assistant", "content": content}


async def main(prompt: str) -> str:
    client = AsyncAnthropic()
    state = load_state(prompt)
    if state["answer"] is not None:
        return str(state["answer"])

    while True:
        if state["messages"][-1]["role"] == "user":
            state["messages"].append(await ask(client, state["messages"]))
            save_state(state)
        blocks = state["messages"][-1]["content"]
        calls = [block for block in blocks if block["type"] == "tool_use"]
        if not calls:
            state["answer"] = "".join(b["text"] for b in blocks if b["type"] == "text")
            save_state(state)
            return str(state["answer"])
        done = {result["tool_use_id"] for result in state["results"]}
        for call in calls:
            if call["id"] in done:
                continue
            result = run_tool(call["name"], call["input"])
            state["results"].append(
                {"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(result)}
            )
            save_state(state)
        state["messages"].append({"role": "user", "content": state["results"]})
        state["results"] = []
        save_state(state)
