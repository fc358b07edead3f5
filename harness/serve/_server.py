"""Run the served app with uvicorn on 127.0.0.1: in the foreground, or in a thread of its own.

uvicorn's pure-Python HTTP/1.1 protocol (h11) is used, subclassed only to note
each connection's transport, so that a scripted reset can abort it with an RST
(see :func:`harness.serve._app.abort_connection`). Each ASGI body message is one
``transport.write``; asyncio sets ``TCP_NODELAY`` on its sockets, so a write
goes out at once instead of waiting to be coalesced (Nagle).

Example::

    with ServerThread(build_app(worlds)) as url:
        httpx.get(url + "/_harness")
"""

from __future__ import annotations

import asyncio
import socket
import threading
from types import TracebackType
from typing import Any, final

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from harness._errors import ConfigError, HarnessError
from harness.serve._app import TRANSPORTS

HOST = "127.0.0.1"
# A hung stream must not hold a stopping server: stop waiting for it after this long.
_GRACE_SECONDS = 1


class _NotingH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, noting its transport by (client, server) address."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        TRANSPORTS[(self.client, self.server)] = transport

    def connection_lost(self, exc: Exception | None) -> None:
        TRANSPORTS.pop((self.client, self.server), None)
        super().connection_lost(exc)


def server_config(app: Any, port: int) -> uvicorn.Config:
    """uvicorn's configuration for the served app: loopback only, quiet, no websockets."""
    return uvicorn.Config(app, host=HOST, port=port, http=_NotingH11Protocol, ws="none",
                          lifespan="on", log_level="warning", access_log=False,
                          timeout_graceful_shutdown=_GRACE_SECONDS)


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

    def __init__(self, app: Any, port: int = 0) -> None:
        self._server = uvicorn.Server(server_config(app, port))
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
