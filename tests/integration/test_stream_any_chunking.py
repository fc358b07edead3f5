"""For any scripted response and ANY chunking, the client commits the same message (S3, S4).

The fakes render real wire bytes; the reference stream client decodes them.
Whatever the split of reads (1-byte reads, cuts inside UTF-8 sequences, inside
``data:``, between CR and LF) and whatever the line endings, the committed
message is byte-for-byte the one the unchunked stream gives, and it carries
exactly what the script said.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakes import (
    ByteAtATime,
    FakeProvider,
    Fault,
    LineEndings,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    SplitAt,
    Text,
    ToolUse,
)
from harness._streamcase import stream_request
from harness.ports import DIALECTS, Dialect

from ._streaming import run_client

# Text that stresses the decoder: multibyte UTF-8 (2, 3 and 4 bytes), newlines
# and carriage returns inside JSON strings, SSE-looking content.
_alphabet = st.sampled_from([*list('ab z\n\r:é中文🙂"\\{}'), "data: ", "[DONE]", "\u2028"])
texts = st.lists(_alphabet, min_size=1, max_size=30).map("".join)
json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(texts, json_values, max_size=4)


@st.composite
def scripted_responses(draw: st.DrawFn) -> ScriptedResponse:
    texts_drawn = draw(st.lists(texts, max_size=3))
    calls_drawn = draw(st.lists(arguments, max_size=3))
    parts: list[Text | ToolUse] = [Text(t) for t in texts_drawn]
    parts += [ToolUse(f"call_{i}", f"tool_{i}", args) for i, args in enumerate(calls_drawn)]
    if not parts:
        parts = [Text("ok")]
    ordered = draw(st.permutations(parts))
    cached = draw(st.integers(0, 500))
    usage = ScriptedUsage(
        input_tokens=cached + draw(st.integers(1, 5000)),
        output_tokens=draw(st.integers(1, 2000)),
        cache_read_tokens=cached,
    )
    finish = "tool_calls" if calls_drawn else "stop"
    return ScriptedResponse(parts=tuple(ordered), finish=finish, usage=usage)


def _body_length(dialect: Dialect, response: ScriptedResponse, faults: tuple[Fault, ...]) -> int:
    provider = FakeProvider(dialect, response, {(1, 1): faults} if faults else {})
    request = stream_request(dialect, provider.endpoint)
    return len(provider.plan(request).body)


@st.composite
def chunkings(draw: st.DrawFn, dialect: Dialect, response: ScriptedResponse) -> tuple[Fault, ...]:
    endings: tuple[Fault, ...] = (LineEndings(draw(st.sampled_from(["lf", "cr", "crlf"]))),)
    kind = draw(st.sampled_from(["offsets", "bytes", "random"]))
    if kind == "bytes":
        return (*endings, ByteAtATime())
    if kind == "random":
        return (*endings, RandomSplits(draw(st.integers(1, 60))))
    length = _body_length(dialect, response, endings)
    offsets = draw(st.lists(st.integers(1, length - 1), min_size=1, max_size=40, unique=True))
    return (*endings, SplitAt(tuple(sorted(offsets))))


@settings(max_examples=60, deadline=None)
@given(dialect=st.sampled_from(DIALECTS), response=scripted_responses(), data=st.data())
def test_any_chunking_commits_the_unchunked_message(
    dialect: Dialect, response: ScriptedResponse, data: st.DataObject
) -> None:
    faults = data.draw(chunkings(dialect, response), label="chunking")
    plain, _, _, _ = run_client(dialect, response)
    chunked, _, _, _ = run_client(dialect, response, {(1, 1): faults})

    assert plain.outcome == "committed", plain.error
    assert chunked.outcome == "committed", chunked.error
    assert chunked.message == plain.message
    assert len(chunked.attempts) == 1


@settings(max_examples=40, deadline=None)
@given(dialect=st.sampled_from(DIALECTS), response=scripted_responses())
def test_the_committed_message_says_what_the_script_said(
    dialect: Dialect, response: ScriptedResponse
) -> None:
    result, _, _, _ = run_client(dialect, response)
    message = result.message
    assert message is not None

    script_text = "".join(p.text for p in response.parts if isinstance(p, Text))
    assert message.text == script_text
    assert [(c.call_id, c.name, dict(c.arguments)) for c in message.tool_calls] == [
        (c.call_id, c.name, dict(c.arguments)) for c in response.tool_calls
    ]
    assert all(call.runnable for call in message.tool_calls)
    assert message.finish == response.finish
    assert message.usage is not None
    assert message.usage.input_tokens == response.usage.input_tokens
    assert message.usage.output_tokens == response.usage.output_tokens
    assert message.usage.cache_read_tokens == response.usage.cache_read_tokens
