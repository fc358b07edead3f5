"""Every way out of a case's process, intercepted at once: each HTTP client's transport
sent to the case's route, and any other socket refused.

Each client has its own module (:mod:`harness.intercept._network` for httpx and httpx2,
``_aiohttp``, ``_urllib3`` for requests, ``_sockets`` for the rest); this one puts them
together, above all of them, so none imports another's caller::

    with intercepted_network(route):
        await agent_main(prompt)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from harness.intercept._aiohttp import aiohttp_patches
from harness.intercept._native import native_clients_guarded
from harness.intercept._network import Patched, Route, httpx_patches, restore
from harness.intercept._sockets import socket_patches
from harness.intercept._urllib3 import urllib3_patches


@contextmanager
def intercepted_network(route: Route) -> Iterator[None]:
    """Send every HTTP request of httpx, httpx2, aiohttp and urllib3 (requests) to ``route``,
    and refuse any other socket (:mod:`harness.intercept._sockets`)."""
    saved: Patched = []
    try:
        saved += httpx_patches(route)
        saved += aiohttp_patches(route)
        saved += urllib3_patches(route)
        saved += socket_patches(route)
        with native_clients_guarded(route):
            yield
    finally:
        restore(saved)
