"""The request journal of ``harness serve``: every request the agent sent, headers and bodies.

The trace (``/_harness/requests``) says what the world made of each model request:
turn, attempt, faults. The journal says what went over the wire, for every path the
agent calls (providers, tools, MCP; not the control endpoint's own calls): method,
path, query, headers and body in, status, headers and body out, and the test id the
request named (:data:`~harness.serve._scope.TEST_HEADER`). Secrets are redacted before
anything is kept: a header, query parameter or JSON key that looks secret
(``Authorization``, ``x-api-key``, ``?key=`` …) and every secret value the served
scenarios hand their tools, wherever it appears. A body is kept up to
:data:`BODY_CHARS` characters (a stream: the first ones), the rest counted.

Example::

    GET /_harness/journal?path=/v1/chat/completions&status=200&offset=0&limit=10
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, final
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness._redact import REDACTED, is_secret_key, redact, redact_values, secret_words
from harness.scenario import Scenario
from harness.serve._guard import is_control

#: Characters of a body the journal keeps (a long stream keeps its start).
BODY_CHARS: Final = 64 * 1024
#: At most this many entries are kept; the oldest go first (``dropped`` counts them).
MAX_ENTRIES: Final = 2_000
_TEST_HEADER = b"x-harness-test"
_RAW: Final = "_response_raw"
_SECRET_QUERY: Final = frozenset({"key", "api_key", "apikey", "access_token", "token"})


@final
class Journal:
    """The entries, in the order the requests arrived, with the secrets to redact."""

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        self.entries: list[dict[str, Any]] = []
        self.dropped = 0
        self._seq = 0
        values: set[str] = set()
        self._marked: set[str] = set()
        for scenario in scenarios:
            values.update(scenario.secret_values().values())
            for declared in scenario.tools.values():
                self._marked.update(declared.secret)
        # Frozen once: redact_values looks its pattern up by the set, for every header.
        self._values = frozenset(values)

    def add(self, scope: Scope, body: bytes) -> dict[str, Any]:
        self._seq += 1
        headers = _headers(scope)
        entry: dict[str, Any] = {
            "seq": self._seq, "test": headers.get(_TEST_HEADER.decode()),
            "method": scope["method"], "path": scope["path"],
            "query": self._query(scope.get("query_string", b"")),
            "headers": self._redacted_headers(headers),
            "body": self._body(body), "status": None, "response_headers": {},
            "response_bytes": 0, _RAW: bytearray(),
        }
        self.entries.append(entry)
        if len(self.entries) > MAX_ENTRIES:
            del self.entries[0]
            self.dropped += 1
        return entry

    def respond(self, entry: dict[str, Any], message: Message) -> None:
        """Note a response message (its start, or a part of its body) in ``entry``."""
        if message["type"] == "http.response.start":
            entry["status"] = message["status"]
            entry["response_headers"] = self._redacted_headers(
                {k.decode("latin-1").lower(): v.decode("latin-1")
                 for k, v in message.get("headers", [])})
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            entry["response_bytes"] += len(chunk)
            raw = entry[_RAW]
            # Bytes, decoded when read: a UTF-8 character split across writes stays whole.
            if len(raw) < BODY_CHARS * 4:
                raw += chunk[:BODY_CHARS * 4 - len(raw)]

    def shown(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` as the journal's reader gets it, the response body decoded and redacted."""
        text = bytes(entry[_RAW]).decode("utf-8", "replace")[:BODY_CHARS]
        shown = {k: v for k, v in entry.items() if k != _RAW}
        return {**shown, "response_body": redact_values(text, self._values)}

    def forget(self, test: str | None) -> None:
        """Drop the entries of ``test`` (None: those that named no test)."""
        self.entries = [e for e in self.entries if e["test"] != test]

    def _redacted_headers(self, headers: dict[str, str]) -> dict[str, str]:
        words = secret_words()  # read from the environment once, not once per header
        return {name: REDACTED if name == "cookie" or is_secret_key(name, words)
                else redact_values(value, self._values) for name, value in headers.items()}

    def _query(self, raw: bytes) -> dict[str, str]:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True)
        return {k: REDACTED if k.lower() in _SECRET_QUERY or is_secret_key(k)
                else redact_values(v, self._values) for k, v in pairs}

    def _body(self, body: bytes) -> object:
        """The body as JSON when it is (secret keys and values redacted), else its text."""
        text = body.decode("utf-8", "replace")
        try:
            value = json.loads(text) if text.strip() else None
        except ValueError:
            return redact_values(text[:BODY_CHARS], self._values)
        if len(text) > BODY_CHARS:
            return redact_values(text[:BODY_CHARS], self._values)
        cleaned = redact(value, self._marked)
        dumped = json.dumps(cleaned)
        redacted = redact_values(dumped, self._values)
        # Parsed again only when a secret value was in it (most bodies hold none).
        return cleaned if redacted == dumped else json.loads(redacted)


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return headers


@final
class JournalRecorder:
    """ASGI middleware: note every request but the control endpoint's in ``journal``."""

    def __init__(self, app: ASGIApp, journal: Journal) -> None:
        self._app, self._journal = app, journal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_control(scope["path"]):
            await self._app(scope, receive, send)
            return
        # The door (harness.serve._guard) has read the body whole: it is the first message.
        first = await receive()
        entry = self._journal.add(scope, first.get("body", b""))
        given = [first]

        async def replay() -> Message:
            return given.pop() if given else await receive()

        async def noting(message: Message) -> None:
            self._journal.respond(entry, message)
            await send(message)

        await self._app(scope, replay, noting)


def select(entries: Sequence[dict[str, Any]], *, path: str | None, method: str | None,
           status: int | None, test: str | None, any_test: bool) -> list[dict[str, Any]]:
    """The entries that match every filter given (``path`` ending in ``*``: a prefix).

    >>> select([{"path": "/v1/x", "method": "POST", "status": 200, "test": None}],
    ...        path="/v1/*", method="post", status=None, test=None, any_test=True)[0]["path"]
    '/v1/x'
    """
    def matches(entry: dict[str, Any]) -> bool:
        if path is not None and not (entry["path"].startswith(path[:-1]) if path.endswith("*")
                                     else entry["path"] == path):
            return False
        if method is not None and entry["method"] != method.upper():
            return False
        if status is not None and entry["status"] != status:
            return False
        return any_test or entry["test"] == test

    return [entry for entry in entries if matches(entry)]
