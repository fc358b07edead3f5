"""The reference agent's side of every wire dialect, in one registry.

An :class:`AgentDialect` says how the agent speaks one API: how a request body
is built from the transcript, how it asks for a stream (and where it is sent),
how a cut text is continued, and which accumulator reads the answer. The
dialect's outside facts (paths, id header) are in :data:`harness.ports.SPECS`;
the fake provider's side is ``fakes._dialects.WIRE``.

>>> from harness.ports import Task
>>> from harness.agent._session_log import UserEntry
>>> body = build_request("gemini", Task("hi"), [UserEntry("t1", "hi")])
>>> request_target("https://g.test/v1beta/models/{model}:streamGenerateContent",
...                streaming_body("gemini", body))[0]
'https://g.test/v1beta/models/fake-model:streamGenerateContent?alt=sse'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.agent._anthropic_stream import AnthropicAccumulator
from harness.agent._gemini_stream import GeminiAccumulator
from harness.agent._messages import AssistantMessage
from harness.agent._openai_stream import OpenAIAccumulator
from harness.agent._requests import (
    Ordered,
    anthropic_body,
    gemini_body,
    model_order,
    openai_body,
    responses_body,
    with_breakpoints,
)
from harness.agent._responses_stream import ResponsesAccumulator
from harness.agent._session_log import Entry, UserEntry
from harness.ports import DIALECTS, Dialect, SSEEvent, Task, Usage

#: The user turn that asks a model without prefill to continue cut text (S6).
CONTINUE_PROMPT = (
    "Your previous message was cut off by the output token limit. Continue exactly where "
    "it stopped, without repeating anything already written."
)


class Accumulator(Protocol):
    """Reads one attempt's SSE events into one message (one class per dialect)."""

    done: bool

    @property
    def partial_text(self) -> str: ...

    @property
    def usage(self) -> Usage | None: ...

    def feed(self, event: SSEEvent) -> None: ...

    def finish(self, attempt_id: str) -> AssistantMessage: ...


BodyBuilder = Callable[[Task, list[Ordered], "str | None"], dict[str, Any]]
Continuation = Callable[[Mapping[str, Any], str], dict[str, Any]]


@dataclass(frozen=True)
class AgentDialect:
    """How the reference agent speaks one API; see the module docstring.

    ``stream_fields`` is what a streaming request adds to the body (none for
    Gemini, whose path asks for the stream); ``cache_marks`` marks the prompt
    cache's boundaries in a body, for an API that caches only where it is told.
    """

    accumulator: Callable[[], Accumulator]
    body: BodyBuilder
    continuation: Continuation
    stream_fields: Mapping[str, Any] | None = None
    cache_marks: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def _continue_as_user(key: str, assistant: Callable[[str], dict[str, Any]],
                      user: Callable[[str], dict[str, Any]]) -> Continuation:
    """Append the cut text as the model's turn and a user turn asking it to go on."""
    def continuation(body: Mapping[str, Any], text: str) -> dict[str, Any]:
        turns = list(body.get(key) or [])
        return {**body, key: [*turns, assistant(text), user(CONTINUE_PROMPT)]}
    return continuation


def _anthropic_continuation(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    # Anthropic continues a trailing assistant turn (a prefill, which must not end in
    # whitespace).
    messages = [*(body.get("messages") or []), {"role": "assistant", "content": text.rstrip()}]
    return {**body, "messages": messages}


def _chat_turn(role: str) -> Callable[[str], dict[str, Any]]:
    return lambda text: {"role": role, "content": text}


def _gemini_turn(role: str) -> Callable[[str], dict[str, Any]]:
    return lambda text: {"role": role, "parts": [{"text": text}]}


AGENT_DIALECTS: dict[Dialect, AgentDialect] = {
    "openai": AgentDialect(
        OpenAIAccumulator, openai_body,
        _continue_as_user("messages", _chat_turn("assistant"), _chat_turn("user")),
        # Without include_usage a Chat Completions stream reports no usage at all (L6).
        stream_fields={"stream": True, "stream_options": {"include_usage": True}}),
    "anthropic": AgentDialect(
        AnthropicAccumulator, anthropic_body, _anthropic_continuation,
        stream_fields={"stream": True}, cache_marks=with_breakpoints),
    "openai-responses": AgentDialect(
        ResponsesAccumulator, responses_body,
        _continue_as_user("input", _chat_turn("assistant"), _chat_turn("user")),
        stream_fields={"stream": True}),
    "gemini": AgentDialect(
        GeminiAccumulator, gemini_body,
        _continue_as_user("contents", _gemini_turn("model"), _gemini_turn("user"))),
}
"""Every dialect the reference agent speaks."""

assert tuple(AGENT_DIALECTS) == DIALECTS, "every dialect needs one AgentDialect"


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
    The other APIs cache without marks.

    >>> from harness.agent._session_log import UserEntry
    >>> build_request("anthropic", Task("hi"), [UserEntry("t1", "hi")])["max_tokens"]
    1024
    """
    speaks = AGENT_DIALECTS[dialect]
    body = speaks.body(task, model_order(entries), system)
    if cache_breakpoints and speaks.cache_marks is not None:
        return speaks.cache_marks(body)
    return body


def streaming_body(dialect: Dialect, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` asking for a stream, as the dialect asks for one."""
    fields = AGENT_DIALECTS[dialect].stream_fields or {}
    merged = dict(body)
    for key, value in fields.items():
        old = merged.get(key)
        merged[key] = {**old, **value} if isinstance(old, dict) and isinstance(value, dict) \
            else value
    return merged


def request_target(endpoint: str, body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The URL and the JSON body to send: a ``{model}`` in the endpoint comes from the body.

    Gemini names the model in the path and streams as SSE with ``alt=sse``.
    """
    if "{model}" not in endpoint:
        return endpoint, dict(body)
    sent = dict(body)
    model = str(sent.pop("model", ""))
    return endpoint.replace("{model}", model) + "?alt=sse", sent


def continuation_body(body: Mapping[str, Any], text: str, dialect: Dialect) -> dict[str, Any]:
    """The request that continues cut-off ``text`` (S6: never the same input again).

    Anthropic continues a trailing assistant turn (a prefill, which must not end
    in whitespace); the others get the text as the model's turn and a user turn
    asking it to go on.

    >>> continuation_body({"messages": []}, "Once upon", "anthropic")["messages"]
    [{'role': 'assistant', 'content': 'Once upon'}]
    """
    return AGENT_DIALECTS[dialect].continuation(body, text)


def opening_request(dialect: Dialect, text: str) -> dict[str, Any]:
    """The body of a run's first request when its task is ``text``: one user turn.

    >>> opening_request("openai", "go")["messages"][-1]
    {'role': 'user', 'content': 'go'}
    """
    return build_request(dialect, Task(text), [UserEntry("turn_1", text)])


def sent_request(dialect: Dialect, endpoint: str,
                 body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The URL and the JSON the stream client sends for ``body``: asking for a stream, to
    ``endpoint`` (:func:`streaming_body`, then :func:`request_target`)."""
    return request_target(endpoint, streaming_body(dialect, body))
