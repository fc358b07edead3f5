"""The provider core (turn/attempt keying, determinism) and its two transports."""

from __future__ import annotations

import asyncio
import json

import httpx
import httpx2
import pytest
import respx

from fakes import (
    ByteAtATime,
    ConnectionReset,
    FakeProvider,
    HttpError,
    IncomingRequest,
    ProviderRequest,
    RandomSplits,
    ScriptedResponse,
    ScriptedUsage,
    Stall,
    StallBeforeHeaders,
    Text,
    VirtualClock,
)

REPLY = ScriptedResponse((Text("Bonjour à tous, here is the answer."),), "stop",
                         ScriptedUsage(40, 9))


def body_for(turn: int) -> bytes:
    messages: list[dict[str, str]] = [{"role": "user", "content": "hi"}]
    for _ in range(turn - 1):
        messages += [{"role": "assistant", "content": "..."}, {"role": "user", "content": "go"}]
    return json.dumps({"model": "m", "messages": messages, "stream": True}).encode()


def post(provider: FakeProvider, turn: int) -> int:
    return provider.plan(IncomingRequest("POST", provider.endpoint, {}, body_for(turn))).status


def test_a_fault_keyed_to_turn_and_attempt_hits_only_that_attempt() -> None:
    provider = FakeProvider("openai", REPLY, faults={(2, 1): (HttpError(429),)})
    assert [post(provider, 1), post(provider, 2), post(provider, 2), post(provider, 1)] == [
        200, 429, 200, 200]
    assert [(r.turn, r.attempt) for r in provider.requests] == [(1, 1), (2, 1), (2, 2), (1, 2)]


def test_attempts_survive_an_agent_restart() -> None:
    # The provider is world state: a new agent incarnation re-sending turn 2
    # meets attempt 2, not a fresh attempt 1.
    provider = FakeProvider("anthropic", REPLY, faults={(2, 1): (ConnectionReset(after_bytes=5),)})
    post(provider, 2)
    post(provider, 2)
    assert provider.attempts(2) == 2
    assert provider.requests[-1].attempt == 2


def test_the_responder_reacts_to_the_request() -> None:
    seen: list[ProviderRequest] = []

    def respond(request: ProviderRequest) -> ScriptedResponse:
        seen.append(request)
        return ScriptedResponse((Text(f"turn {request.turn}"),), "stop", ScriptedUsage(1, 1))

    provider = FakeProvider("openai", respond)
    provider.plan(IncomingRequest("POST", provider.endpoint, {"X-Trace": "t1"}, body_for(3)))
    assert seen[0].turn == 3
    assert seen[0].headers == {"x-trace": "t1"}
    assert seen[0].json is not None
    assert seen[0].json["model"] == "m"


@pytest.mark.parametrize(("dialect", "needle"), [("openai", b'"type":"invalid_request_error"'),
                                                 ("anthropic", b'"type":"not_found_error"')])
def test_other_paths_get_a_404_in_the_dialect_format(dialect: str, needle: bytes) -> None:
    provider = FakeProvider(dialect, REPLY)  # type: ignore[arg-type]
    plan = provider.plan(IncomingRequest("POST", provider.origin + "/v1/other", {}, b"{}"))
    assert plan.status == 404
    assert needle in plan.body
    assert (provider.requests[0].turn, provider.requests[0].attempt) == (0, 0)


def test_same_seed_same_bytes_other_seed_other_splits() -> None:
    def steps(seed: int) -> object:
        provider = FakeProvider("openai", REPLY, faults={(1, 1): (RandomSplits(15),)}, seed=seed)
        return provider.plan(IncomingRequest("POST", provider.endpoint, {}, body_for(1))).steps

    assert steps(11) == steps(11)
    assert steps(11) != steps(12)


def test_endpoints_and_base_urls() -> None:
    openai_provider = FakeProvider("openai", REPLY)
    anthropic_provider = FakeProvider("anthropic", REPLY)
    assert openai_provider.endpoint == "https://openai.fake.test/v1/chat/completions"
    assert openai_provider.base_url == "https://openai.fake.test/v1"
    assert anthropic_provider.endpoint == "https://anthropic.fake.test/v1/messages"
    assert anthropic_provider.base_url == "https://anthropic.fake.test"


# ------------------------------------------------------------------- respx/httpx


def test_respx_client_streams_exactly_the_planned_bytes(virtual_clock: VirtualClock) -> None:
    faults = {(1, 1): (ByteAtATime(), Stall(after_events=2, seconds=30))}
    provider = FakeProvider("openai", REPLY, faults=faults)
    reference = FakeProvider("openai", REPLY, faults=faults)
    planned = reference.plan(IncomingRequest("POST", reference.endpoint, {}, body_for(1)))

    async def read() -> list[bytes]:
        async with provider.httpx_client() as http, http.stream(
            "POST", "/chat/completions", content=body_for(1)
        ) as response:
            assert response.status_code == 200
            return [chunk async for chunk in response.aiter_raw()]

    chunks = virtual_clock.run(read())
    assert b"".join(chunks) == planned.body
    assert len(chunks) == len(planned.body)
    assert virtual_clock.now() == 30.0


def test_respx_reset_raises_read_error(virtual_clock: VirtualClock) -> None:
    provider = FakeProvider("anthropic", REPLY, faults={(1, 1): (ConnectionReset(after_bytes=9),)})

    received: list[bytes] = []

    async def read() -> None:
        async with provider.httpx_client() as http, http.stream(
            "POST", "/v1/messages", content=body_for(1)
        ) as response:
            async for chunk in response.aiter_raw():
                received.append(chunk)

    with pytest.raises(httpx.ReadError, match=r"^\[Errno 104\] Connection reset by peer$"):
        virtual_clock.run(read())
    assert b"".join(received) == b"event: me"


def test_mount_adds_the_provider_to_an_existing_router(virtual_clock: VirtualClock) -> None:
    provider = FakeProvider("openai", REPLY)

    async def call() -> int:
        router = respx.MockRouter(assert_all_mocked=True, assert_all_called=False)
        provider.mount(router)
        async with httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler)) as http:
            response = await http.post(provider.endpoint, content=body_for(1))
            return response.status_code

    assert virtual_clock.run(call()) == 200


# --------------------------------------------------------------------- httpx2


def test_httpx2_stall_before_headers_runs_on_virtual_time(virtual_clock: VirtualClock) -> None:
    provider = FakeProvider("openai", REPLY, faults={(1, 1): (StallBeforeHeaders(seconds=45),)})

    async def call() -> bytes:
        async with provider.httpx2_client() as http:
            response = await http.post("/chat/completions", content=body_for(1))
            return response.content

    assert virtual_clock.run(call()).endswith(b"data: [DONE]\n\n")
    assert virtual_clock.now() == 45.0


def test_httpx2_reset_and_hang(virtual_clock: VirtualClock) -> None:
    faults = {(1, 1): (ConnectionReset(after_events=1),), (1, 2): (Stall(after_events=1),)}
    provider = FakeProvider("openai", REPLY, faults=faults)

    async def call() -> None:
        async with provider.httpx2_client() as http:
            with pytest.raises(httpx2.ReadError):
                await http.post("/chat/completions", content=body_for(1))
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(60):
                    await http.post("/chat/completions", content=body_for(1))

    virtual_clock.run(call())
    assert virtual_clock.now() == 60.0


def test_httpx2_refuses_other_hosts(virtual_clock: VirtualClock) -> None:
    provider = FakeProvider("openai", REPLY)

    async def call() -> None:
        async with provider.httpx2_client() as http:
            with pytest.raises(httpx2.ConnectError, match=r"^no fake host 'example\.com'$"):
                await http.get("https://example.com/")

    virtual_clock.run(call())


def held_in_one_message(system: str, asked: str) -> bytes:
    """A request of an agent that writes its conversation into one user message (DSPy's
    ReAct: its trajectory so far), sending no assistant message."""
    return json.dumps({"model": "m", "messages": [
        {"role": "system", "content": system}, {"role": "user", "content": asked}]}).encode()


def test_a_conversation_held_in_one_message_asks_the_next_turn_as_it_grows() -> None:
    provider = FakeProvider("openai", REPLY, faults={(1, 1): (HttpError(429),)})

    def post_held(system: str, asked: str) -> int:
        return provider.plan(IncomingRequest(
            "POST", provider.endpoint, {}, held_in_one_message(system, asked))).status

    assert post_held("react", "mail ops") == 429
    post_held("react", "mail ops")  # the retry: the same request, the same turn
    post_held("react", "mail ops; sent")  # the trajectory grew by a step
    post_held("extract", "mail ops; sent; finished")  # the final answer, asked apart
    post_held("react", "mail ops")  # a restart asking the first again
    post_held("react", "mail ops; sent")
    assert [(r.turn, r.attempt) for r in provider.requests] == [
        (1, 1), (1, 2), (2, 1), (3, 1), (1, 3), (2, 2)]


def test_a_restart_that_adds_the_prompt_again_asks_turn_one_again() -> None:
    # Google ADK's and the Agents SDK's restarts send the prompt twice: a message more,
    # not a conversation grown in its text.
    provider = FakeProvider("openai", REPLY)
    once = [{"role": "user", "content": "mail ops"}]
    for messages in (once, once + once):
        provider.plan(IncomingRequest("POST", provider.endpoint, {}, json.dumps(
            {"model": "m", "messages": messages}).encode()))
    assert [(r.turn, r.attempt) for r in provider.requests] == [(1, 1), (1, 2)]


def test_a_restart_that_marks_the_prompt_otherwise_asks_turn_one_again() -> None:
    # Anthropic's cache_control is no part of what a message asks: an agent that drops its
    # marks after a restart (or moves them) repeats the first turn, it does not ask on.
    provider = FakeProvider("anthropic", REPLY)
    text = {"type": "text", "text": "mail ops"}
    marked = {**text, "cache_control": {"type": "ephemeral"}}
    for block in (marked, text, marked):
        provider.plan(IncomingRequest("POST", provider.endpoint, {}, json.dumps(
            {"model": "m", "max_tokens": 10,
             "messages": [{"role": "user", "content": [block]}]}).encode()))
    assert [(r.turn, r.attempt) for r in provider.requests] == [(1, 1), (1, 2), (1, 3)]
