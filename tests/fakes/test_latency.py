"""The modelled time to first token: a base wait plus prefill of the uncached prompt."""

from __future__ import annotations

import json

import pytest

from fakes import (
    CacheConfig,
    FakeProvider,
    IncomingRequest,
    Latency,
    Pause,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    prompt_view,
)
from harness import ConfigError

REPLY = ScriptedResponse((Text("ok"),), "stop", ScriptedUsage(10, 1))
LONG = "policy " * 900  # well above OpenAI's 1,024-token caching minimum


def _body(system: str) -> dict[str, object]:
    return {"model": "fake-gpt", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": "go"}]}


def _plan(provider: FakeProvider, body: dict[str, object]) -> tuple[object, ...]:
    request = IncomingRequest("POST", provider.endpoint, {}, json.dumps(body).encode())
    return provider.plan(request).steps


def test_without_a_latency_model_the_first_byte_leaves_at_once() -> None:
    assert not isinstance(_plan(FakeProvider("openai", REPLY), _body("hi"))[0], Pause)


def test_the_first_byte_waits_for_the_whole_prompt_without_a_cache() -> None:
    provider = FakeProvider("openai", REPLY, latency=Latency())
    tokens = prompt_view("openai", _body(LONG)).tokens
    assert _plan(provider, _body(LONG))[0] == Pause(round(0.2 + 0.25 * tokens / 1000, 6))


def test_a_cache_hit_shortens_the_wait_to_the_uncached_part() -> None:
    provider = FakeProvider("openai", REPLY, cache=CacheConfig(), latency=Latency())
    cold = _plan(provider, _body(LONG))[0]
    warm = _plan(provider, _body(LONG))[0]
    assert isinstance(cold, Pause)
    assert isinstance(warm, Pause)
    assert warm.seconds < cold.seconds / 2
    seen = provider.requests[-1].cache
    assert seen is not None
    assert warm == Pause(Latency().first_token_seconds(
        uncached_tokens=seen.uncached_input_tokens, cached_tokens=seen.cache_read_tokens))


@pytest.mark.parametrize("field", ["base_seconds", "per_1k_uncached_seconds",
                                   "per_1k_cached_seconds"])
def test_a_negative_or_infinite_wait_is_refused(field: str) -> None:
    for bad in (-1, float("nan"), float("inf"), True):
        with pytest.raises(ConfigError, match=rf"^Latency\.{field}: got .*; expected a finite"):
            Latency(**{field: bad})  # type: ignore[arg-type]
