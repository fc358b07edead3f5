"""Every urllib3 connection pool, and so every ``requests`` session, reaches the world too.

The seam is ``HTTPConnectionPool._make_request``: the one place where a pool,
holding a connection, sends a request and reads the status line. Everything
above it runs unchanged: urllib3's ``Retry`` (with ``Retry-After`` and its
backoff, which sleep on the virtual clock), redirects, and requests' adapters
and errors. The answer is an ordinary ``urllib3.HTTPResponse`` over a body that
plays the world's steps:

* ``timeout=`` is honoured in virtual time: the silence before the status line
  and between two reads is measured against the read timeout, and a read past
  it fails as a socket read would (``ReadTimeoutError``; requests'
  ``ReadTimeout`` or ``ConnectionError`` mid-body); a connection left
  unaccepted fails after the connect timeout (``ConnectTimeoutError``);
* a reset is ``ConnectionResetError`` off the body, which urllib3 reports as
  ``ProtocolError`` (requests: ``ChunkedEncodingError``);
* a blocking client that waits on an endless stall with no read timeout raises
  :class:`~harness.intercept.ForeverStalled`, as the httpx one does;
* a request to a host that is no fake provider is refused with
  ``NewConnectionError`` and recorded.
"""

from __future__ import annotations

import errno
import importlib.util
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from fakes import Emit, IncomingRequest, Reset, VirtualClock
from harness.intercept._network import (
    Patched,
    Route,
    Served,
    _Silence,
    end_stream,
    patch_attribute,
    pause_sync,
    refusal_message,
    wait_sync,
)


def urllib3_patches(route: Route) -> Patched:
    """Replace urllib3's request sending for the duration; nothing if it is not installed."""
    if importlib.util.find_spec("urllib3") is None:
        return []
    from urllib3.connectionpool import HTTPConnectionPool

    def _make_request(  # noqa: PLR0917 - urllib3's own signature, called positionally
            pool: Any, conn: Any, method: str, url: str, body: Any = None,
            headers: Any = None, retries: Any = None, timeout: Any = None,
            chunked: bool = False, response_conn: Any = None,
            preload_content: bool = True, decode_content: bool = True,
            enforce_content_length: bool = True) -> Any:
        del chunked
        from urllib3.util.timeout import _DEFAULT_TIMEOUT

        sent = _Sent(pool, conn, method, url, timeout if timeout is not None
                     else _DEFAULT_TIMEOUT)
        served = sent.ask(route, body, headers)
        response = sent.answer(served, route.clock, preload_content=preload_content,
                               decode_content=decode_content,
                               enforce_content_length=enforce_content_length,
                               retries=retries, response_conn=response_conn)
        response.retries = retries
        response._connection = response_conn
        response._pool = pool
        return response

    return patch_attribute(HTTPConnectionPool, "_make_request", _make_request) \
        + _no_certificate_files()


def _no_certificate_files() -> Patched:
    """requests checks its CA bundle file exists before each send; no TLS is spoken here.

    The check reads the disk, which inside a case is the agent's own file system,
    where the installed certificate bundle is not; an intercepted connection
    never does a handshake, so there is nothing for it to find.
    """
    if importlib.util.find_spec("requests") is None:
        return []
    from requests.adapters import HTTPAdapter

    def cert_verify(adapter: Any, conn: Any, url: str, verify: Any, cert: Any) -> None:
        del adapter, conn, url, verify, cert

    return patch_attribute(HTTPAdapter, "cert_verify", cert_verify)


class _Sent:
    """One request a pool sends: its URL, timeouts and the errors urllib3 would raise."""

    def __init__(self, pool: Any, conn: Any, method: str, url: str, timeout: Any) -> None:
        from urllib3.util.timeout import Timeout

        pool.num_requests += 1
        self.pool, self.conn, self.method, self.url = pool, conn, method, url
        self.timeout = pool._get_timeout(timeout)
        self.timeout.start_connect()
        self.connect_timeout = Timeout.resolve_default_timeout(self.timeout.connect_timeout)

    def full_url(self) -> str:
        if self.url.startswith(("http://", "https://")):
            return str(self.url)
        default = {"http": 80, "https": 443}.get(self.pool.scheme)
        port = "" if self.pool.port in (None, default) else f":{self.pool.port}"
        return f"{self.pool.scheme}://{self.pool.host}{port}{self.url}"

    def ask(self, route: Route, body: Any, headers: Any) -> Served:
        from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

        sent_headers = dict(headers if headers is not None else self.pool.headers)
        served = route.serve(IncomingRequest(self.method, self.full_url(), sent_headers,
                                             _bytes_of(body)))
        if served is None:
            raise NewConnectionError(self.conn, "Failed to establish a new connection: "
                                     f"[Errno {errno.ECONNREFUSED}] "
                                     f"{refusal_message(self.pool.host)}")
        try:
            wait_sync(route.clock, served.before_connect, _seconds(self.connect_timeout))
        except _Silence:
            end_stream(served, "timeout")
            raise ConnectTimeoutError(self.conn, f"Connection to {self.pool.host} timed out. "
                                      f"(connect timeout={self.connect_timeout})") from None
        return served

    def answer(self, served: Served, clock: VirtualClock, **response: Any) -> Any:
        from urllib3 import HTTPHeaderDict
        from urllib3.exceptions import ReadTimeoutError
        from urllib3.response import HTTPResponse

        read_timeout = _seconds(self.timeout.read_timeout)
        try:
            wait_sync(clock, served.before_headers, read_timeout)
        except _Silence:
            end_stream(served, "timeout")
            raise ReadTimeoutError(self.pool, self.url,
                                   f"Read timed out. (read timeout={read_timeout})") from None
        try:
            reason = HTTPStatus(served.status).phrase
        except ValueError:
            reason = "Unknown"
        headers = HTTPHeaderDict()
        for name, value in served.headers:
            if name.lower() != "transfer-encoding":  # the body is handed over unframed
                headers.add(name, value)
        retries, connection = response.pop("retries"), response.pop("response_conn")
        body: Any = _Body(served, read_timeout, clock)  # file-like: read, close, closed
        return HTTPResponse(body=body, headers=headers,
                            status=served.status, version=11, version_string="HTTP/1.1",
                            reason=reason, pool=self.pool, connection=connection,
                            retries=retries, request_method=self.method,
                            request_url=self.url, **response)


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value)


def _bytes_of(body: Any) -> bytes:
    """The request body as sent: bytes, text, an iterable of either, or a file."""
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    if hasattr(body, "read"):
        data = body.read()
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return b"".join(part.encode("utf-8") if isinstance(part, str) else bytes(part)
                    for part in body)


class _Body:
    """The response's bytes off the world's steps: waits move the virtual clock directly.

    A plain file-like object, not an ``io`` one: an io object closes itself when
    collected, which would note the stream closed at a moment the case cannot fix.
    """

    def __init__(self, served: Served, timeout: float | None, clock: VirtualClock) -> None:
        self.closed = False
        self._served = served
        self._timeout = timeout
        self._clock = clock
        self._steps: Iterator[Any] = iter(served.steps)
        self._pending = b""
        self._silent = 0.0
        self._first = True
        self._taken = False  # the client has the first chunk: the world may move on
        self._over = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def read(self, size: int | None = -1) -> bytes:
        if self.closed or (self._over and not self._pending):
            return b""
        self._moved_on()
        if size is None or size < 0:  # everything, to the end of the stream
            parts = [self._pending]
            self._pending = b""
            while not self._over:
                self._next()
                parts.append(self._pending)
                self._pending = b""
            return b"".join(parts)
        while not self._pending and not self._over:
            self._next()
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def _moved_on(self) -> None:
        if self._taken and self._first:
            self._first = False
            record = self._served.record
            if record is not None:
                record.after_first_chunk()

    def _next(self) -> None:
        step = next(self._steps, None)
        if step is None:
            self._over = True
            end_stream(self._served, "eof")
        elif isinstance(step, Emit):
            if step.data:
                self._silent = 0.0
                if self._served.record is not None:
                    self._served.record.on_chunk(step.data)
                self._pending = step.data
                self._taken = True
        elif isinstance(step, Reset):
            self._over = True
            end_stream(self._served, "reset")
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        else:
            try:
                self._silent = pause_sync(self._clock, step, self._silent, self._timeout)
            except _Silence:
                self._over = True
                end_stream(self._served, "timeout")
                raise TimeoutError("The read operation timed out") from None

    def close(self) -> None:
        if not self.closed and not self._over:
            self._over = True
            end_stream(self._served, "closed")
        self.closed = True
