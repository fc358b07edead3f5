"""harness record: forwards to a loopback upstream, keeps raw bytes and timing, never a key."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from loopback import KEY, Upstream

from harness.record import RecordingProxy, import_capture, load_capture

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

BODY = {"model": "gpt-4o-mini", "stream": True,
        "messages": [{"role": "user", "content": "Did the invoice go out?"}]}


def post(proxy: RecordingProxy, path: str = "/v1/chat/completions",
         **headers: str) -> httpx.Response:
    with httpx.Client(base_url=proxy.url, timeout=10) as client:
        return client.post(path, json=BODY, headers={"authorization": f"Bearer {KEY}",
                                                     **headers})


def test_the_answer_passes_through_and_is_kept_read_by_read(upstream: Upstream,
                                                            tmp_path: Path) -> None:
    upstream.pause_after_first = 0.3
    with RecordingProxy(upstream.url, tmp_path) as proxy:
        answer = post(proxy)
    assert answer.status_code == 200
    assert answer.content == bytes(upstream.sent)
    assert upstream.seen[0][1]["authorization"] == f"Bearer {KEY}"  # the upstream needs it
    [path] = proxy.written
    assert path.name == "0001-v1-chat-completions.json"
    exchange = load_capture(path).exchange
    assert exchange.body == bytes(upstream.sent)
    assert exchange.chunks[0].data.startswith(b"data: {")
    gaps = [b.at - a.at for a, b in zip(exchange.chunks, exchange.chunks[1:], strict=False)]
    assert max(gaps) >= 0.25  # the upstream's pause, seen where it happened
    assert json.loads(exchange.request_body)["messages"] == BODY["messages"]


def test_a_capture_never_holds_the_key_the_client_sent(upstream: Upstream,
                                                       tmp_path: Path) -> None:
    with RecordingProxy(upstream.url, tmp_path) as proxy:
        post(proxy, "/v1/chat/completions?key=" + KEY, **{"x-api-key": KEY, "api-key": KEY,
                                                          "x-goog-api-key": KEY})
        refused = post(proxy, "/v1/echo-key")
    assert KEY in refused.text  # the client still sees what the upstream said
    assert len(proxy.written) == 2
    for path in proxy.written:
        raw = path.read_bytes()
        assert KEY.encode() not in raw
        assert KEY[8:24].encode() not in raw  # not even a piece of it
        names = {name for name, _ in load_capture(path).exchange.request_headers}
        assert not names & {"authorization", "x-api-key", "api-key", "x-goog-api-key"}


def test_a_reset_upstream_is_kept_as_a_reset_and_imports_as_one(upstream: Upstream,
                                                                tmp_path: Path) -> None:
    upstream.reset_after_first = True
    with RecordingProxy(upstream.url, tmp_path) as proxy, pytest.raises(httpx.HTTPError):
        post(proxy)
    [path] = proxy.written
    assert load_capture(path).exchange.ended == "reset"
    faults = import_capture(path).scenario.faults
    assert [f.kind for f in faults] == ["connection_reset"]


def test_a_recorded_pause_imports_as_a_stall(upstream: Upstream, tmp_path: Path) -> None:
    upstream.pause_after_first = 0.3
    with RecordingProxy(upstream.url, tmp_path) as proxy:
        post(proxy)
    imported = import_capture(proxy.written[0], stall_seconds=0.25)
    [stall] = imported.scenario.faults
    assert stall.kind == "stall"
    assert stall.fake_fields()["after_events"] == 1
    assert 0.25 <= stall.fake_fields()["seconds"] < 5
    assert imported.scenario.model[0].text == "The invoice went out at 09:14."


def test_an_unreachable_upstream_is_a_502_and_nothing_is_kept(tmp_path: Path) -> None:
    with RecordingProxy("http://127.0.0.1:9", tmp_path) as proxy:
        answer = post(proxy)
    assert answer.status_code == 502
    assert "cannot be reached" in answer.json()["error"]["message"]
    assert proxy.written == []


def test_numbers_go_on_after_the_files_already_there(upstream: Upstream,
                                                     tmp_path: Path) -> None:
    (tmp_path / "0007-v1-chat-completions.json").write_text("{}")
    with RecordingProxy(upstream.url, tmp_path) as proxy:
        post(proxy)
    assert proxy.written[0].name.startswith("0008-")


def test_a_client_that_asks_to_close_still_gets_the_whole_answer(upstream: Upstream,
                                                                 tmp_path: Path) -> None:
    with RecordingProxy(upstream.url, tmp_path) as proxy:
        answer = post(proxy, connection="close")
    assert answer.status_code == 200
    assert answer.content == bytes(upstream.sent)
    assert answer.content.endswith(b"data: [DONE]\n\n")


def test_a_key_inside_the_request_body_is_masked_too(upstream: Upstream, tmp_path: Path) -> None:
    with RecordingProxy(upstream.url, tmp_path) as proxy, \
            httpx.Client(base_url=proxy.url, timeout=10) as client:
        client.post("/v1/chat/completions", json={**BODY, "api_key": KEY})
    assert KEY.encode() not in proxy.written[0].read_bytes()
    sent = json.loads(load_capture(proxy.written[0]).exchange.request_body)
    assert sent["api_key"] == "*" * len(KEY)  # the field stays, masked
