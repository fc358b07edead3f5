"""S3: SSE framing across reads — any split of the bytes decodes like no split."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from harness.ports import SSEDecoder
from harness.ports._sse import SSEEvent, decode_all

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=12,
)
_NEWLINES = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def _field_line(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["data", "data", "event", "id", "retry", "comment", "other"]))
    value = draw(_TEXT)
    if kind == "comment":
        return ":" + value
    if kind == "retry":
        return f"retry: {draw(st.integers(0, 10_000))}"
    space = draw(st.sampled_from(["", " "]))
    return f"{kind}:{space}{value}"


@st.composite
def _stream(draw: st.DrawFn) -> bytes:
    """Valid events (possibly multi-line), each ended by a blank line, mixed newlines."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        for line in draw(st.lists(_field_line(), min_size=1, max_size=4)):
            parts.append(line + draw(_NEWLINES))
        parts.append(draw(_NEWLINES))
    return "".join(parts).encode()


def _split(payload: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(payload), *(c % (len(payload) + 1) for c in cuts)})
    return [payload[a:b] for a, b in itertools.pairwise(points)]


def _feed(reads: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for read in reads:
        events.extend(decoder.feed(read))
    return events + decoder.close()


@given(_stream(), st.lists(st.integers(0, 10_000), max_size=30))
def test_any_split_decodes_like_one_read(payload: bytes, cuts: list[int]) -> None:
    assert _feed(_split(payload, cuts)) == decode_all(payload)


@given(_stream())
def test_one_byte_reads_decode_like_one_read(payload: bytes) -> None:
    assert _feed([payload[i : i + 1] for i in range(len(payload))]) == decode_all(payload)


@given(st.sampled_from(["\n", "\r", "\r\n"]), _TEXT.filter(bool))
def test_every_line_ending_frames_the_same_event(newline: str, text: str) -> None:
    payload = f"event: delta{newline}data: {text}{newline}{newline}".encode()
    assert decode_all(payload) == [SSEEvent("delta", text, None, None)]


def test_a_cr_ending_one_read_and_lf_starting_the_next_is_one_line_break() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\r\n") == [SSEEvent("message", "a", None, None)]


def test_a_character_split_between_reads_decodes_whole() -> None:
    payload = "data: 你好🚀\n\n".encode()
    split_at = payload.index("🚀".encode()) + 2
    assert _feed([payload[:split_at], payload[split_at:]]) == [
        SSEEvent("message", "你好🚀", None, None)
    ]


def test_comments_and_keepalives_are_ignored() -> None:
    payload = b": keep-alive\n\n:\n\ndata: x\n: mid-event comment\n\n"
    assert decode_all(payload) == [SSEEvent("message", "x", None, None)]


def test_multi_line_data_joins_with_newlines() -> None:
    payload = b'data: {\ndata:  "a": 1\ndata: }\n\n'
    assert decode_all(payload) == [SSEEvent("message", '{\n "a": 1\n}', None, None)]


def test_id_persists_and_retry_belongs_to_its_event() -> None:
    payload = b"id: 7\nretry: 1500\ndata: a\n\ndata: b\n\nid: bad\x00id\ndata: c\n\n"
    assert decode_all(payload) == [
        SSEEvent("message", "a", "7", 1500),
        SSEEvent("message", "b", "7", None),
        SSEEvent("message", "c", "7", None),
    ]


def test_unknown_fields_and_events_are_tolerated() -> None:
    payload = b"foo: bar\nevent: brand_new\ndata: {}\n\n"
    assert decode_all(payload) == [SSEEvent("brand_new", "{}", None, None)]


def test_a_block_without_data_dispatches_nothing() -> None:
    assert decode_all(b"event: ping\n\ndata: x\n\n") == [SSEEvent("message", "x", None, None)]


def test_an_event_cut_off_by_the_end_of_stream_is_dropped() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: complete\n\ndata: cut") == [
        SSEEvent("message", "complete", None, None)
    ]
    assert decoder.has_partial_event
    assert decoder.close() == []


def test_a_leading_byte_order_mark_is_skipped() -> None:
    assert decode_all("\ufeffdata: x\n\n".encode()) == [SSEEvent("message", "x", None, None)]
