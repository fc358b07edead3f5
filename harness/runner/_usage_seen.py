"""The usage a client could have read: the usage events among the bytes it was sent.

I6 holds an agent's bill to the attempts whose usage reached it, each counted
once. An attempt that broke after its usage arrived counts (Anthropic sends the
input count in ``message_start``, Chat Completions its usage chunk before
``[DONE]``, Responses and Gemini theirs in the terminal event); one cut before it
does not. The world knows the bytes each stream delivered; this reads the usage
out of them with the dialect's own accumulator (the one table of
:mod:`harness.agent`), skipping the events it refuses, so the checker needs no
knowledge of the wire formats.

    >>> usage_seen("openai", b'data: {"usage":{"prompt_tokens":5,"completion_tokens":2}}\\n\\n')
    (5, 2)
    >>> usage_seen("anthropic", b'event: ping\\ndata: {"type":"ping"}\\n\\n') is None
    True
"""

from __future__ import annotations

from harness.agent import AGENT_DIALECTS, StreamFailure
from harness.ports import SSEDecoder, check_dialect


def usage_seen(dialect: str, delivered: bytes) -> tuple[int, int] | None:
    """(input, output) tokens of the usage in ``delivered``; ``None`` when none arrived."""
    # "usageMetadata" too: Gemini's name for it.
    if b'"usage' not in delivered:
        return None
    accumulator = AGENT_DIALECTS[check_dialect(dialect)].accumulator()
    for event in SSEDecoder().feed(delivered):
        try:
            accumulator.feed(event)
        except StreamFailure:
            continue  # a broken or error event hides no usage the client could read
    usage = accumulator.usage
    return None if usage is None else (usage.input_tokens, usage.output_tokens)
