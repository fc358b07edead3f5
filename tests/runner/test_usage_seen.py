"""I6's reading of the bytes a client was sent: usage counts once it arrived, in every dialect."""

from __future__ import annotations

import pytest

from fakes import FakeProvider, ScriptedResponse, ScriptedUsage, Text, ToolUse
from harness._streamcase import stream_request
from harness.ports import DIALECTS, Dialect
from harness.runner._usage_seen import usage_seen

REPLY = ScriptedResponse((Text("Sending — 送信."), ToolUse("c1", "mail", {"to": "ü"})),
                         "tool_calls", ScriptedUsage(300, 20, cache_read_tokens=128))
#: Where each dialect first tells the input count: Anthropic at the start, the others last.
FIRST_SEEN: dict[Dialect, tuple[int, int] | None] = {
    "openai": None, "anthropic": (300, 1), "openai-responses": None, "gemini": None,
}


def _body(dialect: Dialect) -> bytes:
    provider = FakeProvider(dialect, REPLY)
    return provider.plan(stream_request(dialect, provider.endpoint)).body


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_whole_stream_shows_its_usage(dialect: Dialect) -> None:
    assert usage_seen(dialect, _body(dialect)) == (300, 20)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_stream_cut_after_its_first_event_shows_only_what_came(dialect: Dialect) -> None:
    body = _body(dialect)
    first_event = body[: body.index(b"\n\n") + 2]
    assert usage_seen(dialect, first_event) == FIRST_SEEN[dialect]


def test_an_error_event_before_the_usage_hides_nothing_after_it() -> None:
    body = _body("openai-responses")
    error = b'event: error\ndata: {"type":"error","code":"server_error","message":"x"}\n\n'
    assert usage_seen("openai-responses", error + body) == (300, 20)
