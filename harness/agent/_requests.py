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
OpenAI Responses: ``input`` items (messages, ``function_call``,
``function_call_output``) and ``instructions``. Gemini: ``contents`` of
``user`` and ``model`` turns whose parts are ``text``, ``functionCall`` and
``functionResponse``, and ``systemInstruction``. Each builder is one entry of
the agent's dialect table (:mod:`._dialects`).

>>> from harness.ports import Task
>>> openai_body(Task("hi"), [UserEntry("turn_1", "hi")], None)["messages"]
[{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from harness.agent._messages import ToolCall
from harness.agent._session_log import AssistantEntry, Entry, ReplyEntry, UserEntry
from harness.agent._tools import ToolReply
from harness.ports import Task, ToolSpec

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


def openai_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
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


def anthropic_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
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


def with_breakpoints(body: dict[str, Any]) -> dict[str, Any]:
    """Mark the stable prefix (tools, system) and the newest message for Anthropic's cache."""
    if body.get("tools"):
        body["tools"][-1] = {**body["tools"][-1], "cache_control": _EPHEMERAL}
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": _EPHEMERAL}]
    if body["messages"]:
        blocks = body["messages"][-1]["content"]
        blocks[-1] = {**blocks[-1], "cache_control": _EPHEMERAL}
    return body


# -- OpenAI Responses ----------------------------------------------------------------


def responses_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
    """``input`` items: messages, ``function_call`` and ``function_call_output``.

    ``store: false``: the conversation is sent whole each turn, as for the others,
    so a restarted agent depends on nothing kept by the provider.
    """
    body: dict[str, Any] = {
        "model": task.model,
        "input": [item for entry in ordered for item in _responses_items(entry)],
        "max_output_tokens": task.max_output_tokens,
        "store": False,
    }
    if system:
        body["instructions"] = system
    if task.tools:
        body["tools"] = [{"type": "function", "name": s.name, "description": s.description,
                          "parameters": dict(s.parameters), "strict": False}
                         for s in task.tools]
    return body


def _responses_items(entry: Ordered) -> list[dict[str, Any]]:
    if isinstance(entry, UserEntry):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, ToolReply):
        return [{"type": "function_call_output", "call_id": entry.call_id,
                 "output": reply_text(entry)}]
    items: list[dict[str, Any]] = []
    if entry.text:
        items.append({"role": "assistant", "content": entry.text})
    items += [{"type": "function_call", "call_id": call.call_id, "name": call.name,
               "arguments": _sent_arguments(call)} for call in entry.calls]
    return items or [{"role": "assistant", "content": "(no output)"}]


# -- Gemini --------------------------------------------------------------------------


def gemini_body(task: Task, ordered: list[Ordered], system: str | None) -> dict[str, Any]:
    """``contents`` of ``user`` and ``model`` turns; the model is named in the URL.

    ``model`` stays in the body for the stream client, which moves it into the
    path. A function response names its function, as Gemini requires, and
    carries the call's ``id`` so replies pair with calls by id (J5).
    """
    names = {call.call_id: call.name for entry in ordered
             if isinstance(entry, AssistantEntry) for call in entry.calls}
    contents: list[dict[str, Any]] = []
    for entry in ordered:
        role = "model" if isinstance(entry, AssistantEntry) else "user"
        parts = _gemini_parts(entry, names)
        if contents and contents[-1]["role"] == role == "user":
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    body: dict[str, Any] = {
        "model": task.model,
        "contents": contents,
        "generationConfig": {"maxOutputTokens": task.max_output_tokens},
    }
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if task.tools:
        declarations = [{"name": s.name, "description": s.description,
                         "parameters": dict(s.parameters)} for s in task.tools]
        body["tools"] = [{"functionDeclarations": declarations}]
    return body


def _gemini_parts(entry: Ordered, names: dict[str, str]) -> list[dict[str, Any]]:
    if isinstance(entry, UserEntry):
        return [{"text": entry.text}]
    if isinstance(entry, ToolReply):
        reply = {"id": entry.call_id, "name": names.get(entry.call_id, ""),
                 "response": {"output": reply_text(entry)}}
        return [{"functionResponse": reply}]
    parts: list[dict[str, Any]] = [{"text": entry.text}] if entry.text else []
    parts += [{"functionCall": {"id": call.call_id, "name": call.name,
                                "args": dict(call.arguments) if call.runnable else {}}}
              for call in entry.calls]
    return parts or [{"text": "(no output)"}]
