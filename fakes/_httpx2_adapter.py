"""Serve a :class:`~fakes.FakeProvider` to ``httpx2`` (the official SDKs' HTTP client).

Example::

    client = openai.AsyncOpenAI(
        api_key="test", base_url=provider.base_url,
        http_client=provider.httpx2_client(), max_retries=0,
    )

The transport answers in-process and never opens a socket; a request to a
host other than the provider's fails with ``httpx2.ConnectError``.
"""

from __future__ import annotations

from typing import final

import httpx2

from fakes._transport import IncomingRequest, PlanBody, Planner, wait_before_headers


def httpx2_client(provider: Planner) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` whose transport is the provider."""
    return httpx2.AsyncClient(transport=FakeHttpx2Transport(provider), base_url=provider.base_url)


@final
class FakeHttpx2Transport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that plays the provider's plans.

    The official SDKs take it through ``provider.httpx2_client()``; it refuses
    every host but the provider's, so nothing leaves the process.

    >>> from fakes import FakeProvider, ScriptedResponse, ScriptedUsage, Text
    >>> provider = FakeProvider("openai", ScriptedResponse((Text("hi"),), "stop",
    ...                                                    ScriptedUsage(1, 1)))
    >>> transport = FakeHttpx2Transport(provider)
    >>> client = httpx2.AsyncClient(transport=transport, base_url=provider.base_url)
    """

    def __init__(self, provider: Planner) -> None:
        self._provider = provider
        self._host = httpx2.URL(provider.origin).host

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host != self._host:
            # The fake world has no other hosts; never fall through to a network.
            raise httpx2.ConnectError(f"no fake host {request.url.host!r}", request=request)
        await request.aread()
        incoming = IncomingRequest(
            request.method, str(request.url), dict(request.headers), request.content
        )
        plan = self._provider.plan(incoming)
        await wait_before_headers(plan.before_connect + plan.before_headers)
        return httpx2.Response(
            plan.status,
            headers=list(plan.headers),
            stream=_Body(plan.steps, request),
            request=request,
        )


class _Body(PlanBody, httpx2.AsyncByteStream):
    """A response body that plays the plan's steps as the client reads."""

    read_error = httpx2.ReadError
