"""No socket escapes a case: every other name lookup and connection is refused at once.

The HTTP clients the harness knows reach the world through their own seams
(:mod:`harness.intercept._network`); anything under them, or beside them
(``urllib.request``, a raw ``socket``, ``asyncio.open_connection``, a client of
some other protocol), ends here. While an incarnation runs, a name lookup
(``socket.getaddrinfo``, ``gethostbyname``, an event loop's ``getaddrinfo``)
fails with ``socket.gaierror`` and a connection (``socket.connect``,
``connect_ex``, and so every loop's ``create_connection`` and ``sock_connect``)
with ``ConnectionRefusedError``, and so is a datagram sent to an address
(``sendto``, ``sendmsg``), loopback included: a case has no network, and
the harness opens no socket of its own inside one. Each refusal is recorded
with the library that tried (:func:`~harness.intercept._telemetry.calling_library`),
which fails the case's ``network`` check.

A numeric address needs no lookup, so resolving one is let through; connecting
to it is refused like any other.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
from typing import Any, Final

from harness.intercept._network import Patched, Route, patch_attribute
from harness.intercept._telemetry import calling_library

_WHY: Final = "no network inside a harness case"


def socket_patches(route: Route) -> Patched:
    """Refuse lookups and connections for the duration, each recorded with ``route``."""
    saved: Patched = []
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        saved += patch_attribute(socket, name, _lookup(route, getattr(socket, name)))
    saved += patch_attribute(socket.socket, "connect", _connect(route))
    saved += patch_attribute(socket.socket, "connect_ex", _connect_ex(route))
    saved += patch_attribute(socket.socket, "sendto", _sendto(route))
    saved += patch_attribute(socket.socket, "sendmsg", _sendmsg(route, socket.socket.sendmsg))
    saved += patch_attribute(asyncio.base_events.BaseEventLoop, "getaddrinfo",
                             _loop_lookup(route, asyncio.base_events.BaseEventLoop.getaddrinfo))
    return saved


def _numeric(host: object) -> bool:
    if host is None:
        return True  # the wildcard address: a lookup of nothing
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    return True


def _refuse_lookup(route: Route, host: object) -> socket.gaierror:
    name = host.decode() if isinstance(host, bytes) else str(host)
    route.refuse(f"resolve {name}", calling_library())
    return socket.gaierror(socket.EAI_NONAME, f"{_WHY}: the name {name!r} is not looked up")


def _lookup(route: Route, original: Any) -> Any:
    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if _numeric(host):
            return original(host, *args, **kwargs)
        raise _refuse_lookup(route, host)

    lookup.__name__ = original.__name__
    return lookup


def _loop_lookup(route: Route, original: Any) -> Any:
    async def getaddrinfo(loop: Any, host: Any, *args: Any, **kwargs: Any) -> Any:
        if _numeric(host):
            return await original(loop, host, *args, **kwargs)
        raise _refuse_lookup(route, host)

    return getaddrinfo


def _where(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host = str(address[0])
        return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
    return str(address)


def _connect(route: Route) -> Any:
    def connect(sock: socket.socket, address: Any) -> None:
        del sock
        route.refuse(f"connect {_where(address)}", calling_library())
        raise ConnectionRefusedError(errno.ECONNREFUSED,
                                     f"{_WHY}: connection to {_where(address)} refused")

    return connect


def _connect_ex(route: Route) -> Any:
    def connect_ex(sock: socket.socket, address: Any) -> int:
        del sock
        route.refuse(f"connect {_where(address)}", calling_library())
        return errno.ECONNREFUSED

    return connect_ex


def _refuse_send(route: Route, address: Any) -> ConnectionRefusedError:
    route.refuse(f"send to {_where(address)}", calling_library())
    return ConnectionRefusedError(errno.ECONNREFUSED,
                                  f"{_WHY}: datagram to {_where(address)} refused")


def _sendto(route: Route) -> Any:
    def sendto(sock: socket.socket, data: Any, *rest: Any) -> int:
        del sock, data
        raise _refuse_send(route, rest[-1] if rest else None)  # (data, [flags,] address)

    return sendto


def _sendmsg(route: Route, original: Any) -> Any:
    def sendmsg(sock: socket.socket, buffers: Any, *rest: Any) -> int:
        address = rest[2] if len(rest) > 2 else None  # (buffers, ancdata, flags, address)
        if address is None:
            return int(original(sock, buffers, *rest))  # a connected socket's own peer
        raise _refuse_send(route, address)

    return sendmsg
