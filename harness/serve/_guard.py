"""The server's door: what every request passes before the served app sees it.

``harness serve`` listens on 127.0.0.1, which every local process, and every web
page a local browser shows, can reach. The door keeps strangers out:

- **Host** must name the server itself (``127.0.0.1:PORT`` or ``localhost:PORT``),
  else 421: a page served from a rebound DNS name cannot reach it.
- **Origin**, when sent, must be the server's own (``http://127.0.0.1:PORT``,
  ``http://localhost:PORT``), else 403, on every path: a browser sends an Origin
  with every cross-site POST and fetch, while an agent's SDK, ``curl`` and the MCP
  clients send none, so a page elsewhere can drive neither the control endpoint
  nor a provider or a tool.
- **The token**: the control endpoint (``/_harness``, ``/_harness/requests``,
  ``…/ledger``, ``…/verdicts``, ``…/reset``, ``…/faults``, ``…/agent``, ``…/kill``,
  ``…/journal``: every path under ``/_harness`` but the agent's tools and MCP) takes
  ``Authorization: Bearer TOKEN``
  (the run's :func:`new_token`), else 401. The providers, the tools and MCP, which
  the agent under test calls with clients that know of no token, do not.
- **Sizes**: a path over :attr:`Limits.max_path` characters is 414, a body over
  :attr:`Limits.max_body` bytes is 413 (read no further).
- **JSON**: a body is JSON as the standard defines it. ``NaN``, ``Infinity`` and
  numbers out of a float's range are refused (400), as is nesting deeper than
  :attr:`Limits.max_depth`, so no value that cannot be written back as JSON, or
  that is too deep to walk, reaches the world's records. Text that is not JSON at
  all goes on: each endpoint answers it as the API it plays would.

Every refusal is a JSON body ``{"status": "error", "error": "…"}``. An error inside
the app after the door is a 500 with the same body, and one line on the log,
never a traceback.

Example::

    token = new_token()
    app = Guard(build_routes(worlds), token)   # what build_app returns
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The prefix of the control endpoint's paths; the agent's own paths under it go without token.
CONTROL_PREFIX = "/_harness"
_AGENT_PATHS = ("/_harness/tools/", "/_harness/mcp")
_LOG = logging.getLogger("uvicorn.error")


def new_token() -> str:
    """A fresh secret for one server's control endpoint (not a trace value: random is right).

    >>> len(new_token()) > 40
    True
    """
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Limits:
    """What one request may carry: path characters, body bytes, JSON nesting depth."""

    max_path: int = 8 * 1024
    max_body: int = 16 * 1024 * 1024
    max_depth: int = 100


DEFAULT_LIMITS = Limits()


@final
class _Refused(Exception):
    """A request the door turns away: the HTTP status and the reason, for the JSON body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@final
class Guard:
    """ASGI middleware: the checks of the module docstring, then the app."""

    def __init__(self, app: ASGIApp, token: str, limits: Limits = DEFAULT_LIMITS) -> None:
        self._app, self._token, self._limits = app, token, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: from the server itself
            await self._app(scope, receive, send)
            return
        try:
            self._check_head(scope)
            body = await read_body(receive, self._limits.max_body, _declared_length(scope))
            if body is None:
                return  # the client left while it sent
            check_json(body, self._limits.max_depth)
        except _Refused as refused:
            await send_error(send, refused.status, str(refused), close=True)
            return
        await self._run_app(scope, _replay(body, receive), send)

    def _check_head(self, scope: Scope) -> None:
        headers = _headers(scope)
        port = scope["server"][1] if scope.get("server") else None
        own = {f"127.0.0.1:{port}", f"localhost:{port}"}
        host = headers.get("host")
        if host not in own:
            named = f"Host {host!r} is not this server" if host else "no Host header"
            raise _Refused(421, f"{named}; it answers only to {' or '.join(sorted(own))}")
        origin = headers.get("origin")
        if origin is not None and origin not in {f"http://{name}" for name in own}:
            raise _Refused(403, f"Origin {origin!r} is not this server's own; requests from "
                               "web pages elsewhere are refused")
        path = scope["path"]
        if len(path) > self._limits.max_path:
            raise _Refused(414, f"the path has {len(path)} characters; at most "
                               f"{self._limits.max_path}")
        if is_control(path) and not self._authorized(headers.get("authorization", "")):
            raise _Refused(401, "the control endpoint needs the header 'Authorization: Bearer "
                               "TOKEN', with the token harness serve printed at start "
                               "(HARNESS_TOKEN in the agent's environment)")

    def _authorized(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self._token.encode())

    async def _run_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def noting_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._app(scope, receive, noting_send)
        except Exception as error:  # the backstop: a bug must not print a traceback
            _LOG.error("harness serve: %s %s failed: %s: %s", scope["method"], scope["path"],
                       type(error).__name__, error)
            if not started:
                await send_error(send, 500, f"the server failed on this request: "
                                            f"{type(error).__name__}: {error}")


def is_control(path: str) -> bool:
    """Whether ``path`` is the control endpoint's (the token's), not the agent's tools or MCP.

    >>> is_control("/_harness/ledger"), is_control("/_harness/tools/mail"), is_control("/v1/x")
    (True, False, False)
    """
    inside = path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/")
    return inside and not path.startswith(_AGENT_PATHS)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the first of each; latin-1, as HTTP is)."""
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return headers


def _declared_length(scope: Scope) -> str | None:
    """The Content-Length's digits, if sent (h11 has checked them)."""
    text = _headers(scope).get("content-length", "")
    return text if text.isascii() and text.isdigit() else None


async def read_body(receive: Receive, limit: int, declared: str | None) -> bytes | None:
    """The whole request body, refused (413) past ``limit`` bytes; None when the client left.

    ``declared``: the Content-Length's digits, compared by their count first (``int()``
    of thousands of digits raises).
    """
    if declared is not None and (len(declared) > len(str(limit)) or int(declared) > limit):
        shown = declared if len(declared) <= 20 else f"{declared[:20]}… ({len(declared)} digits)"
        raise _Refused(413, f"the body has {shown} bytes; at most {limit}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _Refused(413, f"the body has more than {limit} bytes; at most {limit}")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the read body once, then the client's own messages."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def check_json(body: bytes, max_depth: int) -> None:
    """Refuse (400) a body that parses only as Python's lenient JSON, or nests too deep.

    >>> check_json(b'{"to": NaN}', 100)
    Traceback (most recent call last):
    ...
    harness.serve._guard._Refused: the body is not standard JSON: NaN is not a JSON number
    """
    if not body.strip():
        return
    try:
        value = strict_json_loads(body)
    except _Refused:
        raise
    except RecursionError:
        raise _Refused(400, f"the body's JSON nests deeper than {max_depth} levels") from None
    except ValueError:
        return  # not JSON at all: the endpoint answers it as its API does
    if _depth(value) > max_depth:
        raise _Refused(400, f"the body's JSON nests deeper than {max_depth} levels")


def strict_json_loads(raw: bytes | str) -> Any:
    """JSON as RFC 8259 has it: no NaN or Infinity, no number beyond a float's range.

    A ``ValueError`` for text that is not JSON; :class:`_Refused` for the values
    Python's parser takes and a JSON writer cannot write back.
    """
    return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)


def _refuse_constant(name: str) -> Any:
    raise _Refused(400, f"the body is not standard JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(400, f"the body is not standard JSON: {text[:40]} is beyond a float's "
                           "range")
    return value


def _depth(value: Any) -> int:
    """How deep containers nest in a parsed JSON value, walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


async def send_error(send: Callable[[Message], Awaitable[None]], status: int, message: str,
                     *, close: bool = False) -> None:
    """A JSON error answer: ``{"status": "error", "error": message}``."""
    body = json.dumps({"status": "error", "error": message}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if close:  # the rest of a refused body is not worth reading
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
