"""Quotas on virtual time: the dialects' rate-limit headers and the 429s load brings."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes import (
    FakeProvider,
    HttpError,
    IncomingRequest,
    Quota,
    QuotaWindow,
    ResponsePlan,
    ScriptedResponse,
    ScriptedUsage,
    Text,
    VirtualClock,
)
from harness import ConfigError
from harness.ports import CALENDAR_ORIGIN_UNIX, parse_retry_after

REPLY = ScriptedResponse((Text("ok"),), "stop", ScriptedUsage(400, 20))
BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "stream": True}).encode()


class Now:
    """A settable virtual now, as the world's clock hands it to the provider."""

    def __init__(self) -> None:
        self.value = 0.0

    def __call__(self) -> float:
        return self.value


def ask(provider: FakeProvider) -> ResponsePlan:
    return provider.plan(IncomingRequest("POST", provider.endpoint, {}, BODY))


def headers(plan: ResponsePlan) -> dict[str, str]:
    return dict(plan.headers)


def test_openai_states_its_limits_on_every_answer_with_go_durations() -> None:
    now = Now()
    provider = FakeProvider("openai", REPLY, quota=Quota(requests_per_minute=3,
                                                         tokens_per_minute=5000), clock=now)
    ask(provider)
    now.value = 20.0
    seen = headers(ask(provider))
    assert {k: v for k, v in seen.items() if k.startswith("x-ratelimit")} == {
        "x-ratelimit-limit-requests": "3", "x-ratelimit-remaining-requests": "1",
        "x-ratelimit-reset-requests": "1m0s",
        "x-ratelimit-limit-tokens": "5000", "x-ratelimit-remaining-tokens": "4160",
        "x-ratelimit-reset-tokens": "1m0s"}


def test_anthropic_states_four_limits_with_rfc3339_resets() -> None:
    now = Now()
    provider = FakeProvider("anthropic", REPLY, quota=Quota(input_tokens_per_minute=1000),
                            clock=now, calendar_origin=CALENDAR_ORIGIN_UNIX)
    now.value = 5.0
    seen = headers(ask(provider))
    assert seen["anthropic-ratelimit-input-tokens-limit"] == "1000"
    assert seen["anthropic-ratelimit-input-tokens-remaining"] == "600"
    assert seen["anthropic-ratelimit-input-tokens-reset"] == "2026-01-01T00:01:05Z"
    assert seen["anthropic-ratelimit-output-tokens-remaining"] == str(400_000 - 20)
    assert seen["anthropic-ratelimit-requests-limit"] == "10000"  # nominal: not declared
    assert {"anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-reset"} <= set(seen)


def test_without_a_quota_the_headers_are_sent_and_nothing_is_refused() -> None:
    provider = FakeProvider("openai", REPLY)
    statuses = [ask(provider).status for _ in range(50)]
    assert statuses == [200] * 50
    assert headers(ask(provider))["x-ratelimit-limit-requests"] == "10000"


def test_the_request_over_the_quota_waits_exactly_until_the_oldest_leaves() -> None:
    now = Now()
    provider = FakeProvider("openai", REPLY, quota=Quota(requests_per_minute=2), clock=now)
    ask(provider)
    now.value = 15.0
    ask(provider)
    now.value = 20.5
    refused = ask(provider)
    assert refused.status == 429
    assert headers(refused)["retry-after-ms"] == "39500"
    assert "retry-after" not in headers(refused)  # OpenAI states it in milliseconds only
    assert "requests per min (RPM): Limit 2" in refused.body.decode()
    now.value = 20.5 + 39.5
    assert ask(provider).status == 200


def test_a_refused_request_is_not_charged_so_waiting_as_asked_is_enough() -> None:
    now = Now()
    provider = FakeProvider("openai", REPLY, quota=Quota(requests_per_minute=1), clock=now)
    ask(provider)
    for second in (1.0, 2.0, 3.0):  # hammering gets 429 after 429 …
        now.value = second
        assert ask(provider).status == 429
    now.value = 60.0  # … but the wait the first 429 asked for is still the right one
    assert ask(provider).status == 200


def test_anthropic_tokens_refusal_gives_whole_seconds_in_retry_after() -> None:
    now = Now()
    provider = FakeProvider("anthropic", REPLY, quota=Quota(input_tokens_per_minute=1000),
                            clock=now)
    for second in (0.0, 10.0, 20.0):
        now.value = second
        assert ask(provider).status == 200
    now.value = 30.2
    refused = ask(provider)
    assert refused.status == 429
    assert headers(refused)["retry-after"] == "30"  # the first leaves at 60: 29.8 s, rounded up
    assert json.loads(refused.body)["error"]["type"] == "rate_limit_error"
    assert parse_retry_after(headers(refused), now_unix=0) == 30.0


def test_a_scripted_fault_comes_before_the_quota() -> None:
    provider = FakeProvider("openai", REPLY, faults={(1, 1): (HttpError(503),)},
                            quota=Quota(requests_per_minute=1), clock=Now())
    assert [ask(provider).status, ask(provider).status, ask(provider).status] == [503, 200, 429]


def test_the_official_sdk_waits_as_retry_after_ms_asks() -> None:
    # The SDK's own retry logic sees the wait the harness judges by, in virtual time.
    clock = VirtualClock()
    provider = FakeProvider("openai", REPLY, quota=Quota(requests_per_minute=1),
                            clock=clock.now)
    asked_at: list[float] = []

    async def two_completions() -> None:
        async with provider.httpx2_client() as http:
            client = openai.AsyncOpenAI(api_key="test", base_url=provider.base_url,
                                        http_client=http, max_retries=1)
            for _ in range(2):
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}])
                asked_at.append(clock.now())

    clock.run(two_completions())
    assert [r.attempt for r in provider.requests] == [1, 2, 3]
    assert asked_at == [0.0, 60.0]


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_a_quota_limit_is_a_positive_int(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^Quota\.requests_per_minute: got "):
        Quota(requests_per_minute=value)  # type: ignore[arg-type]


def test_the_window_wait_reads_the_tokens_it_must_shed() -> None:
    window = QuotaWindow(Quota(tokens_per_minute=100))
    for at, tokens in ((0.0, 60), (10.0, 30), (20.0, 30)):
        window.admit(at)
        window.charge(tokens, 0)
    # 120 used: shedding the first (60 at t=0) leaves 60 < 100, at t=60.
    assert window.wait(25.0) == pytest.approx(35.0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 30, allow_nan=False), st.integers(0, 500)),
                min_size=1, max_size=30),
       st.integers(1, 10), st.integers(1, 2000))
def test_the_asked_wait_is_exactly_enough(arrivals: list[tuple[float, int]], rpm: int,
                                          tpm: int) -> None:
    # Requests arrive (in time order) and are admitted when there is room; whenever one is
    # refused, waiting the asked time gets it in, and waiting a millisecond less does not.
    window = QuotaWindow(Quota(requests_per_minute=rpm, tokens_per_minute=tpm))
    now = 0.0
    for gap, tokens in arrivals:
        now += gap
        wait = window.wait(now)
        if wait > 0.001:
            assert window.check(now + wait - 0.001) is not None
        now += wait
        assert window.check(now) is None
        window.admit(now)
        window.charge(tokens, 0)


def test_without_a_clock_the_provider_reads_the_loop_it_serves_on(
        virtual_clock: VirtualClock) -> None:
    provider = FakeProvider("openai", REPLY, quota=Quota(requests_per_minute=1))

    async def twice(pause: float) -> list[int]:
        async with provider.httpx_client() as http:
            first = await http.post("/chat/completions", content=BODY)
            await asyncio.sleep(pause)
            second = await http.post("/chat/completions", content=BODY)
        return [first.status_code, second.status_code]

    assert virtual_clock.run(twice(59.0)) == [200, 429]
    # t=59: the request of t=0 still counts; t=119: the refused one of t=59 never did.
    assert virtual_clock.run(twice(60.0)) == [429, 200]
