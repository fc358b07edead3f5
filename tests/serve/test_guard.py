"""The server's door as an ASGI app, without a socket: what it lets through, what it
answers itself, and the backstop that keeps a bug's traceback off the wire."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from harness.serve import Limits, new_token
from harness.serve._guard import Guard, is_control

TOKEN = new_token()


def request(path: str = "/v1/chat/completions", body: bytes = b"{}", **headers: str
            ) -> tuple[Scope, list[Message]]:
    sent = {"host": "127.0.0.1:8000", "content-length": str(len(body)), **headers}
    scope = {"type": "http", "method": "POST", "path": path, "server": ("127.0.0.1", 8000),
             "headers": [(k.encode(), v.encode()) for k, v in sent.items()]}
    return scope, [{"type": "http.request", "body": body, "more_body": False}]


def answer(app: Any, scope: Scope, messages: list[Message]) -> tuple[int, Any, bytes]:
    """Run the door over ``app``; the status, the JSON error (or None) and the body."""
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(Guard(app, TOKEN, Limits(max_body=200_000, max_depth=3))(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    error = json.loads(body).get("error") if body.startswith(b"{") else None
    return sent[0]["status"], error, body


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    message = await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": message["body"]})


async def broken(scope: Scope, receive: Receive, send: Send) -> None:
    raise KeyError("a bug")


def test_a_well_formed_request_reaches_the_app_with_its_body() -> None:
    assert answer(echo, *request(body=b'{"a": [1, 2.5]}')) == (200, None, b'{"a": [1, 2.5]}')


def test_text_that_is_no_json_reaches_the_app_which_answers_as_its_api() -> None:
    assert answer(echo, *request(body=b"\xff not json")) == (200, None, b"\xff not json")


@pytest.mark.parametrize(("body", "status", "error"), [
    (b'{"x": NaN}', 400, "the body is not standard JSON: NaN is not a JSON number"),
    (b"[Infinity]", 400, "the body is not standard JSON: Infinity is not a JSON number"),
    (b"[-1e400]", 400, "the body is not standard JSON: -1e400 is beyond a float's range"),
    (b"[[[[1]]]]", 400, "the body's JSON nests deeper than 3 levels"),
    (b"[" * 50_000 + b"]" * 50_000, 400, "the body's JSON nests deeper than 3 levels"),
    (b"x" * 200_001, 413, "the body has 200001 bytes; at most 200000"),
])
def test_the_door_answers_a_bad_body_itself(body: bytes, status: int, error: str) -> None:
    assert answer(echo, *request(body=body))[:2] == (status, error)


def test_a_length_of_thousands_of_digits_is_refused_not_parsed() -> None:
    scope, messages = request()
    scope["headers"] = [(b"host", b"127.0.0.1:8000"), (b"content-length", b"9" * 5000)]
    assert answer(echo, scope, messages)[:2] == (
        413, "the body has 99999999999999999999… (5000 digits) bytes; at most 200000")


def test_a_body_streamed_past_the_cap_is_refused_without_a_declared_length() -> None:
    scope, _ = request()
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
    parts = [{"type": "http.request", "body": b" " * 100_000, "more_body": True},
             {"type": "http.request", "body": b" " * 100_001, "more_body": False}]
    assert answer(echo, scope, parts)[:2] == (413, "the body has more than 200000 bytes; at "
                                                   "most 200000")


def test_a_bug_in_the_app_is_a_json_500_and_one_log_line(caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    status, error, _ = answer(broken, *request())
    assert (status, error) == (500, "the server failed on this request: KeyError: 'a bug'")
    assert [r.getMessage() for r in caplog.records] == [
        "harness serve: POST /v1/chat/completions failed: KeyError: 'a bug'"]
    assert all(record.exc_info is None for record in caplog.records)


@pytest.mark.parametrize(("headers", "status"), [
    ({"authorization": f"Bearer {TOKEN}"}, 200),
    ({"authorization": f"bearer {TOKEN}"}, 200),
    ({}, 401),
    ({"authorization": f"Basic {TOKEN}"}, 401),
    ({"authorization": f"Bearer {TOKEN}x"}, 401),
    ({"authorization": f"Bearer {TOKEN}", "host": "evil.example:8000"}, 421),
    ({"authorization": f"Bearer {TOKEN}", "host": "127.0.0.1:8001"}, 421),
    ({"authorization": f"Bearer {TOKEN}", "origin": "null"}, 403),
    ({"authorization": f"Bearer {TOKEN}", "origin": "http://127.0.0.1:8000"}, 200),
    ({"authorization": f"Bearer {TOKEN}", "origin": "http://localhost:8000"}, 200),
])
def test_the_control_endpoint_takes_the_token_from_its_own_host_and_origin(
        headers: dict[str, str], status: int) -> None:
    assert answer(echo, *request("/_harness/reset", **headers))[0] == status


def test_a_request_without_a_host_is_refused() -> None:
    scope, messages = request()
    scope["headers"] = []
    assert answer(echo, scope, messages)[:2] == (
        421, "no Host header; it answers only to 127.0.0.1:8000 or localhost:8000")


def test_the_agents_own_paths_need_no_token() -> None:
    assert [is_control(p) for p in ("/_harness", "/_harness/", "/_harness/verdicts",
                                    "/_harness/tools/mail", "/_harness/mcp", "/_harnessx",
                                    "/v1/messages")] == [True, True, True, False, False,
                                                         False, False]
