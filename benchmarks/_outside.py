"""A framework agent's crash case outside the harness: plain asyncio, a fake httpx transport.

What part of a framework agent's cost is its own, and what part the harness's? The same
case is played here with none of the harness: the answers the fake provider gave the
agent in the harness's run of the case (recorded once, :func:`record`) are handed back,
in order, by an httpx transport every client of the process is given (whatever
transport it was built with: litellm's aiohttp one too), the example's tools answer
without a relay, and each incarnation imports the agent's package afresh and runs
``main(prompt)`` on a new event loop (``asyncio.run``), as a restarted process would.
The first incarnations end where the harness's crash struck, right after the tool ran
(an exception no framework catches); the last one runs to its end. The agent's files
go to a new temporary working folder for each play of the case.

No virtual clock, no interception, no fake file system, no judging: what is left is
the agent, its framework, its SDK and httpx. One thing is done as the harness does it:
each SDK client's default SSL context is built once (loading the machine's CA bundle,
tens of milliseconds per client, is the machine's cost, not the framework's; and the
plain SDK agent builds a client per run where litellm keeps one).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from fakes._provider import FakeProvider
from harness.intercept import PlainEntry
from harness.intercept._network import _shared_ssl_context
from harness.intercept._plain import PROVIDER_ENVIRONMENT, PlainAgent
from harness.ports import SPECS
from harness.runner import run_case


@dataclass(frozen=True)
class Answer:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class Recording:
    """What a case's agent was told: its prompt, and each incarnation's answers in order."""

    entry: str
    prompt: str
    incarnations: tuple[tuple[Answer, ...], ...]


def record(case: object, scenario: object, entry: PlainEntry) -> Recording:
    """Run the case once under the harness, keeping the prompt and the provider's answers."""
    incarnations: list[list[Answer]] = []
    prompts: list[str] = []
    run_with, plan = PlainAgent.run_with, FakeProvider.plan

    def running(agent: PlainAgent, task: Any, *args: Any, **kwargs: Any) -> Any:
        incarnations.append([])
        prompts.append(task.prompt)
        return run_with(agent, task, *args, **kwargs)

    def planning(provider: FakeProvider, request: Any) -> Any:
        answer = plan(provider, request)
        if incarnations:
            incarnations[-1].append(Answer(answer.status, answer.headers, answer.body))
        return answer

    with mock.patch.object(PlainAgent, "run_with", running), \
            mock.patch.object(FakeProvider, "plan", planning):
        run_case(case, scenario, entry, replay=True)  # type: ignore[arg-type]
    return Recording(entry.spec, prompts[0], tuple(tuple(i) for i in incarnations))


class Crash(BaseException):
    """The process dies here (a BaseException: no framework's ``except Exception`` holds it)."""


class _Answers:
    """Each provider request answered with the next recorded answer; any other with a 404."""

    def __init__(self, answers: tuple[Answer, ...]) -> None:
        self._answers = list(answers)
        self._origins = tuple(spec.origin for spec in SPECS.values())

    def transport(self, library: Any) -> Any:
        """An httpx (or httpx2: the openai SDK's own fork) transport handing the answers out."""
        answer = self._answer

        class Transport(library.BaseTransport, library.AsyncBaseTransport):  # type: ignore[misc]
            def handle_request(self, request: Any) -> Any:
                return answer(library, request)

            async def handle_async_request(self, request: Any) -> Any:
                return answer(library, request)

        return Transport()

    @property
    def left(self) -> int:
        return len(self._answers)

    def _answer(self, library: Any, request: Any) -> Any:
        if not str(request.url).startswith(self._origins):
            return library.Response(404, json={}, request=request)
        if not self._answers:
            raise Crash("no recorded answer left")
        answer = self._answers.pop(0)
        return library.Response(answer.status, headers=list(answer.headers),
                                content=answer.body, request=request)


@contextmanager
def _outside(answers: tuple[Answer, ...], crash: bool) -> Iterator[_Answers]:
    """Every httpx client answered by the recording; the tools answered without a relay."""
    given = _Answers(answers)

    def tool(*_: Any) -> dict[str, Any]:
        if crash:
            raise Crash("killed right after the tool ran")
        return {"ok": True, "messages": []}

    with ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, PROVIDER_ENVIRONMENT))
        for name in ("httpx", "httpx2"):
            try:
                library = importlib.import_module(name)
            except ImportError:
                continue
            transport = given.transport(library)
            defaults = sys.modules[f"{name}._transports.default"]
            stack.enter_context(mock.patch.object(
                defaults, "create_ssl_context", _shared_ssl_context(defaults.create_ssl_context)))
            for client in (library.Client, library.AsyncClient):
                stack.enter_context(mock.patch.object(
                    client, "_transport_for_url", lambda _self, _url, t=transport: t))
        from examples import relay
        stack.enter_context(mock.patch.object(relay, "post", tool))
        stack.enter_context(mock.patch.object(relay, "get", tool))
        yield given


def _fresh(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


@dataclass(frozen=True)
class Played:
    """One incarnation outside the harness: the answers it was handed, how it ended."""

    handed: int
    left: int
    ended: str  # "crash", "returned", or the exception's type


def play(recording: Recording) -> tuple[Played, ...]:
    """The case's incarnations, outside the harness, in a new empty working folder (the
    files an agent writes there, a session's database, last from one incarnation to the
    next, as on a real disk, and go with the folder)."""
    with tempfile.TemporaryDirectory(prefix="outside-the-harness-") as folder:
        before = os.getcwd()
        os.chdir(folder)  # the agent's files (a session database...) go there
        try:
            return _play(recording)
        finally:
            os.chdir(before)


def _play(recording: Recording) -> tuple[Played, ...]:
    module, _, attribute = recording.entry.partition(":")
    last = len(recording.incarnations) - 1
    played = []
    for number, answers in enumerate(recording.incarnations):
        _fresh(module.split(".")[0])
        with _outside(answers, crash=number < last) as given:
            main: Callable[[str], Any] = getattr(__import__(module, fromlist=["_"]), attribute)
            try:
                value = main(recording.prompt)
                if inspect.iscoroutine(value):
                    asyncio.run(value)
                ended = "returned"
            except Crash:
                ended = "crash"
            except Exception as error:  # the agent's own way out
                ended = type(error).__name__
        played.append(Played(len(answers) - given.left, given.left, ended))
    return tuple(played)
