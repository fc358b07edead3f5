"""The ASGI app of ``harness serve``: the fake providers, the tools and the control endpoint.

Routes (one server, one port, bound to 127.0.0.1)::

    POST /v1/chat/completions        the OpenAI dialect  (OPENAI_BASE_URL = URL/v1)
    POST /v1/messages                the Anthropic dialect (ANTHROPIC_BASE_URL = URL)
    POST /_harness/tools/NAME        a scenario tool, JSON arguments in, its JSON result out
    POST /_harness/mcp               the same tools over MCP (streamable HTTP)
    GET  /_harness                   scenarios, the active one, the URLs
    GET  /_harness/requests          every request seen, as the trace records it
    GET  /_harness/ledger            the side effects and the world's state
    GET  /_harness/verdicts          the checks over what the world saw so far
    POST /_harness/reset             a fresh world: {"scenario": NAME} (default: the active one)
    GET|POST|DELETE /_harness/faults faults and seeded rates armed at run time
    POST /_harness/agent             the agent's process started, exited, restarted
    POST /_harness/kill              kill the agent at a world event
    GET  /_harness/journal           every request with headers and bodies, redacted

The control calls take ``"test"`` (``?test=``) and the agent's requests the
``x-harness-test`` header: each test id has a world of its own
(:mod:`harness.serve._scope`, :mod:`harness.serve._control`).

Every request passes the door first (:mod:`harness.serve._guard`): the Host and
Origin must be the server's own, the control endpoint's ``GET``s and ``reset``
need the run's token, sizes are capped and bodies are standard JSON.

A provider answer is played step by step from the world's
:class:`~fakes.ResponsePlan`: each :class:`~fakes.Emit` is its own write, flushed
at once (a split frame, a UTF-8 character cut in two: separate TCP writes, the
parts of a split sent :data:`SPLIT_GAP_SECONDS` apart so that a reader gets them
as separate reads); a :class:`~fakes.Pause` waits on the scaled clock with the
connection open; a :class:`~fakes.Hang` waits until the client goes; a
:class:`~fakes.Reset` aborts the TCP connection (RST).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, final
from urllib.parse import urlsplit

import mcp.types as mcp_types
from mcp.server.lowlevel.server import Server as McpServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import fakes
from fakes import DeadIncarnationError, Emit, Hang, HarnessLimitExceeded, IncomingRequest, Pause
from fakes import Reset as ResetStep
from harness.ports import DIALECTS
from harness.runner import Case, tool_specs
from harness.scenario import Scenario
from harness.serve._control import (
    BadInput,
    arm_faults,
    arm_kill,
    bad,
    body_test,
    faults_state,
    journal_page,
    json_body,
    mark_agent,
    query_test,
    refusal,
    verdicts,
)
from harness.serve._guard import DEFAULT_LIMITS, Guard, Limits, strict_json_loads
from harness.serve._journal import Journal, JournalRecorder
from harness.serve._scope import TEST_HEADER, check_test_id
from harness.serve._scope import Scope as TestScope
from harness.serve._trace import ProcessRun
from harness.serve._wire_time import wire_body, wire_headers
from harness.serve._world import ScaledClock, ServedWorld

#: Real seconds between the parts of a split (a byte-layer fault), so each is its own read
#: on loopback; 3 KB sent a byte at a time takes some 6 s (at 10 ms it took over 30).
SPLIT_GAP_SECONDS = 0.002
#: The connections uvicorn holds, by (client, server) address: a reset aborts one of them.
TRANSPORTS: dict[tuple[object, object], asyncio.Transport] = {}


def _provider_origins() -> dict[str, str]:
    """Each dialect's request path, mapped to its fake origin (the world routes by host)."""
    origins: dict[str, str] = {}
    for dialect in DIALECTS:
        probe = fakes.FakeProvider(dialect, fakes.ScriptedResponse((), "stop",
                                                                  fakes.ScriptedUsage(0, 0)))
        origins[urlsplit(probe.endpoint).path] = probe.origin
    return origins


PROVIDER_PATHS: dict[str, str] = _provider_origins()


@final
class Worlds:
    """The scenarios a server plays, and the world of the active one, per test.

    ``make`` builds a world for a scenario. Each test id has a scope of its own
    (:class:`~harness.serve._scope.Scope`: its world, agent processes, armed faults),
    made from the active scenario on first use; ``world``, ``runs`` and ``limit`` are
    the default scope's (requests that name no test; ``--exec``). :meth:`reset`
    starts a scope afresh (the control endpoint's reset between tests).
    """

    def __init__(self, scenarios: Sequence[Scenario],
                 make: Callable[[Scenario], ServedWorld]) -> None:
        if not scenarios:
            raise ValueError("a server needs at least one scenario")
        self.scenarios = {scenario.name: scenario for scenario in scenarios}
        self._make = make
        self.default = TestScope(make(scenarios[0]))
        self.tests: dict[str, TestScope] = {}
        self.journal = Journal(scenarios)

    @property
    def world(self) -> ServedWorld:
        return self.default.world

    @property
    def runs(self) -> list[ProcessRun]:
        """The agent processes run over the default world (``--exec``), for the verdicts."""
        return self.default.runs

    @property
    def limit(self) -> str | None:
        return self.default.limit

    def scope(self, test: str | None) -> TestScope:
        """Test ``test``'s scope (made now from the active scenario if new); None: the default."""
        if test is None:
            return self.default
        if test not in self.tests:
            self.tests[test] = TestScope(self._make(self.default.world.scenario), test)
        return self.tests[test]

    def reset(self, name: str | None = None, test: str | None = None) -> ServedWorld:
        """A fresh world for ``test`` (None: the default scope), of scenario ``name``
        (None: the one it plays); the test's journal entries go with it."""
        self.journal.forget(test)
        if test is not None:
            scenario = self.scenarios[name] if name is not None else self.world.scenario
            self.tests[test] = TestScope(self._make(scenario), test)
            return self.tests[test].world
        scenario = self.scenarios[name] if name is not None else self.world.scenario
        self.default = TestScope(self._make(scenario))
        return self.default.world

    def case(self) -> Case:
        return self.default.case()


def build_app(worlds: Worlds, token: str, limits: Limits = DEFAULT_LIMITS) -> Guard:
    """The server's ASGI app over ``worlds``, behind its door (:class:`Guard`): ``token``
    opens the control endpoint; see the module docstring."""
    manager = StreamableHTTPSessionManager(
        app=_mcp_server(worlds), json_response=True, stateless=True,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*"]))
    control = _Control(worlds, token)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    routes = [
        Route("/_harness", control.info, methods=["GET"]),
        Route("/_harness/requests", control.requests, methods=["GET"]),
        Route("/_harness/ledger", control.ledger, methods=["GET"]),
        Route("/_harness/verdicts", control.verdicts, methods=["GET"]),
        Route("/_harness/reset", control.reset, methods=["POST"]),
        Route("/_harness/faults", control.faults, methods=["GET", "POST", "DELETE"]),
        Route("/_harness/agent", control.agent, methods=["POST"]),
        Route("/_harness/kill", control.kill, methods=["POST"]),
        Route("/_harness/journal", control.journal, methods=["GET"]),
        Route("/_harness/tools/{name}", control.tool, methods=["POST"]),
        # POST only: stateless, with JSON answers, a GET would open an event stream that
        # nothing ever writes to, held open until the client leaves.
        Route("/_harness/mcp", StreamableHTTPASGIApp(manager), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: _http_exception})
    # Everything else is a provider request: the world answers (a 404 for a wrong path).
    app.router.default = _ProviderEndpoint(worlds)
    return Guard(JournalRecorder(app, worlds.journal), token, limits)


# ----------------------------------------------------------------------- control


def _refusing(handler: Callable[[Any, Request], Awaitable[Response]]
              ) -> Callable[[Any, Request], Awaitable[Response]]:
    """A control call whose bad input (:class:`BadInput`) is a JSON 4xx, not a 500."""

    async def call(self: Any, request: Request) -> Response:
        try:
            return await handler(self, request)
        except BadInput as error:
            return refusal(error)

    return call


class _Control:
    """The JSON endpoints under ``/_harness/`` (the runtime ones: :mod:`harness.serve._control`)."""

    def __init__(self, worlds: Worlds, token: str) -> None:
        self._worlds, self._token = worlds, token

    async def info(self, request: Request) -> Response:
        worlds = self._worlds
        base = str(request.base_url).rstrip("/")
        return JSONResponse({
            "scenarios": list(worlds.scenarios), "active": worlds.world.scenario.name,
            "incarnation": worlds.world.incarnation, "time_scale": worlds.world.time_scale,
            "tests": sorted(worlds.tests), "test_header": TEST_HEADER,
            "environment": agent_environment(base, worlds.world.scenario, self._token,
                                             worlds.world.time_scale)})

    @_refusing
    async def requests(self, request: Request) -> Response:
        records = self._scope(request).world.request_records()
        return JSONResponse([dataclasses.asdict(record) for record in records])

    @_refusing
    async def ledger(self, request: Request) -> Response:
        ledger = self._scope(request).world.ledger
        effects = [{**dataclasses.asdict(effect), "detail": detail}
                   for effect, detail in zip(ledger.effects, ledger.details, strict=True)]
        return JSONResponse({"effects": json.loads(json.dumps(effects, default=str)),
                             "duplicates": ledger.duplicates(),
                             "world": ledger.world.snapshot()})

    @_refusing
    async def verdicts(self, request: Request) -> Response:
        return JSONResponse(verdicts(self._scope(request)))

    @_refusing
    async def reset(self, request: Request) -> Response:
        body = await json_body(request, '{} or {"scenario": NAME}')
        test = body_test(body)
        unknown = sorted(set(body) - {"scenario", "test"})
        if unknown:
            raise bad(f"reset takes no field {unknown[0]!r}; it takes scenario, test")
        name = body.get("scenario")
        if name is not None and not isinstance(name, str):
            raise bad(f"'scenario' must be a scenario's name (a string); got "
                           f"{type(name).__name__}")
        if name is not None and name not in self._worlds.scenarios:
            raise bad(f"no scenario {name!r}; this server plays "
                           + ", ".join(self._worlds.scenarios), 404)
        world = self._worlds.reset(name, test)
        answer = {"active": world.scenario.name}
        return JSONResponse(answer if test is None else {**answer, "test": test})

    @_refusing
    async def faults(self, request: Request) -> Response:
        if request.method == "POST":
            body = await json_body(request, 'such as {"faults": [{"kind": "http_error", '
                                            '"status": 503, "at": {"turn": 1}}]}')
            scope = self._worlds.scope(body_test(body))
            arm_faults(scope, body)
        else:
            scope = self._scope(request)
            if request.method == "DELETE":
                scope.faults.clear()
        return JSONResponse(faults_state(scope))

    @_refusing
    async def agent(self, request: Request) -> Response:
        body = await json_body(request, 'such as {"event": "start"}')
        return JSONResponse(mark_agent(self._worlds.scope(body_test(body)), body))

    @_refusing
    async def kill(self, request: Request) -> Response:
        body = await json_body(request, 'such as {"at": "after_tool:mail#1"}')
        return JSONResponse(arm_kill(self._worlds.scope(body_test(body)), body))

    @_refusing
    async def journal(self, request: Request) -> Response:
        return JSONResponse(journal_page(request, self._worlds.journal))

    def _scope(self, request: Request) -> TestScope:
        unknown = sorted(set(request.query_params) - {"test"})
        if unknown:
            raise bad(f"{request.url.path} takes no ?{unknown[0]}=; it takes ?test=ID")
        return self._worlds.scope(query_test(request))

    async def tool(self, request: Request) -> Response:
        name = request.path_params["name"]
        arguments = await _json_object(request)
        if not isinstance(arguments, dict):
            return _error(400, "the body must be a JSON object of the tool's arguments, "
                          "such as {\"to\": \"cfo@example.com\", \"body\": \"invoice 7\"}")
        try:
            scope = self._worlds.scope(header_test(request.scope))
        except BadInput as error:
            return refusal(error)
        outcome = await call_world_tool(scope, name, arguments)
        if isinstance(outcome, _Killed):
            return _abort_response(request.scope)
        status, result = outcome
        return JSONResponse(result, status_code=status)


def header_test(scope: Scope) -> str | None:
    """The test id the request names in :data:`TEST_HEADER` (None: the default scope)."""
    for name, value in scope["headers"]:
        if name.lower() == TEST_HEADER.encode():
            try:
                return check_test_id(value.decode("latin-1"), f"the {TEST_HEADER} header")
            except ValueError as error:
                raise bad(str(error)) from None
    return None


@final
class _Killed:
    """The call gets no answer: it reached the case's crash point (the agent's process is
    dead), or its tool lost its reply (``reply_lost``): the connection closes."""


async def call_world_tool(scope: TestScope, name: str, arguments: dict[str, Any]
                          ) -> tuple[int, Any] | _Killed:
    """Run scenario tool ``name`` for the living process; (HTTP status, JSON result)."""
    world = scope.world
    world.scaled_clock.begin()
    if name not in world.tools:
        return 404, {"status": "error", "error": f"no tool {name!r}; the scenario "
                     f"{world.scenario.name!r} declares " + ", ".join(sorted(world.tools))}
    try:
        return 200, await world.call_tool(name, arguments, world.incarnation)
    except (fakes.SimulatedCrash, DeadIncarnationError, fakes.ToolReplyLost):
        return _Killed()  # a lost reply: the connection closes without a response
    except fakes.ToolFailure as failure:
        return 500, {"status": "error", "error": str(failure)}


def _abort_response(scope: Scope) -> Response:
    abort_connection(scope)
    return Response(status_code=599)


async def _json_object(request: Request) -> Any:
    raw = await request.body()
    try:
        return strict_json_loads(raw) if raw.strip() else {}
    except ValueError:
        return None


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (a method a route does not take: 405) as JSON, like ours."""
    assert isinstance(exc, HTTPException)
    return JSONResponse({"status": "error", "error": f"{request.method} {request.url.path}: "
                         f"{exc.detail}"}, status_code=exc.status_code, headers=exc.headers)


def _error(status: int, message: str) -> Response:
    return JSONResponse({"status": "error", "error": message}, status_code=status)


def agent_environment(base_url: str, scenario: Scenario, token: str,
                      time_scale: float = 1.0) -> dict[str, str]:
    """What an agent process is told: provider base URLs and keys, tool endpoints, the task,
    ``token``, the control endpoint's (``HARNESS_TOKEN``), and the time scale
    (``HARNESS_TIME_SCALE``: an agent multiplies its own timeouts by it, as the server
    does the scenario's waits).

    The provider variables are the ones an in-process agent sees
    (``harness.intercept.PROVIDER_ENVIRONMENT``), pointed at this server. The known
    frameworks' telemetry is turned off by their own switches
    (``harness.intercept.OFF_SWITCH_ENVIRONMENT``: ``OPENAI_AGENTS_DISABLE_TRACING=1`` …):
    a process's requests to other hosts do not pass through the harness, which in process
    answers them instead (``harness.intercept.absorbed``).
    """
    from harness.intercept import OFF_SWITCH_ENVIRONMENT, PROVIDER_ENVIRONMENT

    env = dict(OFF_SWITCH_ENVIRONMENT)
    for name, value in PROVIDER_ENVIRONMENT.items():
        parts = urlsplit(value)
        env[name] = base_url + parts.path if parts.scheme else value
    specs = [{"name": s.name, "description": s.description, "parameters": s.parameters}
             for s in tool_specs(scenario)]
    env.update({
        "HARNESS_URL": base_url,
        "HARNESS_TOKEN": token,
        "HARNESS_TOOLS_URL": f"{base_url}/_harness/tools",
        "HARNESS_MCP_URL": f"{base_url}/_harness/mcp",
        "HARNESS_PROMPT": scenario.description or f"Run scenario {scenario.name}.",
        "HARNESS_MODEL": scenario.provider.model,
        "HARNESS_TOOLS": json.dumps(specs),
        "HARNESS_TIME_SCALE": f"{time_scale:g}",
    })
    return env


# ----------------------------------------------------------------------- MCP


def _mcp_server(worlds: Worlds) -> McpServer[Any]:
    """The scenario's tools over MCP: listed from the active world, counted in its ledger."""

    def scope_of(ctx: Any) -> TestScope:
        """The test the MCP request names in its x-harness-test header (the HTTP request's)."""
        request = getattr(ctx, "request", None)
        asgi = getattr(request, "scope", None)
        return worlds.scope(header_test(asgi) if isinstance(asgi, dict) else None)

    async def list_tools(ctx: Any, _params: Any) -> mcp_types.ListToolsResult:
        world = scope_of(ctx).world
        specs = tool_specs(world.scenario)
        return mcp_types.ListToolsResult(tools=[
            mcp_types.Tool(name=s.name, description=s.description, input_schema=s.parameters)
            for s in specs if s.name in world.tools])

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams
                        ) -> mcp_types.CallToolResult:
        try:
            scope = scope_of(ctx)
        except BadInput as error:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=str(error))], is_error=True)
        outcome = await call_world_tool(scope, params.name, dict(params.arguments or {}))
        if isinstance(outcome, _Killed):
            # The process that asked is dead: nobody reads this answer.
            return mcp_types.CallToolResult(content=[], is_error=True)
        status, result = outcome
        text = json.dumps(result, sort_keys=True, default=str)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)],
            structured_content=result if isinstance(result, dict) else None,
            is_error=status != 200)

    return McpServer("llm-chaos-harness", on_list_tools=list_tools, on_call_tool=call_tool)


# ----------------------------------------------------------------------- providers


def abort_connection(scope: Scope) -> None:
    """Reset the request's TCP connection (RST, not FIN): what a dropped link looks like."""
    transport = TRANSPORTS.get((_address(scope.get("client")), _address(scope.get("server"))))
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _address(value: object) -> object:
    return tuple(value) if isinstance(value, list | tuple) else value


class _ProviderEndpoint:
    """Serve a provider request from the active world, byte for byte as planned."""

    def __init__(self, worlds: Worlds) -> None:
        self._worlds = worlds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        try:
            test_scope = self._worlds.scope(header_test(scope))
        except BadInput as error:
            await _send_json(send, 400, {"status": "error", "error": str(error)})
            return
        world = test_scope.world
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        origin = PROVIDER_PATHS.get(scope["path"], world.provider.origin)
        incoming = IncomingRequest(scope["method"], origin + _target(scope), headers, body)
        world.scaled_clock.begin()
        try:
            served = world.route(world.incarnation).serve(incoming)
        except (fakes.SimulatedCrash, DeadIncarnationError):
            abort_connection(scope)
            return
        except HarnessLimitExceeded as limit:
            test_scope.limit = str(limit)
            await _send_json(send, 429, {"error": {"type": "harness_limit",
                                                   "message": str(limit)}})
            return
        assert served is not None  # every path maps to a fake origin
        split = _has_byte_fault(world)
        await _Player(scope, receive, send, world.scaled_clock, split).play(served)


def _target(scope: Scope) -> str:
    """The path, with the query of a ``GET`` (a stored response's input items read their
    ``limit``, ``order`` and ``after``); a model request is recorded by its path alone."""
    query = scope.get("query_string", b"")
    if scope["method"] == "GET" and query:
        return f"{scope['path']}?{query.decode('latin-1')}"
    return str(scope["path"])


def _has_byte_fault(world: ServedWorld) -> bool:
    faults = world.requests[-1].record.faults if world.requests else ()
    return any(fakes.FAULT_KINDS[kind].layer == "bytes" for kind in faults)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send_json(send: Send, status: int, value: object) -> None:
    body = json.dumps(value).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


class _Player:
    """Plays one served answer on the connection, step by step, and tells the world's record."""

    def __init__(self, scope: Scope, receive: Receive, send: Send, clock: ScaledClock,
                 split: bool) -> None:
        self._scope, self._send, self._clock, self._split = scope, send, clock, split
        self._gone = asyncio.Event()
        self._watch = asyncio.ensure_future(self._watch_disconnect(receive))

    async def _watch_disconnect(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self._gone.set()

    async def play(self, served: Any) -> None:
        try:
            await self._play(served)
        except (fakes.SimulatedCrash, DeadIncarnationError):
            abort_connection(self._scope)
        finally:
            self._watch.cancel()

    async def _play(self, served: Any) -> None:
        record = served.record
        # No connect phase to hold back over a real socket: an unaccepted connection
        # (stall_connecting) is a wait before the headers, as for the ports' client.
        for step in (*served.before_connect, *served.before_headers):
            if await self._wait(step):
                return _end(record, "closed")
        # The record keeps the planned headers (scenario time); the client reads its own.
        headers = wire_headers(served.headers, self._clock)
        await self._send({"type": "http.response.start", "status": served.status,
                          "headers": [(k.encode(), v.encode()) for k, v in headers]})
        first = True
        for step in served.steps:
            if isinstance(step, Emit):
                if step.data:
                    if not first and self._split and await self._idle(SPLIT_GAP_SECONDS):
                        return _end(record, "closed")
                    # The record keeps the planned bytes (Gemini's wait in scenario time).
                    wire = wire_body(step.data, self._clock) if served.status >= 400 \
                        else step.data
                    await self._write(step.data, record, first, wire)
                    first = False
            elif isinstance(step, ResetStep):
                _end(record, "reset")
                abort_connection(self._scope)
                return None
            elif await self._wait(step):
                return _end(record, "closed")
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        return _end(record, "eof")

    async def _write(self, data: bytes, record: Any, first: bool,
                     wire: bytes | None = None) -> None:
        body = data if wire is None else wire
        await self._send({"type": "http.response.body", "body": body, "more_body": True})
        if record is not None:
            record.on_chunk(data)
            if first:
                record.after_first_chunk()

    async def _wait(self, step: object) -> bool:
        """Take a pause (scaled) or a hang; True when the client went meanwhile."""
        if isinstance(step, Pause):
            return await self._idle(step.seconds * self._clock.scale)
        if isinstance(step, Hang):
            await self._gone.wait()
            return True
        return self._gone.is_set()

    async def _idle(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._gone.wait(), timeout=seconds)
        except TimeoutError:
            return False
        return True


def _end(record: Any, how: str) -> None:
    if record is not None:
        record.on_end(how)
