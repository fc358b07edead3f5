"""The e-mail assistant of ``examples.openai_agent``, written carefully.

The same tools and the same loop, with what a crash, a flaky network and a cut answer
teach:

- ``state.json`` is replaced atomically (a temporary file, fsync, ``os.replace``,
  fsync of the folder), so a crash leaves the old state or the new one, never half;
- before a tool with a side effect runs, the intent to run it is saved; a restart that
  finds an intent without a result does not run the tool again but tells the model the
  outcome is unknown, so it can look before it repeats anything;
- a stream cut after its headers (a reset, no final chunk) is retried with backoff, and
  nothing from the cut attempt is kept;
- tool calls from an answer cut at the output limit (``finish_reason == "length"``) are
  not run: the model is told to send them again;
- the client has a timeout, so a stalled connection does not hang the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI

from examples.openai_agent.agent import MODEL, SYSTEM, TOOLS, run_tool

STATE_FILE = "state.json"
ATTEMPTS = 5
# Tools that change the world; read_outbox only looks, so it may simply run again.
SIDE_EFFECTS = {"send_mail", "append_note"}


class IncompleteStream(Exception):
    """The stream ended without a finish reason: the answer is not whole."""


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
        "started": {},
        "finish_reason": None,
        "answer": None,
    }


def save_state(state: dict[str, Any]) -> None:
    """Replace ``state.json`` atomically and durably."""
    folder = os.path.dirname(os.path.abspath(STATE_FILE))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".state-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, STATE_FILE)
    except Exception:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


async def complete_once(client: AsyncOpenAI, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed completion; raises :class:`IncompleteStream` if it was cut short."""
    stream = await client.chat.completions.create(  # type: ignore[call-overload]
        model=MODEL,
        messages=messages,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    text = ""
    calls: dict[int, dict[str, Any]] = {}
    finish_reason = None
    async for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish_reason = choice.finish_reason or finish_reason
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
    if finish_reason is None:
        raise IncompleteStream("the stream ended before its finish reason")
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {"message": message, "finish_reason": finish_reason}


async def complete(client: AsyncOpenAI, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`complete_once`, retried with backoff when the connection fails mid-stream.

    The SDK retries failed requests itself, but not a stream that breaks after its
    200 headers: that is retried here, from the start, keeping nothing of the cut one.
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await complete_once(client, messages)
        except (httpx2.TransportError, openai.APIConnectionError, IncompleteStream):
            if attempt == ATTEMPTS:
                raise
            await asyncio.sleep(min(30.0, 2.0**attempt) * random.uniform(0.5, 1.0))
    raise AssertionError("unreachable")


def unknown_outcome(call: dict[str, Any]) -> str:
    what = "the send" if call["function"]["name"] == "send_mail" else "the change"
    return json.dumps({
        "status": "unknown",
        "detail": f"The run was interrupted while {call['function']['name']} was running: "
        f"{what} may or may not have happened. Check the outbox before doing it again.",
    })


def not_run(call: dict[str, Any], status: str, why: str) -> str:
    return json.dumps({
        "status": status,
        "detail": f"{call['function']['name']} was not run: {why}. Send the call again.",
    })


def run_call(state: dict[str, Any], call: dict[str, Any]) -> str:
    name = call["function"]["name"]
    try:
        args = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        return not_run(call, "not_started", "its arguments are not valid JSON")
    if name in SIDE_EFFECTS:
        # Saved before the tool runs: after a crash, this says the outcome is unknown.
        state["started"][call["id"]] = name
        save_state(state)
    try:
        return json.dumps(run_tool(name, args))
    except Exception as error:
        return json.dumps({"status": "failed", "detail": f"{type(error).__name__}: {error}"})


async def main(prompt: str) -> str:
    client = AsyncOpenAI(timeout=openai.Timeout(60.0, connect=10.0), max_retries=3)
    state = load_state(prompt)
    if state["answer"] is not None:
        return str(state["answer"])

    while True:
        last = waiting_answer(state["messages"])
        if last is None:
            answer = await complete(client, state["messages"])
            last = answer["message"]
            state["messages"].append(last)
            state["finish_reason"] = answer["finish_reason"]
            save_state(state)
        if not last.get("tool_calls"):
            state["answer"] = last["content"] or ""
            save_state(state)
            return str(state["answer"])
        answered = {m["tool_call_id"] for m in state["messages"] if m["role"] == "tool"}
        for call in last["tool_calls"]:
            if call["id"] in answered:
                continue
            if state["finish_reason"] == "length":
                content = not_run(call, "truncated", "your answer was cut at the output limit")
            elif call["id"] in state["started"]:
                content = unknown_outcome(call)
            else:
                content = run_call(state, call)
            reply = {"role": "tool", "tool_call_id": call["id"], "content": content}
            state["messages"].append(reply)
            save_state(state)


def waiting_answer(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last assistant message if it still needs handling: a final answer, or tool
    calls not all answered (a restart can land between two replies); else None."""
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    if last is None:
        return None
    if last is messages[-1]:
        return last
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    calls = last.get("tool_calls") or []
    return last if any(call["id"] not in answered for call in calls) else None
