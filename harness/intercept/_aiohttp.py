"""Every aiohttp ``ClientSession`` reaches the world too (litellm's default transport).

The seam is ``TCPConnector._create_connection``: where aiohttp would resolve the
host and open a socket, the world is asked for its answer to the request
(``connect`` receives the whole request) and the connection handed back is a
transport of ours under aiohttp's own ``ResponseHandler``. The world's answer is
played to it as HTTP/1.1 bytes (chunked, as the providers stream), so aiohttp's
own parser, pool, errors and timeouts run unchanged:

* ``ClientTimeout(sock_read=…)`` and ``total`` are timers of the event loop,
  which in a case is the virtual clock's: a stall is cut when the client's
  timeout says, in virtual seconds;
* a connection left unaccepted (``stall_connecting``) is cut by ``connect`` /
  ``sock_connect``, and the client raises its ``ConnectionTimeoutError``;
* a reset is the peer's ``ConnectionResetError``, which aiohttp reports as it
  does off a socket (``ClientPayloadError``);
* a request to a host that is no fake provider is refused with
  ``ClientConnectorError`` and recorded.

A connection serves one request: once its answer is over it reports itself
closing, so the pool opens a new one (and asks the world again) for the next.
Nothing here imports aiohttp unless it is installed.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
from http import HTTPStatus
from typing import Any

from fakes import Emit, Hang, IncomingRequest, Pause, Reset
from harness.intercept._network import (
    Patched,
    Route,
    Served,
    end_stream,
    patch_attribute,
    refusal_message,
    wait_async,
)

_BODILESS = frozenset({204, 304})


def aiohttp_patches(route: Route) -> Patched:
    """Replace aiohttp's connection making for the duration; nothing if it is not installed."""
    if importlib.util.find_spec("aiohttp") is None:
        return []
    import aiohttp

    async def _create_connection(connector: Any, req: Any, traces: Any, timeout: Any) -> Any:
        del traces
        return await _connect(connector, req, timeout, route)

    return patch_attribute(aiohttp.TCPConnector, "_create_connection", _create_connection)


async def _connect(connector: Any, req: Any, timeout: Any, route: Route) -> Any:
    import aiohttp
    from aiohttp.helpers import ceil_timeout

    loop = asyncio.get_running_loop()
    started = loop.time()
    body = await _body_of(req)
    served = route.serve(IncomingRequest(req.method, str(req.url), dict(req.headers), body))
    if served is None:
        refused = ConnectionRefusedError(errno.ECONNREFUSED, refusal_message(req.url.host))
        raise aiohttp.ClientConnectorError(req.connection_key, refused)
    threshold = getattr(timeout, "ceil_threshold", 5)
    try:
        async with ceil_timeout(timeout.sock_connect, threshold):
            await wait_async(served.before_connect, None)
    except (TimeoutError, asyncio.CancelledError):
        end_stream(served, "timeout" if _connect_timed_out(timeout, loop.time() - started)
                   else "cancelled")
        raise
    protocol = connector._factory()
    wire = _Wire(protocol, served, timeout, started)
    protocol.connection_made(wire)
    return protocol


def _connect_timed_out(timeout: Any, waited: float) -> bool:
    limits = [t for t in (timeout.connect, timeout.sock_connect, timeout.total) if t]
    return any(waited >= t for t in limits)


async def _body_of(req: Any) -> bytes:
    """The request's body as it will be sent (aiohttp keeps it as a payload object)."""
    body = req.body
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    value = getattr(body, "_value", None)
    if isinstance(value, bytes | bytearray):  # bytes, str and JSON payloads
        return bytes(value)
    as_bytes = getattr(body, "as_bytes", None)
    return bytes(await as_bytes()) if as_bytes is not None else b""


class _Wire(asyncio.Transport):
    """The client's end of one connection to the world: the request written, the answer played."""

    def __init__(self, protocol: Any, served: Served, timeout: Any, started: float) -> None:
        super().__init__()
        self._protocol = protocol
        self._served = served
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self._started = started
        self._player: asyncio.Task[None] | None = None
        self._closing = False  # no further request on this connection
        self._closed = False  # closed by the client: connection_lost is on its way
        self._over = False  # the answer was played to its end, or cut by the peer
        self._timed_out = False
        self._readable = asyncio.Event()
        self._readable.set()
        self._chunked = served.status not in _BODILESS and not any(
            name.lower() == "content-length" for name, _ in served.headers)
        on_read_timeout = protocol._on_read_timeout

        def timed_out() -> None:  # sock_read ran out: the client gives up on the stream
            self._timed_out = True
            on_read_timeout()

        protocol._on_read_timeout = timed_out

    # -- what aiohttp calls on a transport
    def write(self, data: bytes | bytearray | memoryview) -> None:
        del data  # the world has the request already; it answers once it is sent
        if self._player is None and not self._closing:
            self._player = self._loop.create_task(self._play())

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closed:
            return
        self._closed = self._closing = True
        if self._player is not None:
            self._player.cancel()
        if not self._over:
            self._over = True
            end_stream(self._served, self._why_closed())
        # aiohttp waits for this on closing a session (its ``protocol.closed``).
        self._loop.call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        del name  # no socket, no peer, no TLS object: aiohttp copes with none of them
        return default

    def pause_reading(self) -> None:
        self._readable.clear()

    def resume_reading(self) -> None:
        self._readable.set()

    def is_reading(self) -> bool:
        return self._readable.is_set()

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    # -- the world's answer
    def _why_closed(self) -> str:
        now = self._loop.time()
        total = self._timeout.total
        if self._timed_out or (total and now - self._started >= total):
            return "timeout"
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            return "cancelled"
        return "closed"

    async def _play(self) -> None:
        try:
            await wait_async(self._served.before_headers, None)
            await self._send(self._head())
            if await self._steps():
                self._over = True
                end_stream(self._served, "eof")  # a crash after the response raises here
                await self._send(b"0\r\n\r\n" if self._chunked else b"")
                self._closing = True  # one request a connection
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._deliver(error)

    async def _steps(self) -> bool:
        """Play the stream; False when the peer reset the connection."""
        first = True
        for step in self._served.steps:
            if isinstance(step, Emit):
                if step.data:
                    await self._data(step.data, first)
                    first = False
            elif isinstance(step, Pause):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Hang):
                await asyncio.Event().wait()
            elif isinstance(step, Reset):
                self._reset()
                return False
        return True

    async def _data(self, data: bytes, first: bool) -> None:
        record = self._served.record
        if record is not None:
            record.on_chunk(data)
        framed = b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data
        await self._send(framed)
        if first and record is not None:
            await asyncio.sleep(0)  # the client takes the chunk before the world moves on
            record.after_first_chunk()

    async def _send(self, data: bytes) -> None:
        await self._readable.wait()
        if data and not self._closing:
            self._protocol.data_received(data)

    def _head(self) -> bytes:
        status = self._served.status
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{name}: {value}" for name, value in self._served.headers
                  if name.lower() != "transfer-encoding"]
        if self._chunked:
            lines.append("transfer-encoding: chunked")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _reset(self) -> None:
        self._over = True
        end_stream(self._served, "reset")
        self._closed = self._closing = True
        self._protocol.connection_lost(ConnectionResetError(errno.ECONNRESET,
                                                            "Connection reset by peer"))

    def _deliver(self, error: BaseException) -> None:
        """Raise ``error`` (the case's crash) in the client, where its next read waits."""
        self._protocol.set_exception(error)
        payload = getattr(self._protocol, "_payload", None)
        if payload is not None:
            payload.set_exception(error)
