"""Serve a :class:`~fakes.FakeProvider` to ``httpx`` through a respx router.

Example::

    async with provider.httpx_client() as http:
        async with http.stream("POST", "/chat/completions", json=body) as response:
            async for chunk in response.aiter_bytes():
                ...

Nothing leaves the process: the router has ``assert_all_mocked=True``, so a
request to any other host fails loudly instead of touching the network.
"""

from __future__ import annotations

from typing import Any

import httpx
import respx

from fakes._transport import IncomingRequest, PlanBody, Planner, wait_before_headers


def httpx_client(provider: Planner) -> httpx.AsyncClient:
    """A client whose ``base_url`` is the provider's and whose transport is a respx router."""
    router = respx.MockRouter(assert_all_mocked=True, assert_all_called=False)
    mount(provider, router)
    transport = httpx.MockTransport(router.async_handler)
    return httpx.AsyncClient(transport=transport, base_url=provider.base_url)


def mount(provider: Planner, router: Any) -> Any:
    """Route every request to the provider's origin through it; return the respx route."""
    host = httpx.URL(provider.origin).host

    async def respond(request: httpx.Request) -> httpx.Response:
        await request.aread()
        incoming = IncomingRequest(
            request.method, str(request.url), dict(request.headers), request.content
        )
        plan = provider.plan(incoming)
        await wait_before_headers(plan.before_connect + plan.before_headers)
        return httpx.Response(
            plan.status, headers=list(plan.headers), stream=_Body(plan.steps, request)
        )

    return router.route(scheme="https", host=host).mock(side_effect=respond)


class _Body(PlanBody, httpx.AsyncByteStream):
    """A response body that plays the plan's steps as the client reads."""

    read_error = httpx.ReadError
