"""Tool calls and replies a framework keeps as text, read back as calls and replies.

smolagents asks for tool calls through the API's own tool calling, but keeps them
in its memory as text and sends that text back in later requests: the
assistant's calls as ``Calling tools:\\n[{'id': …, 'type': 'function',
'function': {'name': …, 'arguments': {…}}}]`` (a Python literal), and the
results as a user message ``Observation:\\n…``, or ``Call id: …\\nError:\\n…`` when
the tool failed. Read as they are, a conversation of such an agent has no tool
calls and no tool replies: the scripted model's ``when:`` branches never see a
result, and the transcript has calls the checks cannot pair.

:func:`with_text_tool_calls` rewrites Chat Completions messages in that form into
the API's own: an assistant message with ``tool_calls``, then one ``tool``
message per call. What the agent sent is unchanged on the wire; only the
harness's reading of it (the scripted model's, the observed transcript's) is.

>>> messages = [
...     {"role": "user", "content": "Mail the CFO."},
...     {"role": "assistant", "content": [{"type": "text", "text": "Calling tools:\\n"
...         "[{'id': 'call_1', 'type': 'function', 'function': {'name': 'mail', "
...         "'arguments': {'to': 'cfo'}}}]"}]},
...     {"role": "user", "content": [{"type": "text", "text": "Observation:\\nsent"}]}]
>>> [(m["role"], m.get("tool_call_id")) for m in with_text_tool_calls(messages)]
[('user', None), ('assistant', None), ('tool', 'call_1')]
>>> with_text_tool_calls(messages)[1]["tool_calls"][0]["function"]
{'name': 'mail', 'arguments': '{"to": "cfo"}'}
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

_CALLING = "Calling tools:\n"
_OBSERVATION = "Observation:\n"
_CALL_ID = "Call id: "
# A call smolagents could not make at all (arguments cut at the output limit that no
# longer parse, or that the tool's signature refuses) is kept as no call, and its
# error as a user message naming the tool: "Error:\nError executing tool 'send_email'
# with arguments …". (Its older wording: "Error when executing tool send_email …".)
_FAILED_CALL_NAMED = re.compile(
    r"\A(?:Call id: [^\n]*\n)?Error:\n(?:Error (?:executing|when executing|invoking) tool "
    r"'?(?P<tool>[A-Za-z_][\w.-]*))")


def with_text_tool_calls(messages: Sequence[Any]) -> list[Any]:
    """``messages`` with text-kept tool calls and replies as the API's own (see above)."""
    if not any(keeps_calls_as_text(m) for m in messages):
        return list(messages)
    rewritten: list[Any] = []
    waiting: list[str] = []  # the ids of the last text calls, until their replies come
    for message in messages:
        calls = _text_calls(message)
        if calls:
            rewritten.append(_assistant_with_calls(message, calls))
            waiting = [call["id"] for call in calls]
            continue
        if waiting and _texts_starting(message, "user", _OBSERVATION, _CALL_ID):
            rewritten += _replies(message, waiting)
            waiting = []
            continue
        rewritten.append(message)
    return rewritten


def keeps_calls_as_text(message: Any) -> bool:
    """Whether ``message`` is an assistant's tool calls kept as text (see above)."""
    return _texts_starting(message, "assistant", _CALLING)


def _texts(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part["text"] for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return []


def _texts_starting(message: Any, role: str, *prefixes: str) -> bool:
    return (isinstance(message, dict) and message.get("role") == role
            and any(text.startswith(prefixes) for text in _texts(message)))


def _text_calls(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or message.get("role") != "assistant" \
            or message.get("tool_calls"):
        return []
    calls: list[dict[str, Any]] = []
    for text in _texts(message):
        if text.startswith(_CALLING):
            calls += _parsed_calls(text[len(_CALLING):])
    return calls


def _parsed_calls(literal: str) -> list[dict[str, Any]]:
    try:
        value = ast.literal_eval(literal.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    calls = []
    for item in value if isinstance(value, list) else ():
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or "id" not in item:
            continue
        arguments = function.get("arguments")
        calls.append({"id": str(item["id"]), "type": "function", "function": {
            "name": str(function.get("name")),
            "arguments": arguments if isinstance(arguments, str)
            else json.dumps(arguments, default=str)}})
    return calls


def _assistant_with_calls(message: dict[str, Any], calls: list[dict[str, Any]]
                          ) -> dict[str, Any]:
    said = "\n".join(t for t in _texts(message) if not t.startswith(_CALLING))
    return {**message, "content": said or None, "tool_calls": calls}


def _replies(message: dict[str, Any], waiting: list[str]) -> list[dict[str, Any]]:
    """One ``tool`` message per waiting call, and the rest of the user's text, if any."""
    replies: dict[str, str] = {}
    rest: list[str] = []
    for text in _texts(message):
        if text.startswith(_CALL_ID):
            head, _, error = text.partition("\n")
            replies[head[len(_CALL_ID):].strip()] = error
        elif text.startswith(_OBSERVATION):
            # One observation holds the results of all the step's calls.
            for call_id in waiting:
                replies.setdefault(call_id, text[len(_OBSERVATION):])
        else:
            rest.append(text)
    tools = [{"role": "tool", "tool_call_id": call_id, "content": replies.get(call_id, "")}
             for call_id in waiting]
    return [*tools, *([{"role": "user", "content": "\n".join(rest)}] if rest else [])]


def failed_calls_told_as_text(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """(tool, reply) of each failed call a framework reported in a user message only.

    ``messages`` are those after the last assistant message: when it holds no call,
    a smolagents agent's call that failed before it could be made is known only from
    the error text that names its tool (see :data:`_FAILED_CALL_NAMED`).
    """
    failed: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        for text in _texts(message):
            named = _FAILED_CALL_NAMED.match(text)
            if named:
                failed.append((named["tool"], text.split("\n", 1)[1]))
    return failed


# The same error, written after the task in the one user message of a conversation that
# has no assistant message yet (smolagents merges the task and the step's error).
_FAILED_CALL_AFTER_THE_TASK = re.compile(
    r"(?:\A|\n)(?:Call id: [^\n]*\n)?Error:\n(?P<reply>Error (?:executing|when executing|"
    r"invoking) tool '?(?P<tool>[A-Za-z_][\w.-]*)[^\n]*(?:\n(?!Error:\n)[^\n]*)*)")


def failed_calls_told_in_the_prompt(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """(tool, reply) of each failed call told in the user messages of a conversation with
    no assistant message (smolagents drops a call it could not make, and writes its error
    after the task, in the same message).

    >>> failed_calls_told_in_the_prompt([{"role": "user", "content": "New task:\\nMail ops."
    ...     "\\nError:\\nError executing tool 'send_mail' with arguments {: TypeError"}])
    [('send_mail', "Error executing tool 'send_mail' with arguments {: TypeError")]
    """
    return [(found["tool"], found["reply"])
            for message in messages
            if isinstance(message, dict) and message.get("role") == "user"
            for text in _texts(message)
            for found in _FAILED_CALL_AFTER_THE_TASK.finditer(text)]
