"""An incremental Server-Sent Events decoder: bytes of any size in, events out (S3).

A network read may hold half a frame, one frame or ten, and may end inside a
UTF-8 character or between the ``\\r`` and ``\\n`` of a CRLF (seed 002
"自建起步" ③: keep the unterminated tail until the blank line; reuse one
streaming UTF-8 decoder across reads). Field handling follows the WHATWG
event-stream interpretation: comments and keep-alives are skipped, several
``data:`` lines join with ``\\n``, a block without ``data`` dispatches nothing,
an ``id`` containing NUL is ignored, ``retry`` must be all digits, and an event
left open when the stream ends is dropped (the stream was cut; S9).

Speed matters because every token of every run goes through here: text is split
with ``str.split`` (or one regex when a ``\\r`` is present) over the decoded
buffer, never character by character, and a read without a line break only
appends to a list.

Example::

    decoder = SSEDecoder()
    events = decoder.feed(b"event: ping\\ndata: {}\\n\\ndata: x")
    assert events == [SSEEvent("ping", "{}", None, None)]
    assert decoder.feed(b"\\r") == [] and decoder.feed(b"\\n\\n")[0].data == "x"
"""

from __future__ import annotations

import codecs
import re
from typing import NamedTuple, final

_LINE_BREAK = re.compile("\r\n|\r|\n")
_DIGITS = re.compile("[0-9]+")


class SSEEvent(NamedTuple):
    """One dispatched event. ``event`` is ``"message"`` when the frame named none.

    ``id`` is the last event id seen so far (it persists across events, as the
    spec says); ``retry`` is a reconnection time sent inside this event's block.
    """

    event: str
    data: str
    id: str | None
    retry: int | None


@final
class SSEDecoder:
    """Feed bytes with :meth:`feed`, then call :meth:`close` when the stream ends.

    >>> d = SSEDecoder()
    >>> d.feed("data: caf\\u00e9\\n".encode()[:9]) + d.feed("data: caf\\u00e9\\n\\n".encode()[9:])
    [SSEEvent(event='message', data='café', id=None, retry=None)]
    """

    __slots__ = (
        "_data",
        "_event",
        "_last_id",
        "_pending",
        "_retry",
        "_skip_lf",
        "_started",
        "_utf8",
    )

    def __init__(self) -> None:
        # "replace", as the spec's UTF-8 decode does: a garbled byte must not
        # kill a stream whose JSON frames may still be intact.
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: list[str] = []  # text of the current, unterminated line
        self._skip_lf = False  # the last read ended in CR: a leading LF is its CRLF
        self._started = False  # the optional BOM is only stripped at the very start
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one read and return the events it completed (often none)."""
        text = self._utf8.decode(chunk)
        if not text:
            return []
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """End of stream: flush the decoder. An unterminated event is dropped."""
        text = self._utf8.decode(b"", True)
        events = self._feed_text(text) if text else []
        self._pending.clear()
        self._data = []
        self._event = ""
        return events

    @property
    def has_partial_event(self) -> bool:
        """Whether a frame was started but not finished by a blank line."""
        return bool(self._pending or self._data or self._event)

    def _feed_text(self, text: str) -> list[SSEEvent]:
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if "\n" not in text and "\r" not in text:
            self._pending.append(text)
            return []
        if self._pending:
            self._pending.append(text)
            text = "".join(self._pending)
            self._pending = []
        if "\r" in text:
            self._skip_lf = text[-1] == "\r"
            lines = _LINE_BREAK.split(text)
        else:
            lines = text.split("\n")
        tail = lines.pop()
        if tail:
            self._pending.append(tail)
        return self._interpret(lines)

    def _interpret(self, lines: list[str]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if line.startswith("data: "):
                data.append(line[6:])
            elif not line:
                if data:
                    events.append(self._dispatch(data))
                    data = self._data = []
                else:
                    self._event = ""
                    self._retry = None
            elif line[0] != ":":
                self._field(line)
        return events

    def _dispatch(self, data: list[str]) -> SSEEvent:
        event = SSEEvent(
            self._event or "message",
            data[0] if len(data) == 1 else "\n".join(data),
            self._last_id,
            self._retry,
        )
        self._event = ""
        self._retry = None
        return event

    def _field(self, line: str) -> None:
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and _DIGITS.fullmatch(value):
            self._retry = int(value)
        # Any other field name is ignored, as the spec says.


def decode_all(payload: bytes) -> list[SSEEvent]:
    """Decode a whole byte string in one read (the reference for split reads).

    >>> [e.data for e in decode_all(b"data: a\\r\\ndata: b\\r\\n\\r\\n")]
    ['a\\nb']
    """
    decoder = SSEDecoder()
    return decoder.feed(payload) + decoder.close()
