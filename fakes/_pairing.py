"""The APIs' 400 for a tool call without its result, in each API's own words.

Both APIs refuse a conversation in which the model's tool calls are not answered
before it goes on: OpenAI Chat Completions wants every ``tool_calls[].id`` of an
assistant message answered by a ``role: tool`` message with that ``tool_call_id``
among the messages right after it; Anthropic Messages wants every ``tool_use``
block answered by a ``tool_result`` block in the next (user) message. An agent that
drops a reply after a crash (seed 000 §2.2: "需要有对应的工具回复") meets this 400
in production, so the fake provider answers it too, with the bodies the APIs send.

    >>> calls = {"role": "assistant", "tool_calls": [{"id": "call_1"}]}
    >>> b'"param":"messages.[0].role"' in unpaired_calls_body("openai", [calls], "req_1")
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from fakes._wire import compact_json

__all__ = ["unpaired_calls_body"]


def unpaired_calls_body(dialect: str, messages: Sequence[object], request_id: str
                        ) -> bytes | None:
    """The 400 body for the first assistant message whose calls lack results, else None."""
    if dialect == "openai":
        return _openai_unpaired(messages)
    return _anthropic_unpaired(messages, request_id)


def _openai_unpaired(messages: Sequence[object]) -> bytes | None:
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        wanted = [c.get("id") for c in calls if isinstance(c, dict)]
        answered = set()
        for later in messages[index + 1:]:
            if not isinstance(later, dict) or later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        missing = [str(i) for i in wanted if i not in answered]
        if missing:
            error = {"message": "An assistant message with 'tool_calls' must be followed by "
                                "tool messages responding to each 'tool_call_id'. The following "
                                f"tool_call_ids did not have response messages: "
                                f"{', '.join(missing)}",
                     "type": "invalid_request_error", "param": f"messages.[{index}].role",
                     "code": None}
            return compact_json({"error": error}).encode()
    return None


def _anthropic_unpaired(messages: Sequence[object], request_id: str) -> bytes | None:
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        wanted = [b.get("id") for b in _blocks(message) if b.get("type") == "tool_use"]
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in _blocks(following)
                    if b.get("type") == "tool_result"} \
            if isinstance(following, dict) and following.get("role") == "user" else set()
        missing = [str(i) for i in wanted if i not in answered]
        if missing:
            text = (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message.")
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": text},
                    "request_id": request_id}
            return compact_json(body).encode()
    return None


def _blocks(message: object) -> list[dict[str, object]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
