"""The served fakes' door: strangers refused, bad input answered with a 4xx and JSON,
no request able to hold a connection forever or to break the requests after it."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.scenario import load_scenario
from harness.serve import Limits, ServedWorld, ServerThread, Worlds, build_app, new_token

# System tier (pytest --system): real servers on loopback.
pytestmark = pytest.mark.system

SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "exec-mail-once.yaml"
MAIL = {"to": "cfo@example.com", "body": "invoice 7"}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
CONTROL_GETS = ["/_harness", "/_harness/requests", "/_harness/ledger", "/_harness/verdicts"]


@dataclass(frozen=True)
class Door:
    url: str
    worlds: Worlds
    token: dict[str, str]

    def effects(self) -> list[str]:
        return [effect.tool for effect in self.worlds.world.ledger.effects]


@contextlib.contextmanager
def served(path: Path = SCENARIO, limits: Limits | None = None, read_seconds: float = 10.0
           ) -> Iterator[Door]:
    limits = limits or Limits()
    loaded = load_scenario(path)
    worlds = Worlds([loaded], lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    token = new_token()
    with ServerThread(build_app(worlds, token, limits), read_seconds=read_seconds) as url:
        yield Door(url, worlds, {"Authorization": f"Bearer {token}"})


def raw(url: str, data: bytes, timeout: float = 10) -> tuple[float, bytes]:
    """Send ``data`` over a bare socket; the seconds until the server closed, and its answer."""
    host, port = url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return time.monotonic() - started, answer


def json_error(answer: bytes) -> tuple[int, str]:
    """The status and the ``error`` of a raw HTTP answer whose body is a JSON error."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), answer
    return int(head.split()[1]), json.loads(body)["error"]


def test_the_control_endpoint_needs_the_runs_token() -> None:
    with served() as door:
        for path in CONTROL_GETS:
            assert httpx.get(door.url + path).status_code == 401, path
            assert httpx.get(door.url + path, headers={"Authorization": "Bearer guess"}
                             ).status_code == 401, path
            assert httpx.get(door.url + path, headers=door.token).status_code == 200, path
        httpx.post(door.url + "/_harness/tools/mail", json=MAIL).raise_for_status()
        refused = httpx.post(door.url + "/_harness/reset", json={})
        assert door.effects() == ["mail"]  # the reset without a token changed nothing
        httpx.post(door.url + "/_harness/reset", json={}, headers=door.token).raise_for_status()
        assert door.effects() == []
    assert refused.status_code == 401
    assert refused.json()["error"].startswith(
        "the control endpoint needs the header 'Authorization: Bearer TOKEN'")


def test_a_web_page_elsewhere_drives_nothing() -> None:
    # What a page on evil.example can send without a preflight: a text/plain POST.
    page = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    with served() as door:
        httpx.post(door.url + "/_harness/tools/mail", json=MAIL).raise_for_status()
        answers = [httpx.post(door.url + "/_harness/reset", content=b"{}",
                              headers={**page, **door.token}),
                   httpx.post(door.url + "/_harness/tools/mail", content=json.dumps(MAIL),
                              headers=page),
                   httpx.post(door.url + "/v1/chat/completions", content=json.dumps(CHAT),
                              headers=page),
                   httpx.get(door.url + "/_harness/ledger", headers={**page, **door.token})]
        assert door.effects() == ["mail"]
        assert door.worlds.world.request_records() == ()
        own = httpx.get(door.url + "/_harness/ledger",
                        headers={"Origin": door.url, **door.token})
    assert [answer.status_code for answer in answers] == [403] * 4
    assert answers[0].json()["error"] == ("Origin 'http://evil.example' is not this server's "
                                          "own; requests from web pages elsewhere are refused")
    assert own.status_code == 200


def test_a_host_other_than_the_server_is_refused() -> None:
    # A rebound DNS name reaches 127.0.0.1 with the page's own host in the Host header.
    with served() as door:
        port = door.url.rsplit(":", 1)[1]
        stranger = {"Host": f"evil.example:{port}"}
        ledger = httpx.get(door.url + "/_harness/ledger", headers={**stranger, **door.token})
        mail = httpx.post(door.url + "/_harness/tools/mail", json=MAIL, headers=stranger)
        assert door.effects() == []
        by_name = httpx.get(f"http://localhost:{port}/_harness", headers=door.token)
    assert (ledger.status_code, mail.status_code) == (421, 421)
    assert ledger.json()["error"] == (f"Host 'evil.example:{port}' is not this server; it "
                                      f"answers only to 127.0.0.1:{port} or localhost:{port}")
    assert by_name.status_code == 200


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(("sent", "expected"), [
    (("POST", "/_harness/tools/mail", DEEP), (400, "the body's JSON nests deeper than 100 "
                                                   "levels")),
    (("POST", "/v1/chat/completions", DEEP), (400, "the body's JSON nests deeper than 100 "
                                                   "levels")),
    (("POST", "/_harness/reset", b'{"scenario": []}'),
     (400, "'scenario' must be a scenario's name (a string); got list")),
    (("POST", "/_harness/reset", b"[1"),
     (400, "the body must be a JSON object, {} or {\"scenario\": NAME}")),
    (("POST", "/_harness/tools/mail", b'{"to": NaN}'),
     (400, "the body is not standard JSON: NaN is not a JSON number")),
    (("POST", "/_harness/tools/mail", b'{"to": -Infinity}'),
     (400, "the body is not standard JSON: -Infinity is not a JSON number")),
    (("POST", "/v1/chat/completions", b'{"model": "m", "temperature": 1e999}'),
     (400, "the body is not standard JSON: 1e999 is beyond a float's range")),
    (("GET", "/" + "a" * 70_000, b""), (414, "the path has 70001 characters; at most 8192")),
    (("GET", "/_harness/tools/" + "a" * 70_000, b""),
     (414, "the path has 70016 characters; at most 8192")),
])
def test_malformed_input_gets_a_4xx_with_a_json_error(
        sent: tuple[str, str, bytes], expected: tuple[int, str],
        capfd: pytest.CaptureFixture[str]) -> None:
    method, path, body = sent
    with served() as door:
        host = door.url.removeprefix("http://")
        _, answer = raw(door.url, f"{method} {path} HTTP/1.1\r\nhost: {host}\r\n"
                                  f"authorization: {door.token['Authorization']}\r\n"
                                  f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
                                  .encode() + body)
        after = httpx.get(door.url + "/_harness/ledger", headers=door.token)
    assert json_error(answer) == expected
    assert after.status_code == 200
    assert "Traceback" not in capfd.readouterr().err


def test_a_tool_call_with_nan_poisons_no_later_request() -> None:
    with served() as door:
        nan = httpx.post(door.url + "/_harness/tools/mail",
                         content=b'{"to": NaN, "body": Infinity}')
        sent = httpx.post(door.url + "/_harness/tools/mail", json=MAIL)
        answers = [httpx.get(door.url + path, headers=door.token) for path in CONTROL_GETS]
    assert (nan.status_code, sent.status_code) == (400, 200)
    assert [answer.status_code for answer in answers] == [200] * 4
    assert [e["detail"] for e in answers[2].json()["effects"]] == [MAIL]


def test_a_body_past_the_cap_is_413_declared_or_streamed() -> None:
    with served(limits=Limits(max_body=1000)) as door:
        declared = httpx.post(door.url + "/_harness/tools/mail", content=b"x" * 1001)
        streamed = httpx.post(door.url + "/_harness/tools/mail",
                              content=iter([b"[" + b" " * 600, b" " * 600 + b"]"]))
        within = httpx.post(door.url + "/_harness/tools/mail", json=MAIL)
    assert declared.status_code == streamed.status_code == 413
    assert declared.json()["error"] == "the body has 1001 bytes; at most 1000"
    assert streamed.json()["error"] == "the body has more than 1000 bytes; at most 1000"
    assert within.status_code == 200


@pytest.mark.parametrize("sent", [
    b"GET /\r\n",                                                  # HTTP/0.9: no version, no end
    b"GET /_harness HTTP/1.1\r\nhost: 127.0.0.1\r\n",               # a head that never ends
    b"POST /_harness/tools/mail HTTP/1.1\r\nhost: HOST\r\ncontent-length: 50\r\n\r\n{",
])
def test_a_request_that_never_arrives_whole_is_closed_with_408(sent: bytes) -> None:
    with served(read_seconds=0.5) as door:
        took, answer = raw(door.url, sent.replace(b"HOST", door.url[7:].encode()))
        assert door.effects() == []
    assert 0.4 < took < 5
    assert json_error(answer) == (408, "the request did not arrive whole within 0.5 s")


def test_a_request_read_whole_is_never_timed(tmp_path: Path) -> None:
    # A stall the world plays keeps the connection open past the read timeout.
    path = tmp_path / "stall.yaml"
    path.write_text(SCENARIO.read_text(encoding="utf-8") + """
faults:
  - {at: {turn: 1, attempt: 1}, kind: stall, after_events: 1, seconds: 100}
""", encoding="utf-8")
    with served(path, read_seconds=0.3) as door:
        started = time.monotonic()
        reply = httpx.post(door.url + "/v1/chat/completions", json={**CHAT, "stream": True},
                           timeout=10)
        took = time.monotonic() - started
        (record,) = door.worlds.world.request_records()
    assert reply.status_code == 200
    assert took > 0.9  # 100 scenario seconds at 0.01
    assert record.delivery == "complete"


def test_what_http_cannot_parse_is_a_400_with_json() -> None:
    with served() as door:
        _, answer = raw(door.url, b"garbage\r\n\r\n")
    assert json_error(answer) == (400, "Invalid HTTP request received.")


def test_a_method_a_path_does_not_take_is_a_json_405() -> None:
    # A GET on MCP would open an event stream nothing writes to, held until the client left.
    with served() as door:
        answers = {path: httpx.get(door.url + path, headers=door.token, timeout=5)
                   for path in ("/_harness/reset", "/_harness/tools/mail", "/_harness/mcp")}
    assert {path: (a.status_code, a.json()["error"]) for path, a in answers.items()} == {
        path: (405, f"GET {path}: Method Not Allowed") for path in answers}
