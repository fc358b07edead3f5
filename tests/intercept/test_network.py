"""Every default httpx/httpx2 transport reaches the world, with client timeouts in virtual time."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from harness.intercept import PROVIDER_ENVIRONMENT, ForeverStalled, intercepted_network
from harness.runner import World
from harness.scenario import Scenario

OPENAI_URL = PROVIDER_ENVIRONMENT["OPENAI_BASE_URL"] + "/chat/completions"
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
        "stream_options": {"include_usage": True}}


def world(dialect: str = "openai", faults: list[dict[str, Any]] | None = None) -> World:
    scenario = Scenario(name="net", dialect=dialect, model=[{"turn": 1, "text": "Hello there."}],
                        faults=faults or [], expect={"stop_state": "complete"})
    return World(scenario, seed=1)


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in PROVIDER_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


def _text(sse: bytes) -> str:
    parts = []
    for line in sse.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                parts.append(choice["delta"].get("content") or "")
    return "".join(parts)


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_an_async_client_with_the_default_transport_reaches_the_fake_provider(lib: Any) -> None:
    w = world()

    async def ask() -> bytes:
        async with lib.AsyncClient() as client:
            response = await client.post(OPENAI_URL, json=BODY)
            return bytes(response.content)

    with intercepted_network(w.route(1)):
        body = w.clock.run(ask())
    assert _text(body) == "Hello there."
    assert [(r.turn, r.attempt, r.delivery) for r in w.request_records()] == [(1, 1, "complete")]


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_blocking_client_reaches_it_too(lib: Any) -> None:
    w = world()
    with intercepted_network(w.route(1)), lib.Client() as client:
        body = client.post(OPENAI_URL, json=BODY).content
    assert _text(body) == "Hello there."
    assert w.request_records()[0].delivery == "complete"


def test_the_transports_are_restored_afterwards() -> None:
    before = httpx2.AsyncHTTPTransport.handle_async_request
    with intercepted_network(world().route(1)):
        assert httpx2.AsyncHTTPTransport.handle_async_request is not before
    assert httpx2.AsyncHTTPTransport.handle_async_request is before


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_foreign_host_fails_loudly_and_is_recorded(lib: Any) -> None:
    w = world()

    async def escape() -> None:
        async with lib.AsyncClient() as client:
            await client.get("https://api.example.com/v1/models")

    with intercepted_network(w.route(1)), pytest.raises(
            lib.ConnectError, match=r"^no network inside a harness case: 'api\.example\.com' "
                                    r"is not a fake provider"):
        w.clock.run(escape())
    # The line names who sent it: here the test's own package, the first caller above httpx.
    assert w.foreign == ["GET https://api.example.com/v1/models (by tests)"]
    assert w.requests == []


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_stall_mid_stream_raises_read_timeout_after_the_clients_read_timeout(lib: Any) -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1}])  # for ever

    async def read_all() -> None:
        timeout = lib.Timeout(5.0, read=30.0)
        async with lib.AsyncClient(timeout=timeout) as client, \
                client.stream("POST", OPENAI_URL, json=BODY) as response:
            async for _ in response.aiter_bytes():
                pass

    with intercepted_network(w.route(1)), pytest.raises(lib.ReadTimeout):
        w.clock.run(read_all())
    assert w.clock.now() == 30.0
    record = w.request_records()[0]
    assert (record.delivery, record.ended_at) == ("partial", 30.0)


def test_silence_before_the_headers_counts_against_the_read_timeout() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_before_headers", "seconds": 50}])
    with intercepted_network(w.route(1)), httpx2.Client(timeout=20.0) as client, \
            pytest.raises(httpx2.ReadTimeout):
        client.post(OPENAI_URL, json=BODY)
    assert w.clock.now() == 20.0


def test_a_pause_shorter_than_the_timeout_is_waited_out_in_virtual_time() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1, "seconds": 25}])
    with intercepted_network(w.route(1)), httpx2.Client(timeout=30.0) as client:
        body = client.post(OPENAI_URL, json=BODY).content
    assert _text(body) == "Hello there."
    assert w.clock.now() == 25.0


def test_a_blocking_client_without_read_timeout_on_an_endless_stall_is_reported() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1}])
    with intercepted_network(w.route(1)), httpx2.Client(timeout=None) as client, \
            pytest.raises(ForeverStalled, match="no read timeout"):
        client.post(OPENAI_URL, json=BODY)


@pytest.mark.usefixtures("provider_env")
def test_async_openai_built_from_the_environment_works_unchanged() -> None:
    w = world()

    async def ask() -> str:
        client = openai.AsyncOpenAI()
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    with intercepted_network(w.route(1)):
        assert w.clock.run(ask()) == "Hello there."


@pytest.mark.usefixtures("provider_env")
def test_the_sdk_timeout_and_its_own_retries_run_in_virtual_time() -> None:
    # The first attempt stalls before its headers; the SDK times out after its 30 s,
    # backs off as it would against the real API, and the second attempt succeeds.
    w = world(faults=[{"at": {"turn": 1, "attempt": 1}, "kind": "stall_before_headers"}])

    async def ask() -> str:
        client = openai.AsyncOpenAI(timeout=30.0, max_retries=2)
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    with intercepted_network(w.route(1)):
        assert w.clock.run(ask()) == "Hello there."
    records = w.request_records()
    assert [(r.attempt, r.delivery) for r in records] == [(1, "partial"), (2, "complete")]
    assert records[0].ended_at == 30.0
    assert 30.0 < records[1].started_at < 35.0  # the SDK's own backoff, in virtual time


@pytest.mark.usefixtures("provider_env")
def test_async_anthropic_messages_stream_works_unchanged() -> None:
    w = world("anthropic")

    async def ask() -> str:
        client = anthropic.AsyncAnthropic()
        async with client.messages.stream(model="m", max_tokens=64,
                                          messages=[{"role": "user", "content": "hi"}]) as s:
            return "".join([text async for text in s.text_stream])

    with intercepted_network(w.route(1)):
        assert w.clock.run(ask()) == "Hello there."


@pytest.mark.usefixtures("provider_env")
def test_the_wrong_dialect_gets_a_404_that_says_so() -> None:
    w = world("anthropic")

    async def ask() -> None:
        client = openai.AsyncOpenAI(max_retries=0)
        await client.chat.completions.create(model="m", stream=True,
                                             messages=[{"role": "user", "content": "hi"}])

    with intercepted_network(w.route(1)), pytest.raises(openai.NotFoundError) as raised:
        w.clock.run(ask())
    assert ("this scenario speaks anthropic; the agent called /v1/chat/completions"
            in str(raised.value))


@pytest.mark.usefixtures("provider_env")
def test_a_body_read_again_after_the_end_gives_nothing_more() -> None:
    # The SDK drains a finished stream before closing it; the bytes count once.
    w = world()

    async def ask() -> str:
        stream = await openai.AsyncOpenAI().chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    with intercepted_network(w.route(1)):
        assert w.clock.run(ask()) == "Hello there."
    assert [p.delivered_bytes for p in w.requests] == [w.requests[0].record.planned_bytes]
    assert [r.delivery for r in w.request_records()] == ["complete"]


@pytest.mark.parametrize("lib", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_connection_left_unaccepted_raises_connect_timeout_after_the_connect_timeout(
        lib: Any) -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_connecting"}])  # never accepted

    async def ask() -> None:
        async with lib.AsyncClient(timeout=lib.Timeout(60.0, connect=8.0)) as client:
            await client.post(OPENAI_URL, json=BODY)

    with intercepted_network(w.route(1)), pytest.raises(lib.ConnectTimeout):
        w.clock.run(ask())
    assert w.clock.now() == 8.0
    blocking = world(faults=[{"at": {"turn": 1}, "kind": "stall_connecting"}])
    with intercepted_network(blocking.route(1)), pytest.raises(lib.ConnectTimeout), \
            lib.Client(timeout=lib.Timeout(60.0, connect=8.0)) as client:
        client.post(OPENAI_URL, json=BODY)
    assert blocking.clock.now() == 8.0


@pytest.mark.usefixtures("provider_env")
def test_the_sdk_retries_a_connect_timeout_as_it_would_against_the_real_api() -> None:
    w = world(faults=[{"at": {"turn": 1, "attempt": 1}, "kind": "stall_connecting",
                       "seconds": 100}])

    async def ask() -> str:
        client = openai.AsyncOpenAI(timeout=openai.Timeout(60.0, connect=5.0), max_retries=1)
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    with intercepted_network(w.route(1)):
        assert w.clock.run(ask()) == "Hello there."
    assert [r.attempt for r in w.request_records()] == [1, 2]
    assert w.request_records()[0].ended_at == 5.0


@pytest.mark.parametrize("lib", [httpx, httpx2])
def test_the_world_reads_a_requests_headers_as_a_dict_of_them_reads(lib: Any) -> None:
    # Read in one pass over the items: the same names (lower case, first order) and
    # values, a repeated name's joined by ", " as the mapping joins them.
    from harness.intercept._network import _header_dict

    headers = lib.Headers([("X-Stainless-Lang", "python"), ("Accept", "application/json"),
                           ("x-trace", "a"), ("Authorization", "Bearer k"), ("X-Trace", "b"),
                           ("accept", "text/event-stream"), ("Empty", "")])
    read = _header_dict(headers)
    assert read == dict(headers)
    assert list(read) == list(dict(headers))
    assert read["x-trace"] == "a, b"


def test_litellms_gemini_variable_reaches_the_gemini_fake() -> None:
    # litellm's gemini/ models read GEMINI_API_BASE (its version included) and append
    # models/{model}:streamGenerateContent; google-genai's GOOGLE_GEMINI_BASE_URL they
    # never read, and without the variable they called the real host.
    w = world("gemini")
    url = PROVIDER_ENVIRONMENT["GEMINI_API_BASE"] + "/models/gemini-2.5-flash:streamGenerateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with intercepted_network(w.route(1)), httpx.Client() as client:
        answer = client.post(url, json=body, headers={
            "x-goog-api-key": PROVIDER_ENVIRONMENT["GOOGLE_API_KEY"]})
    assert answer.status_code == 200
    assert answer.content.startswith(b'data: {"candidates":')
    assert w.foreign == []
    assert [(r.turn, r.attempt, r.delivery) for r in w.request_records()] == [(1, 1, "complete")]
