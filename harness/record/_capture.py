"""A recorded exchange: the request, and the response's raw bytes with when each read came.

``harness record`` writes one JSON file per exchange (:func:`write_exchange`);
``harness import`` reads it back, or a HAR file, or the raw bytes of a
``text/event-stream`` body (:func:`load_capture`). Credentials never reach the file:
:func:`scrubbed` drops every credential header (``authorization``, ``x-api-key``,
``api-key``, ``x-goog-api-key`` and any name :func:`harness._redact.is_secret_key`
calls secret), blanks secret query parameters (Gemini's ``?key=``), and overwrites
each dropped value, and each value under a secret-looking key of the request's JSON
body, wherever it appears in the bytes (an error body that echoes the key), byte for
byte, so the reads keep their boundaries.

The file::

    {"format": "harness-capture/1",
     "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                 "headers": [["content-type", "application/json"]], "body": "{...}"},
     "response": {"status": 200, "headers": [...], "headers_at": 0.41, "ended": "eof",
                  "chunks": [{"at": 0.43, "text": "data: {...}\\n\\n"}, ...]}}

A chunk is ``text`` when its bytes are UTF-8 on their own, else ``base64``; ``at`` is
seconds since the request was sent.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from harness._errors import CaptureError
from harness._redact import REDACTED, is_secret_key, secret_leaves

FORMAT: Final = "harness-capture/1"
#: The largest capture read: a recorded answer is kilobytes, a browser's HAR some megabytes.
MAX_CAPTURE_BYTES: Final = 256 * 1024 * 1024
#: Credential headers by name, beside every name that looks secret (``is_secret_key``).
CREDENTIAL_HEADERS: Final = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
    "cookie", "set-cookie",
})
#: Query parameters that carry a key (Gemini's ``?key=``), beside secret-looking names.
CREDENTIAL_PARAMS: Final = frozenset({"key", "api_key", "apikey", "access_token"})

Ended = Literal["eof", "reset"]
Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Chunk:
    """One read of the response body and when it came, in seconds since the request."""

    at: float
    data: bytes


@dataclass(frozen=True)
class Exchange:
    """One request and its response, as the wire carried them (credentials removed)."""

    method: str
    url: str
    request_headers: Headers
    request_body: bytes
    status: int
    response_headers: Headers
    chunks: tuple[Chunk, ...]
    headers_at: float = 0.0
    ended: Ended = "eof"
    timed: bool = True  # False: the source kept no per-read timing (HAR, a raw SSE file)

    @property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(chunk.data for chunk in self.chunks)

    def header(self, name: str) -> str | None:
        """A response header, by its name in any case."""
        return next((v for k, v in self.response_headers if k.lower() == name), None)


def is_credential(name: str) -> bool:
    """Whether a header of this name carries a credential.

    >>> is_credential("Authorization"), is_credential("x-goog-api-key"), is_credential("accept")
    (True, True, False)
    """
    return name.lower() in CREDENTIAL_HEADERS or is_secret_key(name)


def scrubbed(exchange: Exchange) -> Exchange:
    """``exchange`` with no credential in it: see the module docstring."""
    secrets = _credential_values(exchange)
    url = _scrub_url(exchange.url)
    keep = [(k, v) for k, v in exchange.request_headers if not is_credential(k)]
    return replace(
        exchange, url=_mask(url, secrets),
        request_headers=tuple((k, _mask(v, secrets)) for k, v in keep),
        request_body=_mask_bytes(exchange.request_body, secrets),
        response_headers=tuple((k, _mask(v, secrets)) for k, v in exchange.response_headers
                               if not is_credential(k)),
        chunks=_mask_chunks(exchange.chunks, secrets))


def _credential_values(exchange: Exchange) -> list[str]:
    values: list[str] = []
    for name, value in exchange.request_headers + exchange.response_headers:
        if is_credential(name):
            values.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                values.append(token)
    query = parse_qsl(urlsplit(exchange.url).query, keep_blank_values=True)
    values += [v for k, v in query if _secret_param(k)]
    values += [v for _, v in secret_leaves(_json_or_none(exchange.request_body))]
    # Longest first: a bearer token inside its "Bearer …" header value is masked whole.
    return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


def _secret_param(name: str) -> bool:
    return name.lower() in CREDENTIAL_PARAMS or is_secret_key(name)


def _scrub_url(url: str) -> str:
    parts = urlsplit(url)
    query = [(k, REDACTED if _secret_param(k) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _mask(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "*" * len(secret))
    return text


def _mask_bytes(data: bytes, secrets: Iterable[str]) -> bytes:
    for secret in secrets:
        raw = secret.encode()
        data = data.replace(raw, b"*" * len(raw))
    return data


def _mask_chunks(chunks: tuple[Chunk, ...], secrets: list[str]) -> tuple[Chunk, ...]:
    # Masked over the whole body (a key may straddle two reads), then cut where the reads
    # were: the mask keeps every length, so the boundaries stay where they were.
    whole = _mask_bytes(b"".join(c.data for c in chunks), secrets)
    out, start = [], 0
    for chunk in chunks:
        out.append(Chunk(chunk.at, whole[start:start + len(chunk.data)]))
        start += len(chunk.data)
    return tuple(out)


# ------------------------------------------------------------------ the file


def exchange_json(exchange: Exchange) -> dict[str, Any]:
    """The capture file's object for ``exchange`` (scrub it first)."""
    return {
        "format": FORMAT,
        "request": {"method": exchange.method, "url": exchange.url,
                    "headers": [list(h) for h in exchange.request_headers],
                    **_body_json(exchange.request_body)},
        "response": {"status": exchange.status,
                     "headers": [list(h) for h in exchange.response_headers],
                     "headers_at": round(exchange.headers_at, 6), "ended": exchange.ended,
                     "chunks": [{"at": round(c.at, 6), **_data_json(c.data)}
                                for c in exchange.chunks]},
    }


def _data_json(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _body_json(data: bytes) -> dict[str, str]:
    as_json = _data_json(data)
    return {"body": as_json["text"]} if "text" in as_json else {"body_base64": as_json["base64"]}


def write_exchange(exchange: Exchange, path: Path) -> Path:
    """Write ``exchange``, scrubbed, to ``path`` whole (renamed into place); return ``path``."""
    text = json.dumps(exchange_json(scrubbed(exchange)), indent=1, ensure_ascii=False) + "\n"
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path


# ------------------------------------------------------------------ reading


CaptureKind = Literal["exchange", "har", "sse"]


@dataclass(frozen=True)
class Capture:
    """A capture read from a file: the exchange, and what kind of file it came from."""

    exchange: Exchange
    kind: CaptureKind
    path: str
    entry: int | None = None  # the HAR entry, from 0


def _json_or_none(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None


def _looks_like_sse(raw: bytes) -> bool:
    head = raw.lstrip(b"\xef\xbb\xbf")[:4096]
    return any(line.startswith((b"data:", b"event:")) for line in head.splitlines())


def _exchange_from_sse(raw: bytes) -> Exchange:
    return Exchange("POST", "", (), b"", 200, (("content-type", "text/event-stream"),),
                    (Chunk(0.0, raw),), timed=False)


def _exchange_from_json(data: Mapping[str, Any], path: str) -> Exchange:
    try:
        request, response = data["request"], data["response"]
        return Exchange(
            method=str(request["method"]), url=str(request["url"]),
            request_headers=_headers(request["headers"]),
            request_body=_body(request),
            status=int(response["status"]),
            response_headers=_headers(response["headers"]),
            chunks=tuple(Chunk(float(c["at"]), _data(c)) for c in response["chunks"]),
            headers_at=float(response.get("headers_at", 0.0)),
            ended="reset" if response.get("ended") == "reset" else "eof",
        )
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise CaptureError(f"a harness capture with a missing or malformed field ({error!r}); "
                           "expected request.method/url/headers and response.status/headers/"
                           "chunks as 'harness record' writes them", path) from error


def _headers(value: object) -> Headers:
    if not isinstance(value, list):
        raise TypeError("headers is not a list of [name, value] pairs")
    return tuple((str(k), str(v)) for k, v in value)


def _body(request: Mapping[str, Any]) -> bytes:
    if "body_base64" in request:
        return base64.b64decode(request["body_base64"], validate=True)
    return str(request.get("body", "")).encode("utf-8")


def _data(chunk: Mapping[str, Any]) -> bytes:
    if "base64" in chunk:
        return base64.b64decode(chunk["base64"], validate=True)
    return str(chunk["text"]).encode("utf-8")
