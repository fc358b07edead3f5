"""aiohttp and requests/urllib3 reach the world as httpx does: same faults, virtual timeouts."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
import requests
import urllib3

from harness.intercept import (
    PROVIDER_ENVIRONMENT,
    ForeverStalled,
    intercepted_network,
    virtual_time,
)
from harness.runner import World
from harness.scenario import Scenario

OPENAI_URL = PROVIDER_ENVIRONMENT["OPENAI_BASE_URL"] + "/chat/completions"
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}],
        "stream_options": {"include_usage": True}}


def world(faults: list[dict[str, Any]] | None = None) -> World:
    scenario = Scenario(name="net", dialect="openai", model=[{"turn": 1, "text": "Hello there."}],
                        faults=faults or [], expect={"stop_state": "complete"})
    return World(scenario, seed=1)


def _text(sse: bytes) -> str:
    parts = []
    for line in sse.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                parts.append(choice["delta"].get("content") or "")
    return "".join(parts)


# ------------------------------------------------------------------------- aiohttp


async def _aiohttp_post(timeout: aiohttp.ClientTimeout | None = None) -> tuple[int, bytes]:
    async with aiohttp.ClientSession(timeout=timeout or aiohttp.ClientTimeout(total=300)) as s, \
            s.post(OPENAI_URL, json=BODY) as response:
        return response.status, await response.read()


def test_an_aiohttp_session_reaches_the_fake_provider() -> None:
    w = world()
    with intercepted_network(w.route(1)):
        status, body = w.clock.run(_aiohttp_post())
    assert (status, _text(body)) == (200, "Hello there.")
    assert [(r.turn, r.attempt, r.delivery) for r in w.request_records()] == [(1, 1, "complete")]
    assert w.foreign == []


def test_aiohttp_asks_the_world_again_for_each_request_of_a_session() -> None:
    w = world()

    async def twice() -> list[int]:
        async with aiohttp.ClientSession() as s:
            statuses = []
            for _ in range(2):
                async with s.post(OPENAI_URL, json=BODY) as response:
                    await response.read()
                    statuses.append(response.status)
            return statuses

    with intercepted_network(w.route(1)):
        assert w.clock.run(twice()) == [200, 200]
    assert len(w.requests) == 2


def test_aiohttp_sock_read_cuts_a_stall_in_virtual_time() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1}])  # for ever
    timeout = aiohttp.ClientTimeout(total=None, sock_read=30)
    with intercepted_network(w.route(1)), pytest.raises(aiohttp.SocketTimeoutError):
        w.clock.run(_aiohttp_post(timeout))
    assert w.clock.now() == 30.0
    record = w.request_records()[0]
    assert (record.delivery, record.ended_at) == ("partial", 30.0)


def test_aiohttp_total_timeout_cuts_a_stall_before_the_headers() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_before_headers"}])
    with intercepted_network(w.route(1)), pytest.raises(TimeoutError):
        w.clock.run(_aiohttp_post(aiohttp.ClientTimeout(total=20)))
    assert w.clock.now() == 20.0
    assert w.requests[0].ended == "timeout"


def test_aiohttp_waits_out_a_pause_shorter_than_its_timeout() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1, "seconds": 25}])
    with intercepted_network(w.route(1)):
        status, body = w.clock.run(_aiohttp_post(aiohttp.ClientTimeout(sock_read=30)))
    assert (status, _text(body), w.clock.now()) == (200, "Hello there.", 25.0)


def test_aiohttp_connect_timeout_on_a_connection_never_accepted() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_connecting"}])
    timeout = aiohttp.ClientTimeout(total=60, sock_connect=8)
    with intercepted_network(w.route(1)), pytest.raises(aiohttp.ConnectionTimeoutError):
        w.clock.run(_aiohttp_post(timeout))
    assert w.clock.now() == 8.0
    assert w.requests[0].ended == "timeout"


def test_aiohttp_gets_a_429_with_its_retry_after() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "http_error", "status": 429, "retry_after": 7}])
    with intercepted_network(w.route(1)):
        status, _ = w.clock.run(_aiohttp_post())
    assert status == 429
    assert w.request_records()[0].status == 429


def test_aiohttp_meets_a_reset_as_a_broken_payload() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "connection_reset", "after_events": 1}])
    with intercepted_network(w.route(1)), pytest.raises(aiohttp.ClientPayloadError):
        w.clock.run(_aiohttp_post())
    assert w.requests[0].ended == "reset"


def test_aiohttp_to_a_foreign_host_is_refused_and_recorded() -> None:
    w = world()

    async def escape() -> None:
        async with aiohttp.ClientSession() as s:
            await s.get("https://api.example.com/v1/models")

    with intercepted_network(w.route(1)), pytest.raises(
            aiohttp.ClientConnectorError, match="no network inside a harness case"):
        w.clock.run(escape())
    assert w.foreign == ["GET https://api.example.com/v1/models (by tests)"]


def test_aiohttp_is_restored_afterwards() -> None:
    before = aiohttp.TCPConnector._create_connection
    with intercepted_network(world().route(1)):
        assert aiohttp.TCPConnector._create_connection is not before
    assert aiohttp.TCPConnector._create_connection is before


# ------------------------------------------------------------------------ requests


def test_requests_reaches_the_fake_provider() -> None:
    w = world()
    with intercepted_network(w.route(1)):
        response = requests.post(OPENAI_URL, json=BODY, timeout=30)
    assert (response.status_code, _text(response.content)) == (200, "Hello there.")
    assert [r.delivery for r in w.request_records()] == ["complete"]


def test_requests_streams_line_by_line() -> None:
    w = world()
    with intercepted_network(w.route(1)), \
            requests.post(OPENAI_URL, json=BODY, timeout=30, stream=True) as response:
        lines = [line for line in response.iter_lines() if line]
    assert _text(b"\n".join(lines)) == "Hello there."


def test_requests_read_timeout_cuts_a_stall_before_the_headers() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_before_headers", "seconds": 50}])
    with intercepted_network(w.route(1)), pytest.raises(requests.ReadTimeout):
        requests.post(OPENAI_URL, json=BODY, timeout=20)
    assert w.clock.now() == 20.0


def test_requests_read_timeout_cuts_a_stall_mid_stream() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1}])
    with intercepted_network(w.route(1)), pytest.raises(requests.ConnectionError):
        requests.post(OPENAI_URL, json=BODY, timeout=(5, 30))
    assert w.clock.now() == 30.0
    assert w.request_records()[0].delivery == "partial"


def test_requests_connect_timeout_on_a_connection_never_accepted() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall_connecting"}])
    with intercepted_network(w.route(1)), pytest.raises(requests.ConnectTimeout):
        requests.post(OPENAI_URL, json=BODY, timeout=(8, 60))
    assert w.clock.now() == 8.0


def test_requests_without_timeout_on_an_endless_stall_is_reported() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "stall", "after_events": 1}])
    with intercepted_network(w.route(1)), pytest.raises(ForeverStalled):
        requests.post(OPENAI_URL, json=BODY)


def test_urllib3_retry_honours_retry_after_in_virtual_time() -> None:
    w = world(faults=[{"at": {"turn": 1, "attempt": 1}, "kind": "http_error", "status": 429,
                       "retry_after": 7}])
    retry = urllib3.Retry(total=2, status_forcelist=[429], allowed_methods=None,
                          respect_retry_after_header=True)
    with intercepted_network(w.route(1)), virtual_time(w.clock), \
            urllib3.PoolManager(retries=retry) as pool:
        response = pool.request("POST", OPENAI_URL, json=BODY, timeout=30)
    assert (response.status, _text(response.data)) == (200, "Hello there.")
    records = w.request_records()
    assert [(r.attempt, r.status) for r in records] == [(1, 429), (2, 200)]
    assert records[1].started_at == 7.0


def test_requests_meets_a_reset_as_a_broken_stream() -> None:
    w = world(faults=[{"at": {"turn": 1}, "kind": "connection_reset", "after_events": 1}])
    with intercepted_network(w.route(1)), pytest.raises(requests.exceptions.ChunkedEncodingError):
        requests.post(OPENAI_URL, json=BODY, timeout=30)
    assert w.requests[0].ended == "reset"


def test_requests_to_a_foreign_host_is_refused_and_recorded() -> None:
    w = world()
    with intercepted_network(w.route(1)), pytest.raises(
            requests.ConnectionError, match="no network inside a harness case"):
        requests.get("https://api.example.com/v1/models", timeout=5)
    assert w.foreign == ["GET https://api.example.com/v1/models (by tests)"]
