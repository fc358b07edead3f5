"""Every wire dialect the fake provider speaks, in one registry.

A :class:`WireDialect` joins a dialect's spec (:data:`harness.ports.SPECS`) to
what the fakes do with it: render a scripted answer as SSE frames or one JSON
object, word an HTTP error or an in-stream error, and read a request's
conversation. The provider, the faults and the world read this table; adding a
dialect is one entry here (and one in the agent's table).

A request is read through :func:`chat_view`: the body as its *family* shapes it
(Chat Completions ``messages`` for OpenAI, Responses and Gemini; Messages for
Anthropic), so turn counting, the pairing rule, the prompt cache and the
scripted model know two conversation shapes, not four.

>>> chat_view("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
...           "fake-flash")["messages"]
[{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from fakes import _wire_anthropic, _wire_gemini, _wire_openai, _wire_responses
from fakes._script import ScriptedResponse
from fakes._wire import Frame, RenderContext, compact_json
from harness.ports import DIALECTS, SPECS, Dialect, DialectSpec

Render = Callable[[ScriptedResponse, RenderContext], tuple[Frame, ...]]
RenderJson = Callable[[ScriptedResponse, RenderContext], bytes]
#: (status, message or None, request id, Retry-After seconds or None) -> body
HttpErrorBody = Callable[[int, "str | None", str, "int | None"], bytes]
#: (message, error type, events before it) -> the error event
StreamErrorFrame = Callable[[str, str, int], Frame]
ChatView = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class WireDialect:
    """One API as the fake provider speaks it; see the module docstring."""

    spec: DialectSpec
    response_id_prefix: str
    render: Render
    render_json: RenderJson
    http_error_body: HttpErrorBody
    stream_error_frame: StreamErrorFrame
    stream_error_type: str
    chat_view: ChatView
    # The body as the API reads it (Gemini's fields in either spelling); before all else.
    request_body: Callable[[dict[str, Any]], dict[str, Any]] = dict

    def route(self, path: str) -> tuple[str | None, bool | None] | None:
        """``(model named in the path, streams by path)`` for a path of this API, else None.

        ``streams`` is None where the body's ``stream`` field decides.

        >>> WIRE["gemini"].route("/v1/models/m:streamGenerateContent")
        ('m', True)
        >>> WIRE["openai"].route("/v1/chat/completions")
        (None, None)
        """
        if "{model}" not in self.spec.path:
            return (None, None) if path == self.spec.path else None
        for pattern, streams in _path_patterns(self.spec):
            found = pattern.fullmatch(path)
            if found is not None:
                return unquote(found["model"]), streams
        return None


@functools.cache
def _path_patterns(spec: DialectSpec) -> tuple[tuple[re.Pattern[str], bool], ...]:
    """The spec's streaming and whole-answer paths as regular expressions, built once."""
    versions = "|".join(map(re.escape, spec.versions))
    fields = {"model": "(?P<model>[^/]+)", "version": f"(?:{versions})"}
    return tuple(
        (re.compile(re.sub(r"\\\{(model|version)\\\}", lambda m: fields[m[1]],
                           re.escape(template))), streams)
        for template, streams in ((spec.path, True), (spec.json_path, False))
        if template)


# -- reading a request's conversation ----------------------------------------------------


def _same(body: Mapping[str, Any]) -> dict[str, Any]:
    return dict(body)


def _text(content: object) -> str:
    """The text of a str content or of a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text")) for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _assistant(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message new assistant-side items join (consecutive items share one)."""
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": None})
    return messages[-1]


def _add_call(message: dict[str, Any], call_id: object, name: object, arguments: str) -> None:
    message.setdefault("tool_calls", []).append(
        {"id": str(call_id), "type": "function",
         "function": {"name": str(name), "arguments": arguments}})


def _responses_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses request (``instructions``, ``input`` items) as Chat Completions messages."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            _responses_item(messages, item)
    tools = [{"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}
             for tool in body.get("tools") or () if isinstance(tool, dict)]
    return _chat(body, messages if isinstance(items, list) else None, tools)


def _responses_item(messages: list[dict[str, Any]], item: Mapping[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "function_call":
        _add_call(_assistant(messages), item.get("call_id"), item.get("name"),
                  str(item.get("arguments") or ""))
    elif kind == "function_call_output":
        output = item.get("output")
        messages.append({"role": "tool", "tool_call_id": str(item.get("call_id")),
                         "content": output if isinstance(output, str) else _text(output)})
    elif kind == "message" and item.get("role") == "assistant":
        message = _assistant(messages)
        message["content"] = (message["content"] or "") + _text(item.get("content"))
    elif kind == "message":
        role = item.get("role")
        messages.append({"role": role if role in ("system", "developer") else "user",
                         "content": _text(item.get("content"))})


def _gemini_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini request (``systemInstruction``, ``contents``) as Chat Completions messages."""
    contents = body.get("contents")
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": _text(system.get("parts"))})
    for content in contents if isinstance(contents, list) else ():
        if isinstance(content, dict):
            _gemini_content(messages, content)
    tools = [{"type": "function", "function": declaration}
             for tool in body.get("tools") or () if isinstance(tool, dict)
             for declaration in tool.get("functionDeclarations") or ()]
    return _chat(body, messages if isinstance(contents, list) else None, tools)


def _gemini_content(messages: list[dict[str, Any]], content: Mapping[str, Any]) -> None:
    parts = [p for p in content.get("parts") or () if isinstance(p, dict)]
    if content.get("role") == "model":
        message = _assistant(messages)
        text = _text(parts)
        if text:
            message["content"] = (message["content"] or "") + text
        for part in parts:
            call = part.get("functionCall")
            if isinstance(call, dict):
                _add_call(message, call.get("id") or call.get("name"), call.get("name"),
                          compact_json(call.get("args") or {}))
        return
    for part in parts:
        reply = part.get("functionResponse")
        if isinstance(reply, dict):
            call_id = reply.get("id") or _unanswered_call(messages, reply.get("name"))
            messages.append({"role": "tool", "tool_call_id": str(call_id),
                             "content": _reply_text(reply.get("response"))})
    text = _text(parts)
    if text or not any("functionResponse" in p for p in parts):
        messages.append({"role": "user", "content": text})


def _unanswered_call(messages: list[dict[str, Any]], name: object) -> object:
    """The id of the first call named ``name`` in the last model turn no reply answers yet,
    else ``name``.

    Gemini pairs a model turn's ``functionCall`` parts with the next turn's
    ``functionResponse`` parts by count and name: a response needs no ``id`` even when its
    call had one (google-genai's automatic function calling sends none).
    """
    answered: set[object] = set()
    for message in reversed(messages):
        if message.get("role") == "tool":
            answered.add(message.get("tool_call_id"))
            continue
        if message.get("role") != "assistant":
            break
        for call in message.get("tool_calls") or ():
            if call["function"]["name"] == str(name) and call["id"] not in answered:
                return call["id"]
        break
    return name


def _reply_text(response: object) -> str:
    """A ``functionResponse.response`` as the reply text: its ``output``, else its JSON."""
    if isinstance(response, dict) and set(response) == {"output"}:
        output = response["output"]
        return output if isinstance(output, str) else json.dumps(output, sort_keys=True)
    return json.dumps(response, sort_keys=True)


def _chat(body: Mapping[str, Any], messages: list[dict[str, Any]] | None,
          tools: list[dict[str, Any]]) -> dict[str, Any]:
    chat: dict[str, Any] = {"model": body.get("model", ""), "messages": messages}
    if tools:
        chat["tools"] = tools
    if "prompt_cache_key" in body:
        chat["prompt_cache_key"] = body["prompt_cache_key"]
    return chat


def chat_view(dialect: Dialect, body: Mapping[str, Any], model: str | None = None
              ) -> dict[str, Any]:
    """``body`` as its family reads it; ``model`` fills in a model named in the URL."""
    view = WIRE[dialect].chat_view(body)
    if model is not None:
        view["model"] = model
    return view


# -- the registry --------------------------------------------------------------------------


WIRE: dict[Dialect, WireDialect] = {
    "openai": WireDialect(
        SPECS["openai"], "chatcmpl-", _wire_openai.render, _wire_openai.render_json,
        lambda status, message, _rid, _after: _wire_openai.http_error_body(status, message),
        lambda message, kind, _at: _wire_openai.stream_error_frame(message, kind),
        "server_error", _same),
    "anthropic": WireDialect(
        SPECS["anthropic"], "msg_", _wire_anthropic.render, _wire_anthropic.render_json,
        lambda status, message, rid, _after: _wire_anthropic.http_error_body(status, message,
                                                                            rid),
        lambda message, kind, _at: _wire_anthropic.stream_error_frame(message, kind),
        "overloaded_error", _same),
    "openai-responses": WireDialect(
        SPECS["openai-responses"], "resp_", _wire_responses.render,
        _wire_responses.render_json, _wire_responses.http_error_body,
        _wire_responses.stream_error_frame, "server_error", _responses_chat),
    "gemini": WireDialect(
        SPECS["gemini"], "", _wire_gemini.render, _wire_gemini.render_json,
        _wire_gemini.http_error_body, _wire_gemini.stream_error_frame, "UNAVAILABLE",
        _gemini_chat, _wire_gemini.request_body),
}
"""Every dialect the fake provider speaks."""

assert tuple(WIRE) == DIALECTS, "every dialect needs one WireDialect, in DIALECTS order"
