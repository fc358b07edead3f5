"""Wire building blocks shared by every dialect: SSE frames, their encoding, timed steps.

A response body is built in three layers, so each fault can work on the layer
where it lives:

1. :class:`Frame` -- one logical SSE event (or comment), before encoding;
2. bytes -- frames encoded with a line ending (LF, CR or CRLF);
3. steps -- what the connection does over time: :class:`Emit` bytes,
   :class:`Pause`, :class:`Hang` forever, or :class:`Reset`.

Example::

    frames = (Frame(data='{"a":1}'), Frame(comment="keep-alive"))
    assert encode_frames(frames, "lf") == b'data: {"a":1}\\n\\n: keep-alive\\n\\n'
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Literal, get_args

from harness.ports import LineEnding

# One encoder for every frame: json.dumps builds a new one per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

LINE_ENDINGS: tuple[LineEnding, ...] = get_args(LineEnding)
EOL: dict[LineEnding, str] = {"lf": "\n", "cr": "\r", "crlf": "\r\n"}

# What a frame means, so faults can find "the usage chunk" or "the terminal event"
# without parsing JSON back.
FrameRole = Literal[
    "start", "block_start", "delta", "block_stop", "finish", "usage", "terminal",
    "ping", "comment", "error",
]

# Real providers send a few tokens per delta; pieces of 1..6 code points keep
# streams short while still exercising reassembly.
_MAX_PIECE = 6


@dataclass(frozen=True)
class Frame:
    """One SSE event (``event`` + ``data``) or one comment line.

    >>> Frame(data="[DONE]", role="terminal").data
    '[DONE]'
    """

    data: str | None = None
    event: str | None = None
    comment: str | None = None
    role: FrameRole = "delta"

    def encode(self, line_ending: LineEnding = "lf") -> bytes:
        """The frame's bytes, ending with a blank line."""
        eol = EOL[line_ending]
        if self.comment is not None:
            return f": {self.comment}{eol}{eol}".encode()
        head = f"event: {self.event}{eol}" if self.event is not None else ""
        return f"{head}data: {self.data}{eol}{eol}".encode()


def encode_frames(frames: tuple[Frame, ...], line_ending: LineEnding = "lf") -> bytes:
    """Concatenate the encoded frames."""
    return b"".join(frame.encode(line_ending) for frame in frames)


@dataclass(frozen=True)
class Emit:
    """Send these bytes as one network read on the client side."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Send nothing for ``seconds`` of (virtual) time, connection open."""

    seconds: float


@dataclass(frozen=True)
class Hang:
    """Send nothing, ever; the connection stays open."""


@dataclass(frozen=True)
class Reset:
    """The connection is reset: the client's read fails."""


Step = Emit | Pause | Hang | Reset


def split_pieces(text: str, rng: random.Random) -> tuple[str, ...]:
    """Cut ``text`` into deltas of 1..6 code points, as a tokenizer would.

    >>> "".join(split_pieces("hello world", random.Random(1)))
    'hello world'
    """
    pieces: list[str] = []
    start = 0
    while start < len(text):
        size = rng.randint(1, _MAX_PIECE)
        pieces.append(text[start : start + size])
        start += size
    return tuple(pieces)


@dataclass(frozen=True)
class RenderContext:
    """What a renderer needs beyond the script: ids, the timestamp, the delta RNG.

    ``include_usage`` mirrors OpenAI's ``stream_options.include_usage``.
    """

    response_id: str
    created: int
    rng: random.Random
    include_usage: bool = True


def compact_json(value: object) -> str:
    """JSON as the providers send it: no spaces, UTF-8 kept (not ``\\u`` escaped)."""
    return _COMPACT.encode(value)
