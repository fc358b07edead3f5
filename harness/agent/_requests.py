"""From the trusted transcript to a provider request body, per dialect.

The request is a pure function of the session log's entries and the task, so a
restarted agent re-sends exactly what a fresh one would (DESIGN §3: the fake
model answers from the request, never from a counter). Two rules shape it:

* each assistant message is followed directly by the replies to its calls, in
  the model's order (seed 002 §19.5: results are committed in the model's
  order; providers reject a tool call without its reply), and a user-side entry
  written meanwhile comes after them — matched by turn id and call id (J5);
* a call whose arguments were cut or did not parse is sent back with empty
  arguments: the structured error reply says what happened, and half a JSON
  object is never replayed (seed 002 §19.1 ①, level 3).

OpenAI Chat Completions: ``messages`` with ``user``, ``assistant`` (with
``tool_calls``) and ``tool`` (with ``tool_call_id``) roles; ``tools`` as
functions. Anthropic Messages: ``messages`` whose content blocks are ``text``,
``tool_use`` and ``tool_result``; consecutive user-side blocks share one user
message, tool results first; ``tools`` with ``input_schema``; ``max_tokens``.

>>> from harness.agent._adapter import Task
>>> body = build_request("openai", Task("hi"), [UserEntry("turn_1", "hi")])
>>> body["messages"]
[{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness.agent._adapter import Task, ToolSpec
from harness.agent._messages import ToolCall
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry, UserEntry
from harness.agent._tools import ToolReply
from harness.ports import Dialect

# Built once: json.dumps builds a new encoder per call, and every request renders replies.
_SORTED = json.JSONEncoder(sort_keys=True, ensure_ascii=False)

Ordered = UserEntry | AssistantEntry | ToolReply


def model_order(entries: Sequence[Entry]) -> list[Ordered]:
    """Entries as the model must see them: each assistant message, then its replies.

    Only the first reply of a call counts (a duplicate is never sent twice).

    >>> model_order([UserEntry("t1", "go")])
    [UserEntry(turn_id='t1', text='go', source='task')]
    """
    replies: dict[tuple[str, str], ToolReply] = {}
    for entry in entries:
        if isinstance(entry, ReplyEntry):
            replies.setdefault(entry.reply.key, entry.reply)
    ordered: list[Ordered] = []
    for entry in entries:
        if isinstance(entry, AssistantEntry):
            ordered.append(entry)
            keys = ((entry.turn_id, call.call_id) for call in entry.calls)
            ordered.extend(replies[key] for key in keys if key in replies)
        elif isinstance(entry, UserEntry):
            ordered.append(entry)
    return ordered


def build_request(
    dialect: Dialect,
    task: Task,
    entries: Sequence[Entry],
    *,
    system: str | None = None,
    cache_breakpoints: bool = False,
) -> dict[str, Any]:
    """The request body for the next turn (without ``stream``: the client adds it).

    ``cache_breakpoints`` marks Anthropic's prompt cache boundaries: the last
    tool, the system prompt and the newest message (three of the four allowed).
    OpenAI caches without marks.

    >>> build_request("anthropic", Task("hi"), [UserEntry("t1", "hi")])["max_tokens"]
    1024
    """
    ordered = model_order(entries)
    if dialect == "anthropic":
        body = _anthropic_body(task, ordered, system)
        return _with_breakpoints(body) if cache_breakpoints else body
    return _openai_body(task, ordered, system)


def reply_text(reply: ToolReply) -> str:
    """A reply's content as the text the model reads (stable bytes: sorted keys).

    >>> reply_text(ToolReply("t", "c", "ok", {"b": 1, "a": 2}))
    '{"a": 2, "b": 1}'
    """
    if isinstance(reply.content, str):
        return reply.content
    return _SORTED.encode(reply.content)


def _sent_arguments(call: ToolCall) -> str:
    return call.arguments_text if call.runnable and call.arguments_text.strip() else "{}"


# -- OpenAI Chat Completions ---------------------------------------------------------


def _openai_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(_openai_message(entry) for entry in ordered)
    body: dict[str, Any] = {
        "model": task.model,
        "messages": messages,
        "max_completion_tokens": task.max_output_tokens,
    }
    if task.tools:
        body["tools"] = [_openai_tool(spec) for spec in task.tools]
    return body


def _openai_message(entry: Ordered) -> dict[str, Any]:
    if isinstance(entry, UserEntry):
        return {"role": "user", "content": entry.text}
    if isinstance(entry, ToolReply):
        return {"role": "tool", "tool_call_id": entry.call_id, "content": reply_text(entry)}
    message: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
    if entry.calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": _sent_arguments(call)},
            }
            for call in entry.calls
        ]
    return message


def _openai_tool(spec: ToolSpec) -> dict[str, Any]:
    function = {
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.parameters),
    }
    return {"type": "function", "function": function}


# -- Anthropic Messages --------------------------------------------------------------


def _anthropic_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": task.model,
        "max_tokens": task.max_output_tokens,
        "messages": _anthropic_messages(ordered),
    }
    if system:
        body["system"] = system
    if task.tools:
        body["tools"] = [
            {"name": s.name, "description": s.description, "input_schema": dict(s.parameters)}
            for s in task.tools
        ]
    return body


def _anthropic_messages(ordered: list[Ordered]) -> list[dict[str, Any]]:
    """Group blocks by role; user-side blocks in a row share one message."""
    messages: list[dict[str, Any]] = []
    for entry in ordered:
        role = "assistant" if isinstance(entry, AssistantEntry) else "user"
        blocks = _anthropic_blocks(entry)
        if messages and messages[-1]["role"] == role == "user":
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages


def _anthropic_blocks(entry: Ordered) -> list[dict[str, Any]]:
    if isinstance(entry, UserEntry):
        return [{"type": "text", "text": entry.text}]
    if isinstance(entry, ToolReply):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": entry.call_id,
            "content": reply_text(entry),
        }
        if entry.status != "ok":
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if entry.text:
        blocks.append({"type": "text", "text": entry.text})
    for call in entry.calls:
        arguments = dict(call.arguments) if call.runnable else {}
        blocks.append(
            {"type": "tool_use", "id": call.call_id, "name": call.name, "input": arguments}
        )
    # An empty assistant message is rejected by the API; say so instead.
    return blocks or [{"type": "text", "text": "(no output)"}]


_EPHEMERAL: dict[str, Any] = {"type": "ephemeral"}


def _with_breakpoints(body: dict[str, Any]) -> dict[str, Any]:
    """Mark the stable prefix (tools, system) and the newest message for Anthropic's cache."""
    if body.get("tools"):
        body["tools"][-1] = {**body["tools"][-1], "cache_control": _EPHEMERAL}
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": _EPHEMERAL}]
    if body["messages"]:
        blocks = body["messages"][-1]["content"]
        blocks[-1] = {**blocks[-1], "cache_control": _EPHEMERAL}
    return body
