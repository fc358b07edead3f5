"""What a fake model says, independent of any wire dialect.

A :class:`ScriptedResponse` is plain, validated data: the parts of one
assistant message (text and tool calls), why it finished, and what it cost.
The dialect renderers turn it into the bytes OpenAI or Anthropic would stream.

Example::

    reply = ScriptedResponse(
        parts=(Text("Sending it now."), ToolUse("call_1", "send_email", {"to": "a@b.c"})),
        finish="tool_calls",
        usage=ScriptedUsage(input_tokens=120, output_tokens=18, cache_read_tokens=100),
    )
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness._errors import ConfigError, one_of
from harness.ports import FINISH_REASONS, FinishReason

# Built once: json.dumps builds a new encoder per call, and every rendering asks.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

# Why the model stops: the neutral layer's words, which the trace keeps.
Finish = FinishReason
FINISHES: tuple[Finish, ...] = FINISH_REASONS


@dataclass(frozen=True)
class Text:
    """A run of assistant text; the renderer splits it into several deltas.

    >>> Text("Hello").text
    'Hello'
    """

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text:
            raise ConfigError("Text.text", self.text, "a non-empty str")


@dataclass(frozen=True)
class ToolUse:
    """A tool call; ``arguments`` is a JSON object, or raw argument text as sent.

    Raw text lets a script send what a buggy provider sends (invalid JSON)::

        ToolUse("call_1", "search", '{"q": "unterminated')
    """

    call_id: str
    name: str
    arguments: Mapping[str, object] | str = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("call_id", "name"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError(f"ToolUse.{name}", value, "a non-empty str")
        if not isinstance(self.arguments, str | Mapping):
            raise ConfigError(
                "ToolUse.arguments", self.arguments, "a mapping (JSON object) or a str"
            )
        if isinstance(self.arguments, Mapping):
            _check_json(self.arguments)

    @property
    def argument_text(self) -> str:
        """The arguments exactly as they go on the wire (compact JSON, UTF-8 kept)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return _COMPACT.encode(self.arguments)


def _check_json(arguments: Mapping[str, object]) -> None:
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ConfigError(
            "ToolUse.arguments", arguments, "a JSON-serialisable mapping", str(error)
        ) from error


@dataclass(frozen=True)
class ScriptedUsage:
    """Token counts of one response.

    ``input_tokens`` counts ALL prompt tokens, cached ones included (OpenAI's
    ``prompt_tokens``); the Anthropic renderer subtracts the cache buckets.

    >>> ScriptedUsage(input_tokens=100, output_tokens=5, cache_read_tokens=80).input_tokens
    100
    """

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"ScriptedUsage.{name}", value, "an int >= 0")
        cached = self.cache_read_tokens + self.cache_write_tokens
        if cached > self.input_tokens:
            raise ConfigError(
                "ScriptedUsage.input_tokens",
                self.input_tokens,
                f"an int >= cache_read_tokens + cache_write_tokens ({cached})",
                "input_tokens counts all prompt tokens, cached ones included",
            )

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens


#: The model a :class:`ScriptedResponse` names unless told otherwise.
DEFAULT_MODEL = "fake-model"


@dataclass(frozen=True)
class ScriptedResponse:
    """One assistant message, as the fake model means to send it.

    >>> ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(10, 2)).model
    'fake-model'
    """

    parts: tuple[Text | ToolUse, ...]
    finish: Finish
    usage: ScriptedUsage
    #: The model the answer names; left at :data:`DEFAULT_MODEL`, the provider names the
    #: model the request named, as the APIs echo it.
    model: str = "fake-model"

    def __post_init__(self) -> None:
        if not isinstance(self.parts, tuple) or not all(
            isinstance(part, Text | ToolUse) for part in self.parts
        ):
            raise ConfigError(
                "ScriptedResponse.parts", self.parts, "a tuple of Text and ToolUse values"
            )
        if self.finish not in FINISHES:
            raise ConfigError("ScriptedResponse.finish", self.finish, one_of(FINISHES))
        if not isinstance(self.usage, ScriptedUsage):
            raise ConfigError("ScriptedResponse.usage", self.usage, "a ScriptedUsage")
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError("ScriptedResponse.model", self.model, "a non-empty str")
        self._check_tool_calls()

    def _check_tool_calls(self) -> None:
        ids = [call.call_id for call in self.tool_calls]
        duplicates = sorted({call_id for call_id in ids if ids.count(call_id) > 1})
        if duplicates:
            raise ConfigError(
                "ToolUse.call_id", duplicates[0], "a call id used once per response"
            )
        # A real provider reports tool_calls whenever it completed a call; a script
        # that says otherwise would teach the agent a protocol nobody speaks.
        if self.finish == "tool_calls" and not ids:
            raise ConfigError(
                "ScriptedResponse.finish",
                self.finish,
                "'stop', 'length', 'content_filter' or 'refusal' for a response without "
                "ToolUse parts",
            )
        if self.finish == "stop" and ids:
            raise ConfigError(
                "ScriptedResponse.finish",
                self.finish,
                "'tool_calls', 'length', 'content_filter' or 'refusal' for a response with "
                "ToolUse parts",
            )

    @property
    def tool_calls(self) -> tuple[ToolUse, ...]:
        """The ToolUse parts, in order."""
        return tuple(part for part in self.parts if isinstance(part, ToolUse))
