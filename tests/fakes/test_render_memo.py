"""The provider's remembered renderings are exactly what a fresh rendering gives."""

from __future__ import annotations

import json

import pytest

from fakes import (
    FakeProvider,
    IncomingRequest,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    ToolUse,
    _provider,
)
from harness._streamcase import stream_request
from harness.ports import DIALECTS

TOOLS = ScriptedResponse(
    (Text("Sending ✉ now."), ToolUse("call_1", "mail", {"to": "a@example.com", "body": "hé"}),
     ToolUse("call_2", "store", {"key": "k", "value": 1})),
    "tool_calls", ScriptedUsage(120, 14, cache_read_tokens=64),
)
PLAIN = ScriptedResponse((Text("Done."),), "stop", ScriptedUsage(40, 2))


def request(provider: FakeProvider, include_usage: bool) -> IncomingRequest:
    if provider.dialect not in ("openai", "anthropic"):
        return stream_request(provider.dialect, provider.endpoint)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": include_usage}}
    return IncomingRequest("POST", provider.endpoint, {}, json.dumps(body).encode())


def streamed(response: ScriptedResponse, dialect: str, include_usage: bool,
             seed: int = 3) -> bytes:
    provider = FakeProvider(dialect, response, seed=seed)  # type: ignore[arg-type]
    plan = provider.plan(request(provider, include_usage))
    return b"".join(getattr(step, "data", b"") for step in plan.steps)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("include_usage", [True, False])
@pytest.mark.parametrize("response", [TOOLS, PLAIN], ids=["tools", "plain"])
def test_a_remembered_rendering_is_the_fresh_one(
    dialect: str, include_usage: bool, response: ScriptedResponse
) -> None:
    _provider._RENDERED.clear()
    fresh = streamed(response, dialect, include_usage)
    assert len(_provider._RENDERED) == 1

    assert streamed(response, dialect, include_usage) == fresh
    assert len(_provider._RENDERED) == 1


def test_anything_that_reaches_the_wire_gets_its_own_rendering() -> None:
    _provider._RENDERED.clear()
    other_args = ScriptedResponse(
        (TOOLS.parts[0], ToolUse("call_1", "mail", {"to": "b@example.com", "body": "hé"}),
         TOOLS.parts[2]), "tool_calls", TOOLS.usage)
    seen = {streamed(TOOLS, "openai", True), streamed(other_args, "openai", True),
            streamed(TOOLS, "openai", False), streamed(TOOLS, "openai", True, seed=4),
            streamed(TOOLS, "anthropic", True)}
    assert len(seen) == 5


def test_the_memo_forgets_its_oldest_rendering_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    _provider._RENDERED.clear()
    monkeypatch.setattr(_provider, "_RENDERED_MAX", 2)
    for seed in (1, 2, 3):
        streamed(PLAIN, "openai", True, seed=seed)
    assert [key[1] for key in _provider._RENDERED] == [2, 3]
