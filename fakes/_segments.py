"""A request seen as a prompt cache sees it: labelled blocks, in cache order.

A prompt cache matches byte-exact prefixes, so :func:`prompt_view` cuts a
request body into :class:`PromptBlock` values in the order the provider
hashes them, each labelled with the segment it belongs to:

=============  ==============================================================
segment        what it holds
=============  ==============================================================
model          the model name (0 tokens; a cache never crosses models)
tools          one block per tool definition
system         system messages (OpenAI) / system blocks (Anthropic)
instructions   project instructions: an OpenAI ``developer`` message, or any
               system block or message whose text starts with
               :data:`INSTRUCTIONS_MARKER`
compaction     a message whose text starts with :data:`COMPACTION_MARKER`
               (the summary that replaced older history)
history        every other message (user, assistant, tool results)
=============  ==============================================================

Prefix order: OpenAI tools → messages (system/developer first by
convention); Anthropic tools → system → messages. One block is one tool, one
message (OpenAI), or one content block (Anthropic, where ``cache_control``
breakpoints live on content blocks). The markers are text conventions, so they
survive any SDK that passes message text through unchanged.

Example::

    view = prompt_view("openai", {"model": "m", "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"}]})
    assert [b.segment for b in view.blocks] == ["model", "system", "history"]
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from fakes._dialects import chat_view
from fakes._tokenizer import count_tokens
from fakes._wire import compact_json
from harness.ports import Dialect, family_of

Segment = Literal["model", "tools", "system", "instructions", "compaction", "history"]
# Also the order used to name the first changed segment when two requests
# differ at the same block (an added tool vs. a system block: "tools").
SEGMENTS: tuple[Segment, ...] = get_args(Segment)
CacheTtl = Literal["5m", "1h"]
CACHE_TTLS: tuple[CacheTtl, ...] = get_args(CacheTtl)

COMPACTION_MARKER = "[compaction summary]"
INSTRUCTIONS_MARKER = "[project instructions]"
# Role, separators and the like: a few tokens per message beyond its text, as
# the providers' own counting guides describe.
_MESSAGE_OVERHEAD = 3


@dataclass(frozen=True)
class PromptBlock:
    """One cacheable unit of a prompt.

    ``digest`` identifies the content (``cache_control`` excluded, so moving a
    breakpoint changes nothing); ``prefix`` is the chained hash of every block
    up to and including this one; ``breakpoint`` is the Anthropic TTL asked for
    on this block, if any.
    """

    segment: Segment
    tokens: int
    digest: str
    prefix: str = ""
    breakpoint: CacheTtl | None = None


@dataclass(frozen=True)
class PromptView:
    """A request as labelled blocks; ``problem`` is why the API would answer 400.

    >>> view = prompt_view("anthropic", {"model": "m", "messages": []})
    >>> (view.model, view.tokens, view.problem)
    ('m', 0, None)
    """

    model: str
    blocks: tuple[PromptBlock, ...]
    key: str = ""
    problem: str | None = None
    ends: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Cumulative token counts: ends[i] = tokens of blocks[0..i].
        total, ends = 0, []
        for block in self.blocks:
            total += block.tokens
            ends.append(total)
        object.__setattr__(self, "ends", tuple(ends))

    @property
    def tokens(self) -> int:
        """Prompt tokens of the whole request."""
        return self.ends[-1] if self.ends else 0

    @property
    def versions(self) -> dict[Segment, str]:
        """A short version per segment (``""`` when absent), to trace a miss to a release.

        ``model`` is the model name itself; the others are content hashes.
        """
        versions: dict[Segment, str] = {}
        for segment in SEGMENTS:
            digests = [b.digest for b in self.blocks if b.segment == segment]
            versions[segment] = _hash("".join(digests))[:12] if digests else ""
        versions["model"] = self.model
        return versions

    @property
    def breakpoints(self) -> tuple[int, ...]:
        """Indexes of the blocks that carry a ``cache_control`` breakpoint."""
        return tuple(i for i, block in enumerate(self.blocks) if block.breakpoint is not None)


def prompt_view(dialect: Dialect, body: Mapping[str, object]) -> PromptView:
    """Cut a parsed request body into labelled blocks (see the module docstring).

    Responses and Gemini bodies are read as their Chat Completions view
    (:func:`fakes.chat_view`): their caches, too, match automatic prefixes.
    """
    if family_of(dialect) != dialect:
        body, dialect = chat_view(dialect, body), family_of(dialect)
    model = str(body.get("model", ""))
    if dialect == "openai":
        raw, problem = _openai_blocks(body), None
        key = str(body.get("prompt_cache_key") or "")
    else:
        raw, problem = _anthropic_blocks(body)
        metadata = body.get("metadata")
        key = str(metadata.get("user_id") or "") if isinstance(metadata, dict) else ""
    blocks = _chain([PromptBlock("model", 0, _hash(model)), *raw])
    return PromptView(model, blocks, key, problem)


def _chain(blocks: Sequence[PromptBlock]) -> tuple[PromptBlock, ...]:
    chained, prefix = [], ""
    for block in blocks:
        prefix = _hash(prefix + block.digest)
        chained.append(PromptBlock(block.segment, block.tokens, block.digest, prefix,
                                   block.breakpoint))
    return tuple(chained)


def _openai_blocks(body: Mapping[str, object]) -> list[PromptBlock]:
    blocks = [_tool_block(tool) for tool in _list(body.get("tools"))]
    for message in _list(body.get("messages")):
        if isinstance(message, dict):
            tokens = _MESSAGE_OVERHEAD + _message_tokens(message)
            digest = _hash(compact_json(message))
            blocks.append(PromptBlock(_openai_segment(message), tokens, digest))
    return blocks


def _tool_block(tool: object) -> PromptBlock:
    text = compact_json(tool)
    return PromptBlock("tools", count_tokens(text), _hash(text))


def _openai_segment(message: Mapping[str, object]) -> Segment:
    marked = _marked(_text_of(message.get("content")))
    if marked is not None:
        return marked
    role = message.get("role")
    if role == "developer":
        return "instructions"
    return "system" if role == "system" else "history"


def _message_tokens(message: Mapping[str, object]) -> int:
    tokens = _content_tokens(message.get("content"))
    calls = message.get("tool_calls")
    if calls:
        tokens += count_tokens(compact_json(calls))
    return tokens


def _content_tokens(content: object) -> int:
    if isinstance(content, str):
        return count_tokens(content)
    return sum(_part_tokens(part) for part in _list(content))


def _part_tokens(part: object) -> int:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return count_tokens(part["text"])
    if isinstance(part, dict) and part.get("type") == "tool_result":
        return _content_tokens(part.get("content"))
    return count_tokens(compact_json(_without_cache_control(part)))


def _anthropic_blocks(body: Mapping[str, object]) -> tuple[list[PromptBlock], str | None]:
    items: list[tuple[Segment, int, object, object]] = []
    for tool in _list(body.get("tools")):
        items.append(("tools", count_tokens(compact_json(_without_cache_control(tool))), tool,
                      tool))
    system = body.get("system")
    for part in [{"type": "text", "text": system}] if isinstance(system, str) else _list(system):
        items.append((_marked(_text_of([part])) or "system", _part_tokens(part), part, part))
    for message in _list(body.get("messages")):
        if isinstance(message, dict):
            items += _anthropic_message_items(message)
    return _anthropic_breakpoints(body, items)


def _anthropic_message_items(
    message: Mapping[str, object],
) -> list[tuple[Segment, int, object, object]]:
    content = message.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else _list(content)
    segment = _marked(_text_of(parts)) or "history"
    items: list[tuple[Segment, int, object, object]] = []
    for index, part in enumerate(parts):
        overhead = _MESSAGE_OVERHEAD if index == 0 else 0
        # Role and position are part of identity: two one-block user messages
        # are not the same prompt as one two-block user message.
        identity = {"role": message.get("role"), "index": index, "part": part}
        items.append((segment, overhead + _part_tokens(part), identity, part))
    return items


def _anthropic_breakpoints(
    body: Mapping[str, object], items: list[tuple[Segment, int, object, object]]
) -> tuple[list[PromptBlock], str | None]:
    blocks: list[PromptBlock] = []
    problem: str | None = None
    for segment, tokens, identity, part in items:
        ttl, error = _cache_control(part)
        problem = problem or error
        blocks.append(PromptBlock(segment, tokens, _hash(compact_json(
            _without_cache_control(identity))), breakpoint=ttl))
    automatic, error = _cache_control(body)
    problem = problem or error
    if automatic is not None and blocks and blocks[-1].breakpoint is None:
        # Top-level cache_control: the API puts the breakpoint on the last block.
        last = blocks[-1]
        blocks[-1] = PromptBlock(last.segment, last.tokens, last.digest, breakpoint=automatic)
    return blocks, problem


def _cache_control(part: object) -> tuple[CacheTtl | None, str | None]:
    control = part.get("cache_control") if isinstance(part, dict) else None
    if control is None:
        return None, None
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        return None, f"cache_control.type: Input should be 'ephemeral' (got {control!r})"
    ttl = control.get("ttl", "5m")
    if ttl not in CACHE_TTLS:
        return None, f"cache_control.ttl: Input should be '5m' or '1h' (got {ttl!r})"
    return ttl, None


def _marked(text: str) -> Segment | None:
    stripped = text.lstrip()
    if stripped.startswith(COMPACTION_MARKER):
        return "compaction"
    if stripped.startswith(INSTRUCTIONS_MARKER):
        return "instructions"
    return None


def _text_of(content: object) -> str:
    """The first text of a message's content (a str or a list of parts)."""
    if isinstance(content, str):
        return content
    for part in _list(content):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return str(part["text"])
    return ""


def unmarked(messages: list[object]) -> list[object]:
    """``messages`` without Anthropic's ``cache_control`` marks (a copy): what they ask.

    >>> unmarked([{"role": "user", "content": [{"type": "text", "text": "hi",
    ...                                          "cache_control": {"type": "ephemeral"}}]}])
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]
    """
    return [_without_cache_control(message) for message in messages]


def _without_cache_control(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
