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
import logging
import threading
from types import TracebackType
from typing import Any, final

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from harness._errors import HarnessError
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


def bound_url(server: uvicorn.Server) -> str:
    """``http://127.0.0.1:PORT`` of a started server (the port it bound, for ``--port 0``)."""
    sockets = [sock for listener in server.servers for sock in listener.sockets]
    port = sockets[0].getsockname()[1]
    return f"http://{HOST}:{port}"


@final
class ServerThread:
    """The app served from a daemon thread; ``start()`` returns its URL once it listens."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self._server = uvicorn.Server(server_config(app, port))
        self._thread = threading.Thread(target=self._server.run, name="harness-serve",
                                        daemon=True)
        self.url = ""

    def start(self, timeout: float = 10.0) -> str:
        # uvicorn logs a port in use at ERROR before it exits; the error below says it.
        logging.getLogger("uvicorn.error").disabled = False
        self._thread.start()
        waited = 0.0
        while not self._server.started:
            if not self._thread.is_alive() or waited > timeout:
                raise HarnessError(f"the harness server did not start on {HOST} "
                                   f"(port {self._server.config.port} in use?)")
            self._thread.join(0.01)
            waited += 0.01
        self.url = bound_url(self._server)
        return self.url

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=_GRACE_SECONDS + 5)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()


def serve_forever(app: Any, port: int, announce: Any) -> None:
    """Serve in the foreground until interrupted; ``announce(url)`` once it listens."""
    server = uvicorn.Server(server_config(app, port))

    async def run() -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            if task.done():
                await task
                raise HarnessError(f"the harness server did not start on {HOST}:{port} "
                                   "(is the port in use? --port 0 picks a free one)")
            await asyncio.sleep(0.01)
        announce(bound_url(server))
        await task

    asyncio.run(run())
