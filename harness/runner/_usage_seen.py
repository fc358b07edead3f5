"""The usage a client could have read: the usage events among the bytes it was sent.

I6 holds an agent's bill to the attempts whose usage reached it, each counted
once. An attempt that broke after its usage arrived counts (Anthropic sends the
input count in ``message_start``, OpenAI its usage chunk before ``[DONE]``); one
cut before it does not. The world knows the bytes each stream delivered; this
reads the usage out of them as either dialect's client would, merging Anthropic's
cumulative counts, so the checker needs no knowledge of the wire formats.

    >>> usage_seen("openai", b'data: {"usage":{"prompt_tokens":5,"completion_tokens":2}}\\n\\n')
    (5, 2)
    >>> usage_seen("anthropic", b'event: ping\\ndata: {"type":"ping"}\\n\\n') is None
    True
"""

from __future__ import annotations

import json
from typing import Any

from harness.agent import SSEDecoder

_ANTHROPIC_INPUTS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def usage_seen(dialect: str, delivered: bytes) -> tuple[int, int] | None:
    """(input, output) tokens of the usage in ``delivered``; ``None`` when none arrived."""
    if b'"usage"' not in delivered:
        return None
    fields: dict[str, int] = {}
    for event in SSEDecoder().feed(delivered):
        if '"usage"' not in event.data:
            continue
        usage = _usage_field(dialect, _json(event.data))
        if usage is not None:
            fields |= {k: v for k, v in usage.items() if isinstance(v, int)}
    if not fields:
        return None
    if dialect == "openai":
        return fields.get("prompt_tokens", 0), fields.get("completion_tokens", 0)
    return sum(fields.get(k, 0) for k in _ANTHROPIC_INPUTS), fields.get("output_tokens", 0)


def _json(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _usage_field(dialect: str, frame: Any) -> dict[str, Any] | None:
    if not isinstance(frame, dict):
        return None
    if dialect == "anthropic" and frame.get("type") == "message_start":
        frame = frame.get("message")
        if not isinstance(frame, dict):
            return None
    usage = frame.get("usage")
    return usage if isinstance(usage, dict) else None
