"""Where an incarnation's intercepted HTTP requests go: the world's provider, or nowhere.

An unchanged agent's HTTP clients are intercepted (:mod:`harness.intercept`) and each
request comes here. A request to a fake provider in the scenario's dialect is taken by
the world and answered as planned; one in another dialect is answered 404 and listed;
a request to any other host is refused and listed, unless it is telemetry the scenario
absorbs.

Example::

    served = WorldRoute(world, incarnation=1).serve(request)
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

import httpx

import fakes
from fakes import DeadIncarnationError, Incarnations, IncomingRequest, VirtualClock
from harness.intercept import (
    Served,
    absorbed,
    calling_library,
    refused_by_itself,
    refused_telemetry_line,
    telemetry_answer,
    telemetry_line,
)
from harness.ports import SPECS
from harness.runner._ledger_pipe import StreamTiming
from harness.runner._world_streams import Accepted, Pending, StreamEvent, StreamRecord
from harness.scenario import Scenario


def _dialect_called(url: str, scenario_dialect: str) -> str | None:
    """The dialect whose API ``url`` calls; None for a host no fake provider serves.

    Chat Completions and Responses share a host, so the path decides; a path no
    dialect of the host knows goes to the scenario's provider (which answers 404).
    """
    parsed = httpx.URL(url)
    on_host = [dialect for dialect, spec in SPECS.items() if spec.host == parsed.host]
    called = [dialect for dialect in on_host if fakes.WIRE[dialect].route(parsed.path)]
    if called:
        return called[0]
    if scenario_dialect in on_host:
        return scenario_dialect
    return on_host[0] if on_host else None


class RoutedWorld(Protocol):
    """What a route reads and writes of its world (:class:`harness.runner.World`)."""

    clock: VirtualClock
    scenario: Scenario
    incarnations: Incarnations
    absorb: tuple[str, ...]
    misdialed: list[str]
    telemetry: list[str]

    def accept(self, incoming: IncomingRequest, incarnation: int) -> Accepted | None: ...

    def note_foreign(self, what: str, library: str, incarnation: int) -> None: ...

    def stream_event(self, pending: Pending, event: StreamEvent) -> None: ...

    def stream_ended_teller(self) -> Callable[[Pending, str, StreamTiming], None] | None: ...


class WorldRoute:
    """An incarnation's intercepted HTTP requests, served by the world (any transport)."""

    def __init__(self, world: RoutedWorld, incarnation: int) -> None:
        self._world = world
        self._incarnation = incarnation
        self.clock = world.clock

    def serve(self, request: IncomingRequest) -> Served | None:
        world = self._world
        dialect = _dialect_called(request.url, world.scenario.dialect)
        if dialect is None:
            return self._outside(request)
        if dialect != world.scenario.dialect:
            world.misdialed.append(f"{request.method} {httpx.URL(request.url).path} "
                                   f"({dialect})")
            return _wrong_dialect(world.scenario.dialect, request)
        accepted = world.accept(request, self._incarnation)
        if accepted is None:  # a dead incarnation: the process is gone, so is its request
            raise DeadIncarnationError(f"request {request.url}", self._incarnation,
                                       world.incarnations.current)
        plan = accepted.plan
        return Served(plan.status, plan.headers, plan.before_headers, plan.steps,
                      StreamRecord(accepted.pending, world.clock, world.stream_event,
                                   world.stream_ended_teller()),
                      plan.before_connect)

    def _outside(self, request: IncomingRequest) -> Served | None:
        """Telemetry is answered and listed; any other outside call is refused and listed."""
        world = self._world
        entry = absorbed(request.method, request.url, world.absorb)
        if entry is None:
            world.note_foreign(f"{request.method} {request.url}", calling_library(),
                               self._incarnation)
            return None
        if _the_cases_own():
            world.telemetry.append(telemetry_line(request.method, request.url, entry))
        return telemetry_answer(entry)

    def refuse(self, what: str, library: str) -> None:
        """Note a refused socket (a name lookup, a connection) the agent's process tried;
        a framework's own telemetry host, looked up by that framework, is telemetry."""
        entry = refused_by_itself(what, library)
        if entry is None:
            self._world.note_foreign(what, library, self._incarnation)
        elif _the_cases_own():
            self._world.telemetry.append(refused_telemetry_line(what, entry))


def _wrong_dialect(dialect: str, request: IncomingRequest) -> Served:
    path = httpx.URL(request.url).path
    message = (f"this scenario speaks {dialect}; the agent called {path} "
               f"(declare the dialects the agent speaks to skip such scenarios)")
    body = json.dumps({"error": {"type": "not_found_error", "message": message}}).encode()
    headers = (("content-type", "application/json"),)
    return Served(404, headers, (), (fakes.Emit(body),), None)


def _the_cases_own() -> bool:
    """Whether a framework's own call belongs in the case's record.

    A thread the case did not start (a trace exporter started at import) sends when real
    time says so: answered, but not the case's record. Nor is what a module sends while
    it is imported: a worker imports a library once, so only the first case to import it
    (DSPy imports litellm on its first call, and litellm fetches its price map) would
    list it, and a second run of that case in the same worker would differ."""
    return threading.current_thread() in fakes.CASE_THREADS and not _importing()


def _importing() -> bool:
    """Whether the calling thread is running a module's code for its import."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_load_unlocked" and code.co_filename.startswith(
                "<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False
