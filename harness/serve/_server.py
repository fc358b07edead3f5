"""Run the served app with uvicorn on 127.0.0.1: in the foreground, or in a thread of its own.

uvicorn's pure-Python HTTP/1.1 protocol (h11) is used, subclassed to note each
connection's transport, so that a scripted reset can abort it with an RST (see
:func:`harness.serve._app.abort_connection`), and to bound how long a request
may take to arrive: uvicorn times out only an idle kept-alive connection, so a
client that sends half a request line (an HTTP/0.9 ``GET /``) or trickles its
body would hold the connection forever. Past :data:`READ_SECONDS` from its
first byte (or from the connection), an unfinished request gets a 408 and the
connection is closed; a request read whole is never timed, so a stream the
world holds open (a stall, a hang) stays open. A request uvicorn cannot parse
gets its 400 as JSON, like every other refusal. Each ASGI body message is one
``transport.write``, and each connection gets ``TCP_NODELAY``, so a write goes out
at once instead of waiting to be coalesced (Nagle). asyncio sets it only on a
socket whose ``proto`` says TCP, which a socket made with ``socket.socket(AF_INET,
SOCK_STREAM)`` (proto 0), like :func:`bind`'s, and the connections it accepts do
not: without it, the body after the headers waited for the client's delayed ACK,
some 40 ms per request on a kept-alive connection.

Example::

    with ServerThread(build_app(worlds)) as url:
        httpx.get(url + "/_harness")
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from types import TracebackType
from typing import Any, ClassVar, final

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from harness._errors import ConfigError, HarnessError
from harness.serve._app import TRANSPORTS

HOST = "127.0.0.1"
#: Real seconds a request may take to arrive whole (head and body) before a 408.
READ_SECONDS = 10.0
# A hung stream must not hold a stopping server: stop waiting for it after this long.
_GRACE_SECONDS = 1
# h11's states of a peer that has not yet sent a whole request.
_READING = (h11.IDLE, h11.SEND_BODY)


class _GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, noting its transport and timing each request's arrival."""

    read_seconds: ClassVar[float] = READ_SECONDS
    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        TRANSPORTS[(self.client, self.server)] = transport
        self._start_read_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        TRANSPORTS.pop((self.client, self.server), None)
        self._stop_read_timer()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state not in _READING:
            self._stop_read_timer()  # the request is whole (or broken, and answered)

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._start_read_timer()  # the next request on this connection, if any
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        self._send_error(400, msg)

    def _start_read_timer(self) -> None:
        self._stop_read_timer()
        self._read_timer = self.loop.call_later(self.read_seconds, self._read_timed_out)

    def _stop_read_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if self.conn.their_state in _READING and not self.transport.is_closing():
            response_started = self.cycle is not None and self.cycle.response_started
            if not response_started:
                self._send_error(408, f"the request did not arrive whole within "
                                      f"{self.read_seconds:g} s")
            self.transport.close()

    def _send_error(self, status: int, message: str) -> None:
        """A JSON error written straight to the socket, then the connection closed.

        Below the ASGI app (h11 may hold no request to answer), so the bytes are
        written as they go on the wire.
        """
        body = json.dumps({"status": "error", "error": message}).encode()
        phrase = {400: b"Bad Request", 408: b"Request Timeout"}[status]
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\nconnection: close\r\n\r\n%s"
                             % (status, phrase, len(body), body))
        self.transport.close()


def server_config(app: Any, port: int, read_seconds: float = READ_SECONDS) -> uvicorn.Config:
    """uvicorn's configuration for the served app: loopback only, quiet, no websockets.

    ``read_seconds``: how long a request may take to arrive (see the module docstring).
    """
    protocol = type("GuardedH11Protocol", (_GuardedH11Protocol,), {"read_seconds": read_seconds})
    # proxy_headers off: no proxy stands in front of a loopback server, and a client's
    # X-Forwarded-For would rename it, so a reset would not find its connection
    # (TRANSPORTS is keyed by the real addresses); it also spares a middleware a request.
    return uvicorn.Config(app, host=HOST, port=port, http=protocol, ws="none",
                          lifespan="on", log_level="warning", access_log=False,
                          proxy_headers=False, timeout_graceful_shutdown=_GRACE_SECONDS)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free one), or a clear error."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise ConfigError("--port", port, f"a free port on {HOST}", f"{error.strerror}; "
                          "--port 0 picks a free one") from None
    sock.listen(2048)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://127.0.0.1:PORT`` of a bound socket (the port it got, for ``--port 0``)."""
    return f"http://{HOST}:{sock.getsockname()[1]}"


@final
class ServerThread:
    """The app served from a daemon thread; ``start()`` returns its URL once it listens."""

    def __init__(self, app: Any, port: int = 0, *, read_seconds: float = READ_SECONDS) -> None:
        self._server = uvicorn.Server(server_config(app, port, read_seconds))
        self._port = port
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self, timeout: float = 10.0) -> str:
        sock = bind(self._port)
        thread = self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="harness-serve",
            daemon=True)
        thread.start()
        waited = 0.0
        while not self._server.started:
            if not thread.is_alive() or waited > timeout:
                raise HarnessError(f"the harness server did not start on {url_of(sock)}")
            thread.join(0.01)
            waited += 0.01
        self.url = url_of(sock)
        return self.url

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=_GRACE_SECONDS + 5)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()


def serve_forever(app: Any, port: int, announce: Any) -> None:
    """Serve in the foreground until interrupted; ``announce(url)`` once it listens."""
    server = uvicorn.Server(server_config(app, port))
    sock = bind(port)

    async def run() -> None:
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                await task
                raise HarnessError(f"the harness server did not start on {url_of(sock)}")
            await asyncio.sleep(0.01)
        announce(url_of(sock))
        await task

    asyncio.run(run())
