"""The provider's standing conditions: a context window and outages over virtual time."""

from __future__ import annotations

import asyncio
import json

import pytest

from fakes import (
    ContextWindow,
    FakeProvider,
    Outage,
    ProviderConditions,
    ScriptedResponse,
    ScriptedUsage,
    Text,
)
from fakes._transport import IncomingRequest
from fakes._wire import Hang
from harness import ConfigError

REPLY = ScriptedResponse((Text("Hi"),), "stop", ScriptedUsage(1, 1))
LONG = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "word " * 50}]}


def _post(provider: FakeProvider, body: dict[str, object]) -> tuple[int, str]:
    async def send() -> tuple[int, str]:
        async with provider.httpx_client() as client:
            response = await client.post(provider.endpoint, json=body)
            return response.status_code, response.text

    return asyncio.run(send())


def test_openai_answers_its_real_context_length_error() -> None:
    provider = FakeProvider("openai", REPLY, conditions=ProviderConditions(ContextWindow(20)))
    status, text = _post(provider, LONG)
    error = json.loads(text)["error"]
    assert status == 400
    assert error["code"] == "context_length_exceeded"
    assert error["message"].startswith("This model's maximum context length is 20 tokens.")
    assert provider.requests[-1].condition == "context_overflow"


def test_anthropic_answers_prompt_is_too_long() -> None:
    provider = FakeProvider("anthropic", REPLY, conditions=ProviderConditions(ContextWindow(20)))
    status, text = _post(provider, LONG)
    tokens = provider.requests[-1].prompt_tokens
    assert status == 400
    message = f"prompt is too long: {tokens} tokens > 20 maximum"
    assert json.loads(text)["error"] == {"type": "invalid_request_error", "message": message}


def test_a_prompt_inside_the_window_is_answered_and_billed_as_measured() -> None:
    provider = FakeProvider("openai", REPLY, conditions=ProviderConditions(ContextWindow(10_000)))
    status, text = _post(provider, LONG)
    assert status == 200
    assert json.loads(text)["usage"]["prompt_tokens"] == provider.requests[-1].prompt_tokens


def test_an_outage_fails_every_request_inside_its_window() -> None:
    now = [0.0]
    outage = ProviderConditions(outages=(Outage(10, 20, 529),))
    provider = FakeProvider("openai", REPLY, conditions=outage, clock=lambda: now[0])
    short = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    codes = []
    for at in (9.0, 10.0, 19.9, 20.0):
        now[0] = at
        codes.append(_post(provider, short)[0])
    assert codes == [200, 529, 529, 200]
    assert [r.condition for r in provider.requests] == [None, "outage", "outage", None]


def test_an_outage_scoped_to_a_model_fails_only_the_requests_naming_it() -> None:
    outage = ProviderConditions(outages=(Outage(0, 100, 529, model="big"),))
    provider = FakeProvider("openai", REPLY, conditions=outage, clock=lambda: 5.0)
    codes = [_post(provider, {"model": model, "messages": [{"role": "user", "content": "hi"}]})[0]
             for model in ("big", "small", "big")]
    assert codes == [529, 200, 529]
    assert [r.condition for r in provider.requests] == ["outage", None, "outage"]


def test_a_stalled_outage_sends_the_headers_and_then_nothing() -> None:
    outage = ProviderConditions(outages=(Outage(0, 100, "stall"),))
    provider = FakeProvider("openai", REPLY, conditions=outage, clock=lambda: 5.0)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()

    plan = provider.plan(IncomingRequest("POST", provider.endpoint, {}, body))

    assert (plan.status, plan.steps) == (200, (Hang(),))
    assert provider.requests[-1].condition == "outage"


def test_a_gemini_outage_reads_the_model_from_the_path() -> None:
    outage = ProviderConditions(outages=(Outage(0, 100, 503, model="big"),))
    provider = FakeProvider("gemini", REPLY, conditions=outage, clock=lambda: 5.0)
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}

    async def send(model: str) -> int:
        async with provider.httpx_client() as client:
            url = provider.endpoint.replace("{model}", model) + "?alt=sse"
            return (await client.post(url, json=body)).status_code

    assert [asyncio.run(send(m)) for m in ("big", "small")] == [503, 200]


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Outage(0, 5, 503, model=""),
     "Outage.model: got ''; expected a model name, or None for every model"),
    (lambda: Outage(5, 5), "Outage.end_seconds: got 5; expected a time after start_seconds (5)"),
    (lambda: Outage(0, 5, 404), "Outage.answer: got 404; expected one of 500, 502, 503, 529, "
                                "'connection_reset', 'stall'"),
    (lambda: ContextWindow(0), "ContextWindow.tokens: got 0; expected an int >= 1"),
])
def test_bad_conditions_say_what_is_allowed(make: object, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        make()  # type: ignore[operator]
    assert str(raised.value) == message
