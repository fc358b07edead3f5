"""Every httpx and httpx2 client the agent builds reaches the fake provider (DESIGN §4).

While an incarnation of an unchanged agent runs, :func:`intercepted_network`
replaces the request method of the default transports of both libraries
(``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request``),
as respx does for httpx. A client the agent builds anywhere — ``AsyncOpenAI()``,
``AsyncAnthropic()``, a pydantic-ai model — therefore talks to the world's fake
provider without a line of harness code in the agent. Nothing opens a socket: a
request to any other host fails with the library's ``ConnectError`` and is
recorded in ``World.foreign``.

**Client timeouts are honoured in virtual time.** httpcore raises ``ReadTimeout``
when one read waits longer than the client's read timeout; here the silence
before the headers and between two chunks is measured on the virtual clock, and
the same ``ReadTimeout`` is raised once it exceeds ``timeout["read"]``; a
connection left unaccepted (the ``stall_connecting`` fault) raises
``ConnectTimeout`` after ``timeout["connect"]``. The pool timeout has nothing to
wait for: an intercepted transport never runs out of connections. A stall
that never ends with no read timeout configured waits forever, as it would in
production (the case's own guard then ends it). The SDKs' ``max_retries`` and
``Retry-After`` handling run on top, unchanged.

aiohttp (:mod:`harness.intercept._aiohttp`) and urllib3, so requests
(:mod:`harness.intercept._urllib3`), reach the same route with the same faults;
any other name lookup or connection is refused (:mod:`harness.intercept._sockets`),
and known telemetry is answered (:mod:`harness.intercept._telemetry`).

Example::

    with intercepted_network(route):
        client = openai.AsyncOpenAI()      # base URL and key from the environment
        ...
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import httpx
import httpx2

from fakes import (
    CONNECTION_RESET,
    Emit,
    Hang,
    IncomingRequest,
    Pause,
    Reset,
    Step,
    VirtualClock,
)
from harness._errors import HarnessError

#: The HTTP libraries whose default transports are intercepted.
LIBRARIES: tuple[ModuleType, ...] = (httpx, httpx2)


class StreamRecord(Protocol):
    """What a served stream reports back to the world as the client reads it."""

    def on_chunk(self, data: bytes) -> None: ...

    def after_first_chunk(self) -> None: ...

    def on_end(self, how: str) -> None: ...


@dataclass(frozen=True)
class Served:
    """The world's answer to one request: status, headers, waits and the stream's steps."""

    status: int
    headers: tuple[tuple[str, str], ...]
    before_headers: tuple[Step, ...]
    steps: tuple[Step, ...]
    record: StreamRecord | None
    before_connect: tuple[Step, ...] = ()


class Route(Protocol):
    """Where intercepted requests go: the world of the running case."""

    clock: VirtualClock

    def serve(self, request: IncomingRequest) -> Served | None:
        """The answer, or None when the host is not a fake provider (refused)."""
        ...

    def refuse(self, what: str, library: str) -> None:
        """Note an outside connection ``library`` tried (a name lookup, a socket): refused."""
        ...


class _Silence(Exception):
    """The peer stayed silent longer than the read timeout."""


Patched = list[tuple[Any, str, Any]]
"""Attributes replaced for the duration: (owner, name, original), restored in reverse."""


def httpx_patches(route: Route) -> Patched:
    """Send every request of httpx's and httpx2's transports to ``route``; what to restore."""
    saved: Patched = []
    for lib in LIBRARIES:
        saved += patch_attribute(lib.HTTPTransport, "handle_request", _sync_handler(lib, route))
        saved += patch_attribute(lib.AsyncHTTPTransport, "handle_async_request",
                                 _async_handler(lib, route))
        defaults = sys.modules[f"{lib.__name__}._transports.default"]
        saved += patch_attribute(defaults, "create_ssl_context",
                                 _shared_ssl_context(defaults.create_ssl_context))
    return saved


def patch_attribute(owner: Any, name: str, replacement: Callable[..., Any]) -> Patched:
    """Set ``owner.name`` to ``replacement``; what to restore afterwards.

    An attribute ``owner`` only inherits (``socket.socket.connect``) is removed
    again afterwards rather than copied down.
    """
    original = vars(owner).get(name, _INHERITED)
    setattr(owner, name, replacement)
    return [(owner, name, original)]


def restore(saved: Patched) -> None:
    """Undo :func:`patch_attribute`, newest first."""
    for owner, name, original in reversed(saved):
        if original is _INHERITED:
            delattr(owner, name)
        else:
            setattr(owner, name, original)


_INHERITED: Any = object()


def refusal_message(host: object) -> str:
    """What a refused client reads: why, and what to do instead."""
    # The same words reach a model client and a tool's own call to its service; the
    # network verdict, which knows which it was, names the one fix that applies.
    return (f"no network inside a harness case: {str(host)!r} is not a fake provider "
            "(a model client: point it at the base URL from the environment; a tool's own "
            "call to its service: give the tool a target: in the scenario)")


def _shared_ssl_context(create: Callable[..., Any]) -> Callable[..., Any]:
    """``create_ssl_context`` that builds the default context once.

    Every SDK client builds a transport, and every transport loads the CA bundle
    (tens of milliseconds); an intercepted transport never opens a connection, so
    one default context serves them all. Any other setting is built as asked.
    """

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True,
                           **rest: Any) -> Any:
        if verify is not True or cert is not None or rest:
            return create(verify=verify, cert=cert, trust_env=trust_env, **rest)
        key = (create, trust_env)
        context = _SSL_CONTEXTS.get(key)
        if context is None:
            context = _SSL_CONTEXTS[key] = create(verify=verify, cert=cert, trust_env=trust_env)
        return context

    return create_ssl_context


_SSL_CONTEXTS: dict[tuple[Any, bool], Any] = {}


def _incoming(request: Any) -> IncomingRequest:
    return IncomingRequest(request.method, str(request.url), _header_dict(request.headers),
                           request.content)


def _header_dict(headers: Any) -> dict[str, str]:
    """``dict(headers)`` of httpx's ``Headers``, in one pass over its items.

    ``dict`` asks the mapping for each name again, and httpx finds it by a walk over
    every header (a request of an SDK carries a dozen and more): a fifth of a
    request's interception. The same dict: lower-case names in their first order,
    the values of a repeated name joined by ``", "``, as ``headers[name]`` joins them.
    """
    joined: dict[str, str] = {}
    for name, value in headers.multi_items():
        joined[name] = value if name not in joined else f"{joined[name]}, {value}"
    return joined


def _timeout(request: Any, phase: str) -> float | None:
    """The client's timeout for ``phase`` (connect, read) as it put it on the request."""
    timeout = request.extensions.get("timeout") or {}
    value = timeout.get(phase)
    return None if value is None else float(value)


def _refused(lib: ModuleType, request: Any) -> Exception:
    error: Exception = lib.ConnectError(refusal_message(request.url.host), request=request)
    return error


def _async_handler(lib: ModuleType, route: Route) -> Callable[..., Any]:
    async def handle_async_request(_transport: Any, request: Any) -> Any:
        await request.aread()
        served = route.serve(_incoming(request))
        if served is None:
            raise _refused(lib, request)
        try:
            await wait_async(served.before_connect, _timeout(request, "connect"))
        except _Silence:
            end_stream(served, "timeout")
            raise lib.ConnectTimeout("timed out connecting", request=request) from None
        timeout = _timeout(request, "read")
        try:
            await wait_async(served.before_headers, timeout)
        except _Silence:
            end_stream(served, "timeout")
            raise lib.ReadTimeout("timed out waiting for the response", request=request) from None
        body = _body(lib, sync=False)(served, timeout, request)
        return lib.Response(served.status, headers=list(served.headers), stream=body,
                            request=request)

    return handle_async_request


def _sync_handler(lib: ModuleType, route: Route) -> Callable[..., Any]:
    def handle_request(_transport: Any, request: Any) -> Any:
        request.read()
        served = route.serve(_incoming(request))
        if served is None:
            raise _refused(lib, request)
        try:
            wait_sync(route.clock, served.before_connect, _timeout(request, "connect"))
        except _Silence:
            end_stream(served, "timeout")
            raise lib.ConnectTimeout("timed out connecting", request=request) from None
        timeout = _timeout(request, "read")
        try:
            wait_sync(route.clock, served.before_headers, timeout)
        except _Silence:
            end_stream(served, "timeout")
            raise lib.ReadTimeout("timed out waiting for the response", request=request) from None
        body = _body(lib, sync=True)(served, timeout, request, route.clock)
        return lib.Response(served.status, headers=list(served.headers), stream=body,
                            request=request)

    return handle_request


def end_stream(served: Served, how: str) -> None:
    if served.record is not None:
        served.record.on_end(how)


# --------------------------------------------------------------- waiting in virtual time


async def wait_async(steps: tuple[Step, ...], timeout: float | None) -> None:
    silent = 0.0
    for step in steps:
        silent = await pause_async(step, silent, timeout)


async def pause_async(step: Step, silent: float, timeout: float | None) -> float:
    """Wait out a Pause or Hang; raise :class:`_Silence` past the read timeout."""
    seconds = step.seconds if isinstance(step, Pause) else None
    left = None if timeout is None else timeout - silent
    if left is not None and (seconds is None or seconds > left):
        await asyncio.sleep(max(left, 0.0))
        raise _Silence
    if seconds is None:
        await asyncio.Event().wait()  # a hang with no read timeout: as long as the peer
        return silent
    await asyncio.sleep(seconds)
    return silent + seconds


def wait_sync(clock: VirtualClock, steps: tuple[Step, ...], timeout: float | None) -> None:
    silent = 0.0
    for step in steps:
        silent = pause_sync(clock, step, silent, timeout)


def pause_sync(clock: VirtualClock, step: Step, silent: float, timeout: float | None) -> float:
    seconds = step.seconds if isinstance(step, Pause) else None
    left = None if timeout is None else timeout - silent
    if left is not None and (seconds is None or seconds > left):
        clock.advance(max(left, 0.0))
        raise _Silence
    if seconds is None:
        raise ForeverStalled
    clock.advance(seconds)
    return silent + seconds


class ForeverStalled(HarnessError):
    """A blocking client waits on a stalled stream with no read timeout: it would wait forever."""

    def __init__(self) -> None:
        super().__init__("the agent waits on a stalled stream with no read timeout: in "
                         "production it would hang forever (configure a client timeout)")


# ----------------------------------------------------------------------- bodies


_BODIES: dict[tuple[str, bool], type] = {}


def _body(lib: ModuleType, *, sync: bool) -> type:
    """The intercepted body class over ``lib``'s byte stream, made once per library."""
    body = _BODIES.get((lib.__name__, sync))
    if body is None:
        name, bases = (("InterceptedSyncBody", (_SyncBody, lib.SyncByteStream)) if sync
                       else ("InterceptedAsyncBody", (_AsyncBody, lib.AsyncByteStream)))
        body = _BODIES[lib.__name__, sync] = type(name, bases, {"_lib": lib})
    return body


class _Reading:
    """What both bodies share: the record of what the client got, and the errors it meets."""

    _lib: ModuleType

    def __init__(self, served: Served, timeout: float | None, request: Any) -> None:
        self._served = served
        self._timeout = timeout
        self._request = request
        self._first = True
        self._started = False
        self._silent = 0.0  # seconds without a byte since the last one, against the timeout

    def _once(self) -> bool:
        """Whether this is the first read: a body off the wire cannot be read twice.

        A client that iterates a finished response again (to drain it before
        closing) gets nothing more, as from a socket.
        """
        first, self._started = not self._started, True
        return first

    def _walk(self) -> Iterator[bytes | Pause | Hang]:
        """What the client meets, in order: bytes to hand over and waits; a reset raises.

        Bytes are recorded as delivered here, once the client asks for what comes after
        them, so the sync and async bodies differ only in how they wait.
        """
        for step in self._served.steps:
            if isinstance(step, Emit):
                if step.data:
                    yield self._delivering(step.data)
                    self._delivered()
            elif isinstance(step, Reset):
                raise self._reset()
            else:
                yield step

    def _delivering(self, data: bytes) -> bytes:
        self._silent = 0.0
        if self._served.record is not None:
            self._served.record.on_chunk(data)
        return data

    def _delivered(self) -> None:
        if self._first and self._served.record is not None:
            self._served.record.after_first_chunk()
        self._first = False

    def _reset(self) -> Exception:
        end_stream(self._served, "reset")
        error: Exception = self._lib.ReadError(CONNECTION_RESET,
                                               request=self._request)
        return error

    def _timed_out(self) -> Exception:
        end_stream(self._served, "timeout")
        error: Exception = self._lib.ReadTimeout("timed out reading the stream",
                                                 request=self._request)
        return error

    def _eof(self) -> None:
        end_stream(self._served, "eof")


class _AsyncBody(_Reading):
    """Plays the world's steps to an async client, with its read timeout in virtual time."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if not self._once():
            return
        try:
            async for chunk in self._play():
                yield chunk
        except asyncio.CancelledError:
            end_stream(self._served, "cancelled")
            raise
        except GeneratorExit:
            end_stream(self._served, "closed")
            raise
        self._eof()

    async def _play(self) -> AsyncIterator[bytes]:
        for item in self._walk():
            if isinstance(item, bytes):
                yield item
                continue
            try:
                self._silent = await pause_async(item, self._silent, self._timeout)
            except _Silence:
                raise self._timed_out() from None

    async def aclose(self) -> None:
        end_stream(self._served, "closed")


class _SyncBody(_Reading):
    """The same for a blocking client: waits move the virtual clock directly."""

    def __init__(self, served: Served, timeout: float | None, request: Any,
                 clock: VirtualClock) -> None:
        super().__init__(served, timeout, request)
        self._clock = clock

    def __iter__(self) -> Iterator[bytes]:
        if not self._once():
            return
        for item in self._walk():
            if isinstance(item, bytes):
                yield item
                continue
            try:
                self._silent = pause_sync(self._clock, item, self._silent, self._timeout)
            except _Silence:
                raise self._timed_out() from None
        self._eof()

    def close(self) -> None:
        end_stream(self._served, "closed")
